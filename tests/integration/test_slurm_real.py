#!/usr/bin/env python3
"""deploy/slurm/ against a real Slurm (Debian's slurmctld, slurmd and munge,
started here under a temporary folder: one node, three simulated GPUs as
character devices in gres.conf). A real `sbatch --gres=gpu:2` job runs; the
shipped prolog maps it, the agent's ledger counts it, the shipped epilog
appends its report to the job's output file. (The AdminComment of a
finished job is set through sacctmgr, which needs slurmdbd: not started here;
test_slurm_scripts.py checks that path with a recording scontrol.)
Skips (with the reason) where the daemons cannot start: not root, a package
missing, munged or slurmd refusing to run.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, Serve, check, main, need,  # noqa: E402
                              need_tool, stop_process, wait_until)
from jobs_fixture import make_node  # noqa: E402

SLURM = os.path.join(SOURCE_DIR, "deploy", "slurm")

SLURM_CONF = """\
ClusterName=gpuscope-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={dir}/munge/sock
CredType=cred/munge
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
GresTypes=gpu
Prolog={dir}/prolog
Epilog={dir}/epilog
NodeName={host} NodeAddr=127.0.0.1 CPUs=1 Gres=gpu:3 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""

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


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class SlurmRealTest(unittest.TestCase):
    def setUp(self):
        need(os.geteuid() == 0, "slurmd and munged need root to start here")
        for tool, package in (("munged", "munge"), ("slurmctld", "slurmctld"),
                              ("slurmd", "slurmd"), ("sbatch", "slurm-client")):
            need_tool(tool, package)
        d = tempfile.TemporaryDirectory(prefix="gpuscope-slurmd-")
        self.addCleanup(d.cleanup)
        self.dir = d.name
        os.chmod(self.dir, 0o755)
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))

    def daemon(self, argv, pidfile, what):
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=20)
        need(p.returncode == 0, "%s did not start: %s" % (what, (p.stdout + p.stderr)[-300:]))
        pidfile = os.path.join(self.dir, pidfile)
        try:
            wait_until(lambda: os.path.exists(pidfile), what + "'s pid file", 10)
        except AssertionError:
            need(False, "%s wrote no pid file" % what)
        pid = int(open(pidfile).read())
        self.addCleanup(lambda: self.kill(pid))

    @staticmethod
    def kill(pid):
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            pass

    def start_munge(self):
        munge = os.path.join(self.dir, "munge")
        os.mkdir(munge, 0o700)
        shutil.copy("/etc/munge/munge.key", os.path.join(munge, "key"))
        os.chmod(os.path.join(munge, "key"), 0o400)
        shutil.chown(munge, "munge", "munge")
        shutil.chown(os.path.join(munge, "key"), "munge", "munge")
        self.daemon(["setpriv", "--reuid", "munge", "--regid", "munge", "--clear-groups",
                     "munged", "--force", "--key-file=" + munge + "/key",
                     "--socket=" + munge + "/sock", "--pid-file=" + munge + "/pid",
                     "--log-file=" + munge + "/log", "--seed-file=" + munge + "/seed"],
                    "munge/pid", "munged")

    def write_slurm(self, agent, mapping):
        host = socket.gethostname().split(".")[0]
        ctld, slurmd = free_ports(2)
        for sub in ("state", "spool", "dev"):
            os.mkdir(os.path.join(self.dir, sub))
        for i in range(3):
            os.mknod(os.path.join(self.dir, "dev", "nvidia%d" % i), 0o600 | 0o020000,
                     os.makedev(195, i))
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write(SLURM_CONF.format(host=host, ctld_port=ctld, slurmd_port=slurmd,
                                      dir=self.dir))
        with open(os.path.join(self.dir, "gres.conf"), "w") as f:
            f.write("NodeName=%s Name=gpu File=%s/dev/nvidia[0-2]\n" % (host, self.dir))
        for name in ("prolog", "epilog"):
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write(WRAPPER.format(mapping=mapping, gpuscope=GPUSCOPE, agent=agent.base,
                                       script=os.path.join(SLURM, "gpuscope-" + name),
                                       log=os.path.join(self.dir, name + ".err")))
            os.chmod(path, 0o755)
        return host

    def test_sbatch_job_gets_its_report(self):
        self.start_munge()
        scenario, mapping = make_node(self.dir, start_jobs=False)
        with Serve(["--simulate", scenario, "--hpc-job-mapping-dir", mapping,
                    "--attribution-refresh", "200ms"]) as agent:
            agent.wait_healthy()
            host = self.write_slurm(agent, mapping)
            self.daemon(["slurmctld", "-i"], "slurmctld.pid", "slurmctld")
            self.daemon(["slurmd", "-N", host], "slurmd.pid", "slurmd")
            out = os.path.join(self.dir, "job-%j.out")
            job_file = os.path.join(self.dir, "job.sh")
            with open(job_file, "w") as f:
                f.write(JOB)
            p = subprocess.run(["sbatch", "--gres=gpu:2", "-o", out, job_file], env=self.env,
                               capture_output=True, text=True, timeout=20)
            check(p.returncode == 0, "sbatch: %s" % p.stderr)
            job = re.search(r"Submitted batch job (\d+)", p.stdout).group(1)
            wait_until(lambda: agent.get("/api/v1/jobs?kind=job&id=" + job)[0] == 200,
                       "the agent sees job %s (prolog)" % job, 20)
            out = out.replace("%j", job)

            def reported():
                return os.path.exists(out) and "Report for job " + job in open(out).read()
            try:
                wait_until(reported, "the epilog's report in %s" % out, 30)
            except AssertionError:
                raise AssertionError("no report:\n%s\n%s" % (
                    open(os.path.join(self.dir, "slurmd.log")).read()[-2000:],
                    open(out).read() if os.path.exists(out) else "(no output)"))
            text = open(out).read()
            check(text.startswith("job %s on GPUs 0,1" % job) and "ended" in text, text)
            check(not os.listdir(mapping) or all(
                job not in open(os.path.join(mapping, f)).read() for f in os.listdir(mapping)
                if not f.startswith(".")), "the epilog unmapped the job")
            stop_process(agent.proc)
        print("slurm: sbatch job %s reported by the shipped epilog" % job)


if __name__ == "__main__":
    main()
