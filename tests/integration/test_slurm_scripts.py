#!/usr/bin/env python3
"""deploy/slurm/: the prolog and epilog that write and remove gpuscope's job
mapping files and append the job's report, run as slurmd runs them (its
environment; `scontrol` replaced by a recorder that knows the job's output
file) against a real agent on the simulator. Checks: the prolog maps the job
on its GPUs (a GPU shared by two jobs keeps both lines), the agent counts it,
the epilog unmaps it, waits for the agent to see the end and appends the
report to the output file and the AdminComment; a report that fails (the
job unknown to the agent) writes nothing to Slurm and still exits 0; the
scripts pass shellcheck (scripts/setup.sh installs it).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, Serve, check, main,  # noqa: E402
                              need_tool, wait_until)
from jobs_fixture import make_node  # noqa: E402

SLURM = os.path.join(SOURCE_DIR, "deploy", "slurm")

FAKE_SCONTROL = """#!/bin/sh
# `scontrol show job ID` prints the output file; `update` is recorded.
if [ "$1" = show ]; then echo "   StdOut=$FAKE_STDOUT"; exit 0; fi
printf '%s\\n' "$@" >> "$FAKE_UPDATES"
"""


class SlurmScriptsTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory(prefix="gpuscope-slurm-")
        self.addCleanup(d.cleanup)
        self.dir = d.name
        self.scenario, self.mapping = make_node(self.dir, start_jobs=False)
        self.stdout = os.path.join(self.dir, "slurm-4242.out")
        with open(self.stdout, "w") as f:
            f.write("training done\n")
        self.updates = os.path.join(self.dir, "updates")
        self.scontrol = os.path.join(self.dir, "scontrol")
        with open(self.scontrol, "w") as f:
            f.write(FAKE_SCONTROL)
        os.chmod(self.scontrol, 0o755)

    def script(self, name, job, gpus, agent=None, wait="10"):
        env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": job, "SLURM_JOB_GPUS": gpus,
               "GPUSCOPE_HPC_JOB_MAPPING_DIR": self.mapping, "GPUSCOPE_BIN": GPUSCOPE,
               "SCONTROL": self.scontrol, "FAKE_STDOUT": self.stdout,
               "FAKE_UPDATES": self.updates, "GPUSCOPE_REPORT_TO": "both",
               "GPUSCOPE_REPORT_WAIT": wait}
        if agent:
            env["GPUSCOPE_AGENT"] = agent.base
        p = subprocess.run([os.path.join(SLURM, name)], env=env, capture_output=True,
                           text=True, timeout=30)
        check(p.returncode == 0, "%s exited %s: %s" % (name, p.returncode, p.stderr))
        return p.stderr

    def mapped(self, gpu):
        path = os.path.join(self.mapping, gpu)
        return open(path).read().split() if os.path.exists(path) else []

    def test_prolog_epilog_report(self):
        self.script("gpuscope-prolog", "4242", "0,1")
        self.script("gpuscope-prolog", "4243", "1")
        check(self.mapped("0") == ["4242"] and self.mapped("1") == ["4242", "4243"],
              "mapping: %s %s" % (self.mapped("0"), self.mapped("1")))
        with Serve(["--simulate", self.scenario, "--hpc-job-mapping-dir", self.mapping,
                    "--attribution-refresh", "200ms"]) as agent:
            agent.wait_healthy()
            wait_until(lambda: agent.get("/api/v1/jobs?kind=job&id=4242")[0] == 200, "job seen")
            time.sleep(3)  # the job runs a few cycles
            self.script("gpuscope-epilog", "4242", "0,1", agent)
            check(self.mapped("0") == [] and self.mapped("1") == ["4243"],
                  "after the epilog: %s %s" % (self.mapped("0"), self.mapped("1")))
            out = open(self.stdout).read()
            check(out.startswith("training done\n") and "Report for job 4242" in out and
                  "ended" in out and "1 of 2 GPUs were never used" in out, out)
            updates = open(self.updates).read().splitlines()
            check(updates[:2] == ["update", "job=4242"], updates)
            comment = updates[2]
            check(comment.startswith("AdminComment=gpuscope:{"), comment)
            report = json.loads(comment[len("AdminComment=gpuscope:"):])
            check(report["job"] == "job 4242" and report["end"] is not None, report)

            # A failed report (job 999 is unknown to the agent) writes nothing to Slurm.
            os.unlink(self.updates)
            before = open(self.stdout).read()
            err = self.script("gpuscope-epilog", "999", "0", agent, wait="2")
            check("no report, nothing written" in err and "no job '999'" in err, err)
            check(open(self.stdout).read() == before, "output file untouched")
            check(not os.path.exists(self.updates), "AdminComment untouched")

    def test_shellcheck(self):
        shellcheck = need_tool("shellcheck", "shellcheck")
        p = subprocess.run([shellcheck, "-x", "-s", "bash", "gpuscope-prolog", "gpuscope-epilog",
                            "gpuscope-slurm-lib.sh"], cwd=SLURM, capture_output=True, text=True)
        check(p.returncode == 0, p.stdout + p.stderr)


if __name__ == "__main__":
    main()
