#!/usr/bin/env python3
"""`gpuscope serve --remediate slurm` against a real Slurm on localhost
(Debian's slurmctld, slurmd and munge, started here as root in a temp folder:
a two-node slurm.conf, gpunode1 with a slurmd and two GPUs in gres.conf
backed by character devices made with mknod, gpunode2 without one, DOWN).
The agent runs on the simulator; faults are injected through its control file.

  - a healthy node is never touched (no action logged, node idle, no reason);
  - dry run: XID 79 logs and counts the intended drain and changes nothing;
  - a real run drains within 30 s of XID 79 with a reason naming it, once,
    and resumes its own drain once the GPU is back and healthy for
    --remediate-resume-after;
  - an admin's drain is left alone (neither overwritten nor resumed);
  - circuit breaker: with gpunode2 drained by gpuscope (1 of 2 nodes, limit
    1) the drain is refused, logged and counted as breaker_open;
  - scontrol/sinfo missing: a clear error, and /metrics keeps answering;
  - a node with the feature gpuscope-no-remediate is never drained (opted_out).

Skips (fails under CI=true) when the Slurm daemons cannot start here.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (Serve, check, free_port, main, need, need_tool,  # noqa: E402
                              stop_process, wait_until)
from remediate_common import (FAST, RECOVER_GPU1, XID79_ON_GPU1, actions, inject,  # noqa: E402
                              wait_action, write_scenario)

NODE = "gpunode1"


class StartError(Exception):
    """A daemon exited as soon as it started."""


class Slurm:
    """munged, slurmctld and slurmd in the foreground, all under `root`."""

    def __init__(self, root):
        self.root = root
        self.procs, self.logs = [], []
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        r = self.root
        munge = os.path.join(r, "munge")
        os.makedirs(munge)
        for d in ("state", "spool", "dev"):
            os.makedirs(os.path.join(r, d))
        os.chmod(r, 0o755)
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        shutil.chown(munge, "munge", "munge")
        shutil.chown(key, "munge", "munge")
        os.chmod(munge, 0o700)
        os.chmod(key, 0o400)
        socket = os.path.join(munge, "munge.socket")
        self.spawn("munged", ["munged", "--foreground", "--force", "--key-file=" + key,
                              "--socket=" + socket, "--pid-file=" + os.path.join(munge, "pid"),
                              "--seed-file=" + os.path.join(munge, "seed"),
                              "--log-file=" + os.path.join(munge, "log")], user="munge")
        wait_until(lambda: os.path.exists(socket), "munged's socket", timeout=10)
        for minor in (0, 1):
            dev = os.path.join(r, "dev", "nvidia%d" % minor)
            os.mknod(dev, 0o666 | 0o020000, os.makedev(195, minor))
        with open(os.path.join(r, "gres.conf"), "w") as f:
            f.write("NodeName=%s Name=gpu File=%s\n" % (NODE, os.path.join(r, "dev",
                                                                          "nvidia[0-1]")))
        # A port free when chosen may be taken before slurmctld binds it: try again.
        for attempt in range(3):
            self.write_conf(socket)
            try:
                self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
                self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", NODE])
                break
            except StartError as e:
                self.stop(keep=1)  # munged stays
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
        wait_until(lambda: self.node(NODE)[0] == "idle", "%s idle in sinfo" % NODE, timeout=20)

    def write_conf(self, socket):
        r = self.root
        ctld_port = free_port()
        slurmd_port = free_port()
        while slurmd_port == ctld_port:
            slurmd_port = free_port()
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=gpuscopetest",
                "SlurmctldHost=localhost(127.0.0.1)",
                "SlurmctldPort=%d" % ctld_port,
                "SlurmdPort=%d" % slurmd_port,
                "AuthType=auth/munge", "CredType=cred/munge",
                "AuthInfo=socket=" + socket,
                "SlurmUser=root", "SlurmdUser=root",
                "StateSaveLocation=" + os.path.join(r, "state"),
                "SlurmdSpoolDir=" + os.path.join(r, "spool"),
                "SlurmctldPidFile=" + os.path.join(r, "slurmctld.pid"),
                "SlurmdPidFile=" + os.path.join(r, "slurmd.pid"),
                "SlurmctldLogFile=" + os.path.join(r, "slurmctld.log"),
                "SlurmdLogFile=" + os.path.join(r, "slurmd.log"),
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
                "GresTypes=gpu", "ReturnToService=2",
                "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
                "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 "
                "Gres=gpu:2 State=UNKNOWN" % NODE,
                "NodeName=gpunode2 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 "
                "RealMemory=100 State=DOWN",
                "PartitionName=gpu Nodes=ALL Default=YES State=UP", ""]))

    def spawn(self, name, argv, user=None):
        log = open(os.path.join(self.root, name + ".out"), "w")
        self.logs.append(log)
        ids = {"user": user, "group": user, "extra_groups": []} if user else {}
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           env=self.env, **ids))
        time.sleep(0.3)
        if self.procs[-1].poll() is not None:
            raise StartError("%s exited at once: %s" % (name, self.tail(name)))


    def tail(self, name):
        with open(os.path.join(self.root, name + ".out"), errors="replace") as f:
            return f.read()[-800:]

    def stop(self, keep=0):
        """Stops the daemons started after the first `keep`."""
        for p in reversed(self.procs[keep:]):
            stop_process(p, timeout=5)
        for log in self.logs[keep:]:
            log.close()
        self.procs, self.logs = self.procs[:keep], self.logs[:keep]

    def cmd(self, *args):
        p = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=20)
        return p.returncode, p.stdout + p.stderr

    def node(self, name):
        """(state, reason) of `name`, as sinfo shows them; ("", "") if unknown."""
        code, out = self.cmd("sinfo", "--noheader", "--Node", "--format=%N|%T|%E")
        for line in out.splitlines() if code == 0 else []:
            f = line.split("|", 2)
            if len(f) == 3 and f[0] == name:
                return f[1].rstrip("*~#$@^-!"), ("" if f[2] == "none" else f[2])
        return "", ""

    def drain(self, name, reason):
        code, out = self.cmd("scontrol", "update", "nodename=" + name, "state=drain",
                             "reason=" + reason)
        check(code == 0, "scontrol drain %s: %s" % (name, out))

    def resume(self, name):
        code, out = self.cmd("scontrol", "update", "nodename=" + name, "state=resume")
        check(code == 0 or "Invalid node state" in out, "scontrol resume %s: %s" % (name, out))


class RemediateSlurmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool, pkg in (("slurmctld", "slurmctld"), ("slurmd", "slurmd"),
                          ("munged", "munge"), ("scontrol", "slurm-client")):
            need_tool(tool, pkg)
        need(os.geteuid() == 0, "slurmctld/slurmd/munged need root here (not root)",
             setup_installs=False)
        cls.tmp = tempfile.mkdtemp(prefix="gpuscope-slurm-")
        cls.slurm = Slurm(cls.tmp)
        try:
            cls.slurm.start()
        except Exception as e:  # whatever failed, no daemon may outlive the test
            cls.slurm.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            need(False, "a local Slurm could not start: %s" % e, setup_installs=False)
        cls.scenario = write_scenario(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        cls.slurm.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        for node in (NODE, "gpunode2"):
            state, _ = self.slurm.node(node)
            if "drain" in state:
                self.slurm.resume(node)
        self.slurm.drain("gpunode2", "down: no slurmd in this test")  # not ours

    def serve(self, *extra, env=None):
        self.control = os.path.join(self.tmp, "control-%s" % self._testMethodName)
        open(self.control, "w").close()
        args = ["--simulate", self.scenario, "--remediate", "slurm",
                "--slurm-node", NODE] + FAST + list(extra)
        e = {"GPUSCOPE_SIM_CONTROL": self.control, "SLURM_CONF": self.slurm.conf}
        e.update(env or {})
        s = Serve(args, env=e)
        self.addCleanup(s.stop)
        s.wait_healthy()
        return s

    def inject(self, lines):
        inject(self.control, lines)
        return time.time()

    def counter(self, s, action, result):
        _, _, text = s.get("/metrics")
        m = re.search(r'^gpuscope_remediation_actions_total\{action="%s",result="%s"\} (\S+)$'
                      % (action, result), text, re.M)
        return float(m.group(1)) if m else None

    def wait_counter(self, s, action, result, value):
        """The counter shows `value` (it is published with the next cycle)."""
        wait_until(lambda: self.counter(s, action, result) == value,
                   "gpuscope_remediation_actions_total{action=%s,result=%s} == %s (is %s)"
                   % (action, result, value, self.counter(s, action, result)), timeout=10)

    def test_healthy_node_never_touched(self):
        s = self.serve("--remediate-resume-after", "1s")
        time.sleep(4)  # past the resume time: the one look at the node happens
        check(actions(s) == [], "no action on a healthy node: %s" % actions(s))
        check(self.slurm.node(NODE) == ("idle", ""), "node untouched: %s" %
              (self.slurm.node(NODE),))
        check(self.counter(s, "drain", "ok") == 0, "counter exported at 0")

    def test_dry_run_changes_nothing(self):
        s = self.serve("--remediate-dry-run")
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "dry_run")
        line = [x for x in s.output().splitlines() if "result=dry_run" in x][0]
        check("would drain" in line and "XID 79 on GPU 1" in line, line)
        time.sleep(1)
        check(self.slurm.node(NODE) == ("idle", ""), "dry run changed the node: %s" %
              (self.slurm.node(NODE),))
        self.wait_counter(s, "drain", "dry_run", 1)
        check(self.counter(s, "drain", "ok") == 0, "nothing done")

    def test_drains_on_xid79_then_resumes(self):
        s = self.serve()
        injected = self.inject(XID79_ON_GPU1)
        wait_until(lambda: self.slurm.node(NODE)[0].startswith("drain"), "drained", timeout=30)
        took = time.time() - injected
        state, reason = self.slurm.node(NODE)
        check(reason.startswith("gpuscope: XID 79 on GPU 1 (GPU-") and
              reason.endswith("/docs/runbooks/GpuFallenOffBus.md"), "reason %r" % reason)
        check(took < 30, "drained %.1f s after XID 79" % took)
        wait_action(s, "drain", "ok")
        time.sleep(1.5)
        check(actions(s).count(("drain", "ok")) == 1, "one drain: %s" % actions(s))
        self.inject(RECOVER_GPU1)
        wait_until(lambda: self.slurm.node(NODE) == ("idle", ""), "resumed after recovery",
                   timeout=40)
        wait_action(s, "resume", "ok")
        self.wait_counter(s, "drain", "ok", 1)
        self.wait_counter(s, "resume", "ok", 1)

    def test_admin_drain_left_alone(self):
        self.slurm.drain(NODE, "alice: bad DIMM")
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "admin_drain")
        self.inject(RECOVER_GPU1)
        time.sleep(8)  # past recovery and the resume time
        check(self.slurm.node(NODE) == ("drained", "alice: bad DIMM"),
              "admin's drain kept: %s" % (self.slurm.node(NODE),))
        check(("resume", "ok") not in actions(s), "never resumed: %s" % actions(s))

    def test_breaker_open(self):
        self.slurm.drain("gpunode2", "gpuscope: XID 79 on GPU 0 (GPU-x) elsewhere")
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "breaker_open")
        line = [x for x in s.output().splitlines() if "result=breaker_open" in x][0]
        check("1 of 2 nodes drained by gpuscope (limit 1)" in line, line)
        check(self.slurm.node(NODE) == ("idle", ""), "not drained: %s" %
              (self.slurm.node(NODE),))
        self.wait_counter(s, "drain", "breaker_open", 1)

    def test_missing_slurm_tools(self):
        s = self.serve(env={"PATH": "/nonexistent"})
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "error")
        check("sinfo: not found in PATH" in s.output(), s.output()[-1500:])
        status, _, text = s.get("/metrics")
        check(status == 200 and "gpuscope_gpu_lost" in text, "metrics still served")

    def test_opt_out_feature(self):  # last: the feature stays on the node
        code, out = self.slurm.cmd("scontrol", "update", "nodename=" + NODE,
                                   "AvailableFeatures=gpuscope-no-remediate",
                                   "ActiveFeatures=gpuscope-no-remediate")
        check(code == 0, "scontrol features: %s" % out)
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "opted_out")
        time.sleep(1)
        check(self.slurm.node(NODE) == ("idle", ""), "opted-out node untouched: %s" %
              (self.slurm.node(NODE),))
        check(actions(s) == [("drain", "opted_out")], "refused once: %s" % actions(s))


if __name__ == "__main__":
    main()
