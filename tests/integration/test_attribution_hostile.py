#!/usr/bin/env python3
"""Attribution under hostile cgroups (issue 31, findings 8 and 9), end to end
on the simulated 8 x H100 node, whose training workload runs pid 41200 + i on
GPU i, with cgroups under a fake /proc root.

Forged: a process in a user's own cgroup named after another tenant's
container (`docker-<victim id>.scope` under user.slice, an id the fake CRI
lists) and one in a self-made `job_<id>` directory label nothing, on no
series (DCGM ones included), while a real Slurm task on another GPU is named.

Blocking: a FIFO in place of a process's cgroup file is refused at once: the
refresh goes on to name the next GPU's job, and SIGTERM stops the agent with
status 0 (it used to block the attribution thread forever, and the agent
never exited).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, need, temp_dir  # noqa: E402

try:
    from fake_cri import FakeCri
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeCri = None

VICTIM = "f" * 64
USER = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
REAL_JOB = "0::/system.slice/slurmstepd.scope/job_777/step_0/user/task_0\n"
ARGS = ["--simulate", "training-8xh100", "--slow-interval", "1s", "--attribution-refresh",
        "500ms"]


def write_cgroups(proc, cgroups):
    for pid, text in cgroups.items():
        os.makedirs(os.path.join(proc, str(pid)))
        with open(os.path.join(proc, str(pid), "cgroup"), "w") as f:
            f.write(text)


class AttributionHostileTest(unittest.TestCase):
    def setUp(self):
        self.work = temp_dir(self, "gpuscope-hostile-")

    def test_forged(self):
        need(FakeCri is not None, "python3-grpcio missing")
        proc = os.path.join(self.work, "proc-forged")
        write_cgroups(proc, {41200: USER + "docker-%s.scope\n" % VICTIM,
                             41201: USER + "slurmstepd.scope/job_4242/step_0\n",
                             41202: "0::/mine/slurm/uid_0/job_4243/step_0\n",
                             41203: REAL_JOB})
        cri = FakeCri(os.path.join(self.work, "cri.sock"), [(VICTIM, "victim", "db-0", "main")])
        cri.start()
        try:
            with Serve(ARGS + ["--proc-root", proc, "--container-runtime-socket",
                               cri.socket_path]) as agent:
                body = agent.wait_metrics(lambda b: 'hpc_job="777"' in b, "the real job")
                check(cri.calls > 0 and 'gpuscope_attribution_up{source="cri"} 1' in body,
                      "the CRI was asked: %s"
                      % [l for l in body.splitlines() if "attribution_up" in l])
                for forged in ('namespace="victim"', 'pod="db-0"', 'hpc_job="4242"',
                               'hpc_job="4243"'):
                    check(forged not in body, "forged label %s on: %s" % (
                        forged, [l for l in body.splitlines() if forged in l][:3]))
        finally:
            cri.stop()

    def test_fifo(self):
        proc = os.path.join(self.work, "proc-fifo")
        write_cgroups(proc, {41203: REAL_JOB})
        os.makedirs(os.path.join(proc, "41200"))
        os.mkfifo(os.path.join(proc, "41200", "cgroup"))  # read first: GPU 0
        agent = Serve(ARGS + ["--proc-root", proc])
        try:
            agent.wait_metrics(lambda b: 'hpc_job="777"' in b, "the job read after the FIFO")
        finally:
            agent.stop(timeout=20)  # fails unless SIGTERM ends it with status 0


if __name__ == "__main__":
    main()
