#!/usr/bin/env python3
"""`gpuscope report --agent URL` never answers with silence (issue 44, item 7).

- A default agent (no -k, no --hpc-job-mapping-dir, no --process-names) on the
  simulator can attribute nothing: `report tenants` (text and --json) exits
  non-zero and says why, naming the switches that would name holders;
  `report job ID` says the agent knows no job at all, and why.
- /api/v1/jobs says which attribution sources the agent runs.
- An agent with a Slurm mapping directory: an unknown job's error lists the jobs
  it knows; tenants are reported as before.
- An agent with --process-names: workloads named after processes, reported.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. ~15 s.
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, run, wait_until  # noqa: E402
from jobs_fixture import make_node  # noqa: E402

NOT_FOUND = 6  # cli::ExitCodeFor(NotFound)
SWITCHES = ("-k", "--hpc-job-mapping-dir", "--process-names")


def report(agent, *args):
    return run(["report"] + list(args) + ["--agent", agent.base])


def listed(agent, kind):
    status, _, body = agent.get("/api/v1/jobs?kind=" + kind)
    check(status == 200, body)
    return json.loads(body)["jobs"]


class AgentAnswersTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="gpuscope-agent-answers-")
        self.scenario, self.mapping = make_node(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def test_default_agent_says_why_nothing_is_attributed(self):
        with Serve(["--simulate", self.scenario, "-c", "200"]) as agent:
            agent.wait_healthy()
            for extra in ([], ["--json"], ["--by", "namespace"], ["--by", "job"]):
                code, out, err = report(agent, "tenants", *extra)
                check(code == NOT_FOUND, "tenants %s: exit %s, %r %r" % (extra, code, out, err))
                check(out == "", "tenants %s printed %r" % (extra, out))
                check(agent.base in err and "no attribution source" in err and
                      "start the agent with" in err, err)
            code, _, err = report(agent, "tenants")
            check(all(s in err for s in SWITCHES), err)
            code, _, err = report(agent, "tenants", "--by", "job")
            check("--hpc-job-mapping-dir" in err and "-k " not in err, err)
            code, _, err = report(agent, "job", "4242")
            check(code == NOT_FOUND and "no job '4242'" in err and "knows no job at all" in err
                  and "--hpc-job-mapping-dir" in err, err)
            status, _, body = agent.get("/api/v1/jobs")
            check(status == 200, body)
            check(json.loads(body)["attribution"] == {
                "kubelet": False, "container_runtime": False, "hpc_job_mapping_dir": False,
                "process_cgroups": True, "process_names": False}, body)
        print("default agent: tenants and job reports say which switch names holders")

    def test_unknown_job_lists_the_known_ones(self):
        with Serve(["--simulate", self.scenario, "--hpc-job-mapping-dir", self.mapping,
                    "--attribution-refresh", "100ms"]) as agent:
            agent.wait_healthy()
            wait_until(lambda: len(listed(agent, "job")) == 2, "jobs 4242 and 77", 15)
            code, out, err = report(agent, "job", "999")
            check(code == NOT_FOUND and "no job '999'" in err and "4242" in err and "77" in err,
                  err)
            code, out, err = report(agent, "tenants", "--by", "job")
            check(code == 0 and "job 4242" in out and "job 77" in out, out + err)
            status, _, body = agent.get("/api/v1/jobs")
            check(json.loads(body)["attribution"]["hpc_job_mapping_dir"] is True, body)
        print("unknown job: the agent's jobs listed")

    def test_process_names_name_workloads(self):
        with Serve(["--simulate", self.scenario, "--process-names",
                    "--attribution-refresh", "100ms"]) as agent:
            agent.wait_healthy()
            wait_until(lambda: listed(agent, "workload"), "a workload", 15)
            code, out, err = report(agent, "tenants")
            check(code == 0 and "torchrun" in out and "python3" in out, out + err)
            code, out, err = report(agent, "tenants", "--by", "job")
            check(code == NOT_FOUND and "Slurm job" in err and "--hpc-job-mapping-dir" in err,
                  err)
        print("--process-names: workloads reported; jobs still say why not")


if __name__ == "__main__":
    main()
