#!/usr/bin/env python3
"""`gpuscope report --prometheus`: a real Prometheus (Debian's) scrapes the
agent every second while Slurm job 4242 runs for 20 s; the report built from
the exported series matches the agent's own ledger within the scrape
interval's resolution (each end of each GPU's span is known to one interval),
says the same notes plus the job against its workload's baseline (stand-in
records of the baseline rules), and an unknown job is an error naming it and
the server.

`report tenants --prometheus`: a second agent on the same simulated node, in
--attribution-labels info mode, is scraped by the same Prometheus; the
chargeback rows from Prometheus (both modes, summed over both agents) match
the sum of the two agents' own rows within the scrape interval's resolution.
"""
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (PROMETHEUS, Prometheus, Serve, check, main,  # noqa: E402
                              need_tool, run, scrape_config, wait_until)
from jobs_fixture import end_job, make_node, start_jobs_now  # noqa: E402

JOB_SECONDS = 20

# Stand-ins for the shipped baseline rules' 14-day records of job 4242's
# workload: it usually runs at 80% SM activity (5th percentile 70%), warmed up.
BASELINE_RULES = """\
groups:
  - name: test-baseline
    rules:
""" + "".join("""\
      - record: %s
        expr: vector(%s)
        labels: {%sworkload: "4242", hpc_job: "4242"}
""" % (name, value, signal) for name, value, signal in (
    ("gpuscope:workload_signal:p5_14d", "0.7", "signal: sm_active, "),
    ("gpuscope:workload_signal:p50_14d", "0.8", "signal: sm_active, "),
    ("gpuscope:workload_baseline:warming_up_14d", "0", "")))


class JobReportsPrometheusTest(unittest.TestCase):
    def test_same_report_from_prometheus(self):
        need_tool(PROMETHEUS, "prometheus")
        workdir = tempfile.TemporaryDirectory(prefix="gpuscope-jobs-prom-")
        self.addCleanup(workdir.cleanup)
        scenario, mapping = make_node(workdir.name, start_jobs=False)
        agent_args = ["--simulate", scenario, "--hpc-job-mapping-dir", mapping,
                      "--attribution-refresh", "100ms"]
        with Serve(agent_args) as agent, \
                Serve(agent_args + ["--attribution-labels", "info"]) as info_agent:
            agent.wait_healthy()
            info_agent.wait_healthy()
            rules = os.path.join(workdir.name, "baseline.yml")
            with open(rules, "w") as f:
                f.write(BASELINE_RULES)
            # Both agents as targets of the one job (the config's list takes them quoted).
            targets = "127.0.0.1:%d', '127.0.0.1:%d" % (agent.port, info_agent.port)
            prom = Prometheus(workdir.name, scrape_config(targets, [rules]))
            self.addCleanup(prom.close)
            prom.wait_ready()
            prom.wait_for('up{job="gpuscope"} == 1', 2)
            start_jobs_now(mapping)  # the prolog, once Prometheus scrapes
            prom.wait_for('gpuscope_gpu_lost{hpc_job="4242"}', 2)
            time.sleep(JOB_SECONDS)
            end_job(mapping)
            # Ended for the agent, and for Prometheus 3 scrape intervals after its last sample.
            wait_until(lambda: json.loads(agent.get("/api/v1/jobs?kind=job&id=4242")[2])["end"]
                       is not None, "job 4242 ended on the agent")
            time.sleep(4)

            def report(*source):
                code, out, err = run(["report", "job", "4242", "--json"] + list(source))
                check(code == 0, "report %s: %s" % (source, err))
                return json.loads(out)

            from_prom = report("--prometheus", prom.base, "--scrape-interval", "1s",
                               "--since", "10m")
            from_agent = report("--agent", agent.base)
            check(from_prom["source"] == "prometheus " + prom.base, from_prom["source"])
            check(from_prom["end"] is not None, "ended: %s" % from_prom)
            check(set(from_prom) == set(from_agent), "same keys")
            check([g["gpu"] for g in from_prom["gpus"]] == [0, 1], from_prom["gpus"])
            # Each GPU's span is known to one scrape interval at each end: 2 GPUs x 2 x 1 s.
            slack_hours = 4.0 / 3600
            check(abs(from_prom["gpu_hours"] - from_agent["gpu_hours"]) <= slack_hours,
                  "gpu_hours %s vs %s" % (from_prom["gpu_hours"], from_agent["gpu_hours"]))
            check(abs(from_prom["idle_held_gpu_hours"] - from_agent["idle_held_gpu_hours"]) <=
                  slack_hours / 2, "idle-held %s vs %s" % (from_prom["idle_held_gpu_hours"],
                                                           from_agent["idle_held_gpu_hours"]))
            # Energy: at most 2 s of each GPU's power (under 700 W) apart.
            check(abs(from_prom["energy_kwh"] - from_agent["energy_kwh"]) * 3.6e6 <= 2 * 2 * 700,
                  "energy %s vs %s" % (from_prom["energy_kwh"], from_agent["energy_kwh"]))
            check(from_prom["energy_kwh"] > 0, "energy counted")
            # The same notes, and from Prometheus the job against its workload's baseline:
            # one GPU of two unused puts it far under the usual 70-80%.
            check([n["kind"] for n in from_agent["notes"]] == ["gpus_unused"], from_agent["notes"])
            check([n["kind"] for n in from_prom["notes"]] == ["gpus_unused", "below_baseline"],
                  from_prom["notes"])
            check("where workload 4242 usually runs at 80%" in from_prom["notes"][1]["text"],
                  from_prom["notes"][1])

            code, _, err = run(["report", "job", "999", "--prometheus", prom.base])
            check(code != 0 and "no job '999'" in err and prom.base in err, err)

            # The chargeback table: job 4242 ended, job 77 still running.
            def tenants(*source):
                code, out, err = run(["report", "tenants", "--by", "job", "--json",
                                      "--gpu-hour-price", "2"] + list(source))
                check(code == 0, "report tenants %s: %s" % (source, err))
                return {row["holder"]: row for row in json.loads(out)["tenants"]}

            prom_rows = tenants("--prometheus", prom.base, "--scrape-interval", "1s",
                                "--since", "10m")
            agent_rows = [tenants("--agent", a.base) for a in (agent, info_agent)]
            check(set(prom_rows) == {"job 4242", "job 77"}, prom_rows)
            check(prom_rows["job 4242"]["end"] is not None and prom_rows["job 77"]["end"] is None,
                  prom_rows)
            # Per GPU (2 agents x 2 GPUs for job 4242, 2 x 1 for job 77): each end of its span
            # known to one 1 s interval, plus 1 s between the reports for the running job.
            for holder, gpus in (("job 4242", 4), ("job 77", 2)):
                p, seconds = prom_rows[holder], 3.0 * gpus
                for key, unit in (("gpu_hours", 3600), ("busy_gpu_hours", 3600),
                                  ("idle_held_gpu_hours", 3600), ("energy_kwh", 3.6e6 / 700)):
                    want = sum(rows[holder][key] for rows in agent_rows)
                    check(abs(p[key] - want) * unit <= seconds,
                          "%s %s: Prometheus %s, agents %s" % (holder, key, p[key], want))
                check(abs(p["cost"] - 2 * p["gpu_hours"]) < 1e-9, p)
            # Idle-held only on job 4242's idle GPU.
            check(prom_rows["job 4242"]["idle_held_gpu_hours"] > 0, prom_rows)
            check(prom_rows["job 77"]["idle_held_gpu_hours"] == 0, prom_rows)
            # By namespace: pods folded; this node runs Slurm jobs only, so no rows from either,
            # and each says why instead of an empty table (exit 6, NotFound).
            for source, why in ((["--prometheus", prom.base, "--since", "10m"],
                                 "has no gpuscope series of a pod"),
                                (["--agent", agent.base], "start the agent with -k")):
                code, out, err = run(["report", "tenants", "--by", "namespace", "--json"] + source)
                check(code == 6 and out == "" and why in err, (code, out, err))
            code, out, err = run(["report", "tenants", "--by", "job", "--markdown",
                                  "--prometheus", prom.base, "--scrape-interval", "1s",
                                  "--since", "10m"])
            check(code == 0 and "| job 4242 |" in out and "| job 77 |" in out, out + err)
        print("job reports: Prometheus %.1f GPU-s, %.0f J; agent %.1f GPU-s, %.0f J" % (
            from_prom["gpu_hours"] * 3600, from_prom["energy_kwh"] * 3.6e6,
            from_agent["gpu_hours"] * 3600, from_agent["energy_kwh"] * 3.6e6))
        print("tenants: job 4242 Prometheus %.1f GPU-s, agents %.1f GPU-s" % (
            prom_rows["job 4242"]["gpu_hours"] * 3600,
            sum(rows["job 4242"]["gpu_hours"] for rows in agent_rows) * 3600))


if __name__ == "__main__":
    main()
