#!/usr/bin/env python3
"""deploy/slurm/ against a real Slurm (local_slurm.py: Debian's slurmctld,
slurmd and munge under a temporary folder, one node, three simulated GPUs as
character devices in gres.conf). A real `sbatch --gres=gpu:2` job runs; the
shipped prolog maps it, the agent's ledger counts it, the shipped epilog
appends its report to the job's output file. (The AdminComment of a
finished job is set through sacctmgr, which needs slurmdbd: not started here;
test_slurm_scripts.py checks that path with a recording scontrol.)
Skips (with the reason; fails under CI=true) where the daemons cannot start.
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, Serve, check, main,  # noqa: E402
                              wait_until)
from jobs_fixture import make_node  # noqa: E402
from local_slurm import LocalSlurm  # noqa: E402

SLURM = os.path.join(SOURCE_DIR, "deploy", "slurm")

# slurmd gives prologs and epilogs only SLURM_* variables: a wrapper sets ours.
WRAPPER = """#!/bin/sh
export GPUSCOPE_HPC_JOB_MAPPING_DIR={mapping} GPUSCOPE_BIN={gpuscope}
export GPUSCOPE_AGENT={agent} GPUSCOPE_REPORT_TO=output GPUSCOPE_REPORT_WAIT=10
exec {script} 2>>{log}
"""

JOB = """#!/bin/sh
echo "job $SLURM_JOB_ID on GPUs $CUDA_VISIBLE_DEVICES"
sleep 6
"""


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


class SlurmRealTest(unittest.TestCase):
    def test_sbatch_job_gets_its_report(self):
        # The scripts are written once the agent's URL is known; slurmd reads
        # them at each job, so the cluster can start first.
        slurm = LocalSlurm.started(gpus=3, extra_conf=["Prolog={root}/prolog",
                                                       "Epilog={root}/epilog"])
        self.addCleanup(slurm.close)
        d = slurm.root
        scenario, mapping = make_node(d, start_jobs=False)
        with Serve(["--simulate", scenario, "--hpc-job-mapping-dir", mapping,
                    "--attribution-refresh", "200ms"]) as agent:
            agent.wait_healthy()
            for name in ("prolog", "epilog"):
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    f.write(WRAPPER.format(mapping=mapping, gpuscope=GPUSCOPE, agent=agent.base,
                                           script=os.path.join(SLURM, "gpuscope-" + name),
                                           log=os.path.join(d, name + ".err")))
                os.chmod(path, 0o755)
            out = os.path.join(d, "job-%j.out")
            job_file = os.path.join(d, "job.sh")
            with open(job_file, "w") as f:
                f.write(JOB)
            code, text = slurm.cmd("sbatch", "--gres=gpu:2", "-o", out, job_file)
            check(code == 0, "sbatch: %s" % text)
            job = re.search(r"Submitted batch job (\d+)", text).group(1)
            wait_until(lambda: agent.get("/api/v1/jobs?kind=job&id=" + job)[0] == 200,
                       "the agent sees job %s (prolog)" % job, 20)
            out = out.replace("%j", job)

            def reported():
                return os.path.exists(out) and "Report for job " + job in read(out)
            try:
                wait_until(reported, "the epilog's report in %s" % out, 30)
            except AssertionError:
                raise AssertionError("no report:\n%s\n%s\n%s" % (
                    slurm.tail("slurmd.log", 2000), slurm.tail("epilog.err"),
                    read(out) if os.path.exists(out) else "(no output)"))
            text = read(out)
            check(text.startswith("job %s on GPUs 0,1" % job) and "ended" in text, text)
            check(all(job not in read(os.path.join(mapping, f)) for f in os.listdir(mapping)
                      if not f.startswith(".")), "the epilog unmapped the job")
        print("slurm: sbatch job %s reported by the shipped epilog" % job)


if __name__ == "__main__":
    main()
