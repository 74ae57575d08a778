#!/usr/bin/env python3
"""Slurm attribution end to end: `gpuscope serve --hpc-job-mapping-dir` on the
simulated 8 x H100 node. A prolog's file appears while serving and its job
shows as hpc_job (and workload) on every series of that GPU within a refresh;
two jobs on one GPU give two copies of each series; the epilog removes the
file and the label goes; the directory itself vanishing turns
gpuscope_attribution_up{source="hpc"} to 0 without stopping the metrics.
Without a mapping directory, the cgroup of a GPU's process (a fake /proc with
the simulator's PIDs) names its Slurm job.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, run  # noqa: E402


def lines(body, prefix):
    return [l for l in body.splitlines() if l.startswith(prefix)]


class AttributionHpcTest(unittest.TestCase):
    def test_mapping_dir_followed_while_serving(self):
        jobs = tempfile.mkdtemp(prefix="gpuscope-hpc-")
        try:
            with Serve(["--simulate", "training-8xh100", "--hpc-job-mapping-dir", jobs,
                        "--attribution-refresh", "500ms"]) as agent:
                agent.wait_healthy()
                agent.wait_metrics(lambda b: 'gpuscope_attribution_up{source="hpc"} 1' in b,
                                   "hpc up")
                with open(os.path.join(jobs, "2"), "w") as f:
                    f.write("4242\n")
                body = agent.wait_metrics(lambda b: 'hpc_job="4242"' in b, "the prolog's job")
                util = lines(body, 'DCGM_FI_DEV_GPU_UTIL{gpu="2"')
                check(len(util) == 1 and 'hpc_job="4242"}' in util[0], "GPU 2: %s" % util)
                busy = lines(body, 'gpuscope_gpu_busy_seconds_total{gpu="2"')
                check(len(busy) == 1 and 'hpc_job="4242",workload="4242"}' in busy[0],
                      "native labels: %s" % busy)
                check(not any("hpc_job" in l for l in lines(body, 'DCGM_FI_DEV_GPU_UTIL{gpu="3"')),
                      "GPU 3 has no job")

                with open(os.path.join(jobs, "2"), "a") as f:
                    f.write("4243\n")
                body = agent.wait_metrics(lambda b: 'hpc_job="4243"' in b, "a second job")
                check(len(lines(body, 'DCGM_FI_DEV_GPU_UTIL{gpu="2"')) == 2, "one series per job")

                os.unlink(os.path.join(jobs, "2"))  # the epilog
                agent.wait_metrics(lambda b: "hpc_job=" not in b, "labels gone after the epilog")
                shutil.rmtree(jobs)
                body = agent.wait_metrics(
                    lambda b: 'gpuscope_attribution_up{source="hpc"} 0' in b,
                    "hpc down without its directory")
                check(len(lines(body, "DCGM_FI_DEV_GPU_UTIL{")) == 8, "metrics go on")
        finally:
            shutil.rmtree(jobs, ignore_errors=True)
        print("attribution: HPC job mapping followed while serving")

    def test_huge_job_id_is_capped(self):
        """Issue 39: a 60 KiB job id made /metrics 5.5 MB. Label values are cut to 256 bytes
        (docs/metrics.md), so the body grows by about a job's usual labels."""
        jobs = tempfile.mkdtemp(prefix="gpuscope-hpc-")
        try:
            with Serve(["--simulate", "training-8xh100", "--hpc-job-mapping-dir", jobs,
                        "--attribution-refresh", "500ms"]) as agent:
                with open(os.path.join(jobs, "2"), "w") as f:
                    f.write("4242\n")
                small = agent.wait_metrics(lambda b: 'hpc_job="4242"' in b, "a usual job")
                huge = "j" * (60 << 10)
                with open(os.path.join(jobs, "2"), "w") as f:
                    f.write(huge + "\n")
                body = agent.wait_metrics(lambda b: 'hpc_job="jjj' in b, "the 60 KiB job")
                values = re.findall(r'hpc_job="([^"]*)"', body)
                check(values and all(len(v) <= 256 for v in values),
                      "label values capped: %s" % sorted({len(v) for v in values}))
                check(all(v.startswith("j" * 236 + "...#") for v in values),
                      "cut and marked: %s" % values[0][-40:])
                grown = len(body) - len(small)
                check(grown < 256 * len(values) * 3,
                      "/metrics grew %d bytes for %d labels" % (grown, len(values)))
        finally:
            shutil.rmtree(jobs, ignore_errors=True)
        print("attribution: a 60 KiB job id is capped to 256 bytes on /metrics")

    def test_cgroup_names_the_job(self):
        proc = tempfile.mkdtemp(prefix="gpuscope-proc-")
        try:
            # training-8xh100 runs pid 41200 + i on GPU i.
            os.makedirs(os.path.join(proc, "41203"))
            with open(os.path.join(proc, "41203", "cgroup"), "w") as f:
                f.write("0::/system.slice/slurmstepd.scope/job_777/step_0/user/task_0\n")
            with Serve(["--simulate", "training-8xh100", "--proc-root", proc,
                        "--slow-interval", "1s", "--attribution-refresh", "500ms"]) as agent:
                body = agent.wait_metrics(lambda b: 'hpc_job="777"' in b, "job from a cgroup")
                util = [l for l in lines(body, "DCGM_FI_DEV_GPU_UTIL{") if 'hpc_job="777"' in l]
                check(len(util) == 1 and util[0].startswith('DCGM_FI_DEV_GPU_UTIL{gpu="3"'),
                      "only GPU 3 runs job 777: %s" % util)
                check("gpuscope_attribution_up" not in body,
                      "no source to report without -k or a directory")
        finally:
            shutil.rmtree(proc, ignore_errors=True)

    def test_commands(self):
        """The summary, health, diagnose and top say whose work each GPU serves."""
        jobs = tempfile.mkdtemp(prefix="gpuscope-hpc-")
        try:
            with open(os.path.join(jobs, "2"), "w") as f:
                f.write("4242\n")
            common = ["--simulate", "training-8xh100", "--hpc-job-mapping-dir", jobs]
            code, out, err = run(common)
            check(code == 0 and "Workloads:" in out and "Slurm job 4242" in out,
                  "summary: %s %s" % (out[-600:], err))
            code, out, err = run(["health", "--json"] + common)
            gpus = {g["gpu"]: g for g in json.loads(out)["gpus"]}
            check(gpus[2]["holders"] == [{"namespace": "", "pod": "", "container": "",
                                           "hpc_job": "4242", "workload": "4242"}],
                  "health --json holders: %s" % gpus[2].get("holders"))
            check(gpus[3]["holders"] == [], "GPU 3 serves nobody: %s" % gpus[3]["holders"])
            code, out, err = run(["diagnose", "--window", "1m"] + common)
            check("GPU 2" in out and "serves Slurm job 4242" in out, "diagnose: %s" % out[:800])
            code, out, err = run(["top", "--once", "--no-color"] + common)
            check(code == 0 and "serves Slurm job 4242" in out, "top: %s %s" % (out[:800], err))
        finally:
            shutil.rmtree(jobs, ignore_errors=True)


if __name__ == "__main__":
    main()
