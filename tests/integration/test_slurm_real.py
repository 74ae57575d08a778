#!/usr/bin/env python3
"""deploy/slurm/ against a real Slurm (local_slurm.py: Debian's slurmctld,
slurmd and munge under a temporary folder, one node, three simulated GPUs as
character devices in gres.conf). A real `sbatch --gres=gpu:2` job runs; the
shipped prolog maps it, the agent's ledger counts it, the shipped epilog
appends its report to the job's output file. The jobs are nobody's (sbatch
--uid, as root may): the epilog appends as the job's owner, so a job that
replaces its own output file with a symbolic link to a file only root may
write gets nothing written there (issue 39, item 1). (The AdminComment of a
finished job is set through sacctmgr, which needs slurmdbd: not started here;
test_slurm_scripts.py checks that path with a recording scontrol.)
A second job runs on a node whose device files are not in NVML's order
(/dev/nvidia0 is NVML's GPU 1, issue 41): its label, ledger entry and report
name the GPU its device file is.
Skips (with the reason; fails under CI=true) where the daemons cannot start.
"""
import os
import json
import pwd
import re
import subprocess
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

# The job owner's attack: their output file becomes a link to root's file ($1).
LINKING_JOB = """#!/bin/sh
echo "job $SLURM_JOB_ID"
ln -sfn "$1" "$PWD/job-$SLURM_JOB_ID.out"
sleep 3
"""

# /dev/nvidia0 is NVML's GPU 1, /dev/nvidia1 GPU 2, /dev/nvidia2 GPU 0.
PERMUTED = """\
description: device files not in PCI order
gpus:
  - {model: h100-sxm, minor_number: 2, workload: [{at: 0, kind: idle}]}
  - {model: h100-sxm, minor_number: 0, workload: [{at: 0, kind: training}]}
  - {model: h100-sxm, minor_number: 1, workload: [{at: 0, kind: idle}]}
"""


def write_wrappers(d, mapping, agent):
    """The prolog and epilog slurm.conf names in d: our scripts, run against the agent."""
    for name in ("prolog", "epilog"):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(WRAPPER.format(mapping=mapping, gpuscope=GPUSCOPE, agent=agent.base,
                                   script=os.path.join(SLURM, "gpuscope-" + name),
                                   log=os.path.join(d, name + ".err")))
        os.chmod(path, 0o755)


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
            write_wrappers(d, mapping, agent)
            nobody = pwd.getpwnam("nobody")
            home = os.path.join(d, "home")
            os.mkdir(home)
            os.chown(home, nobody.pw_uid, nobody.pw_gid)
            vault = os.path.join(d, "vault")
            os.mkdir(vault, 0o700)
            secret = os.path.join(vault, "secret")
            with open(secret, "w") as f:
                f.write("root's only\n")
            os.chmod(secret, 0o600)

            def submit(script, *args):
                job_file = os.path.join(d, "job-%d.sh" % len(os.listdir(d)))
                with open(job_file, "w") as f:
                    f.write(script)
                code, text = slurm.cmd("sbatch", "--uid=nobody", "--gid=%d" % nobody.pw_gid,
                                       "--chdir=" + home, "--gres=gpu:2", "-o",
                                       os.path.join(home, "job-%j.out"), job_file, *args)
                check(code == 0, "sbatch: %s" % text)
                return re.search(r"Submitted batch job (\d+)", text).group(1)
            job = submit(JOB)
            linking = submit(LINKING_JOB, secret)
            out = os.path.join(home, "job-%j.out")
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
            info = os.stat(out)
            check((info.st_uid, info.st_gid) == (nobody.pw_uid, nobody.pw_gid),
                  "the output file is still the owner's: %d:%d" % (info.st_uid, info.st_gid))

            # The linking job's epilog is refused by the kernel, as the owner would be.
            refused = "could not append to %s/job-%s.out as uid %d" % (home, linking,
                                                                       nobody.pw_uid)
            wait_until(lambda: (refused in read(os.path.join(d, "epilog.err")) or
                                read(secret) != "root's only\n"),
                       "the epilog of job %s" % linking, 40)
            check(read(secret) == "root's only\n", "the epilog wrote into root's file:\n" +
                  read(secret))
            log = read(os.path.join(d, "epilog.err"))
            check(refused in log, "no refusal logged:\n" + log)
        print("slurm: sbatch job %s reported by the shipped epilog, job %s's link refused"
              % (job, linking))

    def test_job_lands_on_the_gpu_its_device_file_names(self):
        # Issue 41: gres.conf's /dev/nvidia0 is not NVML's GPU 0 on every host.
        # The simulated node's minors are permuted against its PCI (NVML) order:
        # /dev/nvidia0 (gres GPU 0, the device file an --gres=gpu:1 job gets) is
        # NVML's GPU 1. The job's label, its ledger entry and its report must
        # name GPU 1, never the idle GPU 0 the old prolog named.
        slurm = LocalSlurm.started(gpus=3, extra_conf=["Prolog={root}/prolog",
                                                       "Epilog={root}/epilog"])
        self.addCleanup(slurm.close)
        d = slurm.root
        scenario = os.path.join(d, "permuted.yaml")
        with open(scenario, "w") as f:
            f.write(PERMUTED)
        mapping = os.path.join(d, "jobs")
        os.mkdir(mapping)
        with Serve(["--simulate", scenario, "--hpc-job-mapping-dir", mapping,
                    "--attribution-refresh", "200ms"]) as agent:
            agent.wait_healthy()
            uuids = {int(g): u for g, u in re.findall(
                r'^gpuscope_gpu_info\{gpu="(\d+)",uuid="([^"]+)"', agent.get("/metrics")[2],
                re.M)}
            check(len(uuids) == 3, "GPU uuids: %s" % uuids)
            write_wrappers(d, mapping, agent)
            job_file = os.path.join(d, "job.sh")
            with open(job_file, "w") as f:
                f.write(JOB)
            out = os.path.join(d, "job.out")
            code, text = slurm.cmd("sbatch", "--gres=gpu:1", "-o", out, job_file)
            check(code == 0, "sbatch: %s" % text)
            job = re.search(r"Submitted batch job (\d+)", text).group(1)

            def job_gpus():
                body = agent.get("/metrics")[2]
                return {int(g) for g in re.findall(
                    r'\{gpu="(\d+)"[^}]*hpc_job="%s"' % job, body)}
            try:
                wait_until(lambda: job_gpus(), "the hpc_job label of job %s" % job, 20)
            except AssertionError:
                raise AssertionError("no label:\n%s\n%s\n%s" % (
                    slurm.tail("slurmd.log", 2000), slurm.tail("prolog.err"),
                    os.listdir(mapping)))
            check(job_gpus() == {1}, "job %s labelled on GPUs %s (mapping %s, prolog: %s)" % (
                job, job_gpus(), os.listdir(mapping), slurm.tail("prolog.err")))
            status, _, body = agent.get("/api/v1/jobs?kind=job&id=" + job)
            check(status == 200, "/api/v1/jobs: %s %s" % (status, body))
            devices = [(dev["gpu"], dev["uuid"]) for dev in json.loads(body)["devices"]]
            check(devices == [(1, uuids[1])], "the ledger's GPUs of job %s: %s" % (job, devices))
            p = subprocess.run([GPUSCOPE, "report", "job", job, "--agent", agent.base, "--json"],
                               capture_output=True, text=True, timeout=30)
            check(p.returncode == 0, "report: %s" % p.stderr)
            gpus = [(g["gpu"], g["uuid"]) for g in json.loads(p.stdout)["gpus"]]
            check(gpus == [(1, uuids[1])], "the report's GPUs of job %s: %s" % (job, gpus))
            wait_until(lambda: os.path.exists(out) and "Report for job " + job in read(out),
                       "the epilog's report", 30)
            check(read(out).startswith("job %s on GPUs 0" % job), read(out))
            check(not any(job in read(os.path.join(mapping, f)) for f in os.listdir(mapping)
                          if not f.startswith(".")), "the epilog unmapped the job")
        print("slurm: job %s on gres GPU 0 (/dev/nvidia0) attributed to NVML GPU 1" % job)


if __name__ == "__main__":
    main()
