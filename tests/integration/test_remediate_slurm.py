#!/usr/bin/env python3
"""`gpuscope serve --remediate slurm` against a real Slurm on localhost
(Debian's slurmctld, slurmd and munge, started here as root in a temp folder:
a two-node slurm.conf, gpunode1 with a slurmd and two GPUs in gres.conf
backed by character devices made with mknod, gpunode2 without one, DOWN).
The agent runs on the simulator; faults are injected through its control file.

  - a healthy node is never touched (no action logged, node idle, no reason);
  - dry run: XID 79 logs and counts the intended drain and changes nothing;
  - an XID storm (1,000 XID 95s a second, issue 42) is one dry-run decision;
  - a real run drains within 30 s of XID 79 with a reason naming it, once,
    and resumes its own drain once the GPU is back and healthy for
    --remediate-resume-after;
  - an admin's drain is left alone (neither overwritten nor resumed); so is an
    admin's FAIL or DOWN (sinfo says "fail", "down", no "drain": issue 39);
  - the breaker's arbitration: another agent's drain lands between our read
    and our drain; ours ranks second, is undone and counted as breaker_open;
  - restarted with a GPU missing, the agent does not resume its drain (the
    reason carries the GPU count);
  - circuit breaker: with gpunode2 drained by gpuscope (1 of 2 nodes, limit
    1) the drain is refused, logged and counted as breaker_open;
  - scontrol/sinfo missing: a clear error, and /metrics keeps answering;
  - a node with the feature gpuscope-no-remediate is never drained (opted_out).

Skips (fails under CI=true) when the Slurm daemons cannot start here.
"""
import os
import re
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, wait_until  # noqa: E402
from local_slurm import NODE, LocalSlurm  # noqa: E402
from remediate_common import (FAST, RECOVER_GPU1, XID79_ON_GPU1, actions, inject,  # noqa: E402
                              wait_action, write_scenario)


class RemediateSlurmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.slurm = LocalSlurm.started(gpus=2, extra_conf=[
            "NodeName=gpunode2 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 "
            "RealMemory=100 State=DOWN"])
        cls.tmp = cls.slurm.root
        cls.scenario = write_scenario(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        cls.slurm.close()

    def setUp(self):
        for node in (NODE, "gpunode2"):
            state, _ = self.slurm.node(node)
            if "drain" in state or (node == NODE and state != "idle"):
                self.slurm.resume(node)
        wait_until(lambda: self.slurm.node(NODE) == ("idle", ""), "%s idle" % NODE, timeout=20)
        self.slurm.drain("gpunode2", "down: no slurmd in this test")  # not ours

    def serve(self, *extra, env=None, scenario=None):
        self.control = os.path.join(self.tmp, "control-%s" % self._testMethodName)
        open(self.control, "w").close()
        args = ["--simulate", scenario or self.scenario, "--remediate", "slurm",
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

    def test_xid_storm_decides_once(self):
        """An XID storm (issue 42): 1,000 XID 95s a second on GPU 1 for 5 s (dry run) is one
        fault, decided once, not one decision per event or cycle."""
        s = self.serve("--remediate-dry-run")
        self.inject(["inject 1 xid-storm 95 1000"])
        wait_action(s, "drain", "dry_run")
        time.sleep(5)
        self.inject(["clear 1 xid-storm"])
        time.sleep(1)
        check(actions(s) == [("drain", "dry_run")], "one decision: %s" % actions(s))
        self.wait_counter(s, "drain", "dry_run", 1)
        check(self.slurm.node(NODE) == ("idle", ""), "dry run changed the node")

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

    def test_fabric_dry_run_only_when_named_and_never_while_registering(self):
        """GB200: a registration in progress (a booting node's link training) never
        acts; an unhealthy fabric route acts once fabric_unusable is named."""
        scenario = os.path.join(self.tmp, "two-gb200.yaml")
        with open(scenario, "w") as f:
            f.write("gpus:\n  - model: gb200\n    count: 2\n"
                    "    workload: [{at: 0, kind: training}]\n")
        s = self.serve("--remediate-dry-run", "--remediate-findings", "default,fabric_unusable",
                       scenario=scenario)
        self.inject(["inject 0 fabric state in-progress", "inject 1 nvlink-down all 30"])
        time.sleep(3)
        check(actions(s) == [], "registering or training: no action: %s" % actions(s))
        self.inject(["inject 1 fabric route-unhealthy"])
        wait_action(s, "drain", "dry_run")
        line = [x for x in s.output().splitlines() if "result=dry_run" in x][0]
        check("NVLink fabric unusable on GPU 1" in line and "GpuFabricUnhealthy.md" in line, line)
        check(self.slurm.node(NODE) == ("idle", ""), "dry run changed the node")

    def test_drains_on_xid79_then_resumes(self):
        s = self.serve()
        injected = self.inject(XID79_ON_GPU1)
        wait_until(lambda: self.slurm.node(NODE)[0].startswith("drain"), "drained", timeout=30)
        took = time.time() - injected
        state, reason = self.slurm.node(NODE)
        check(reason.startswith("gpuscope: XID 79 on GPU 1 (GPU-") and
              reason.endswith("/runbooks/GpuFallenOffBus.md"), "reason %r" % reason)
        check(took < 30, "drained %.1f s after XID 79" % took)
        wait_action(s, "drain", "ok")
        print("drained %.2f s after XID 79, arbitrated (result=ok) %.2f s after" %
              (took, time.time() - injected))
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

    def test_admin_down_or_fail_left_alone(self):
        """issue 39: sinfo shows an admin's DOWN or FAIL without "drain": the
        agent drained over alice's reason, then resumed the node to idle."""
        alice = "alice: PSU swap, keep out"
        for state in ("fail", "down"):
            code, out = self.slurm.cmd("scontrol", "update", "nodename=" + NODE,
                                       "state=" + state, "reason=" + alice)
            check(code == 0, "scontrol %s: %s" % (state, out))
            s = self.serve()
            self.inject(XID79_ON_GPU1)
            wait_action(s, "drain", "admin_drain")
            self.wait_counter(s, "drain", "admin_drain", 1)
            line = [x for x in s.output().splitlines() if "result=admin_drain" in x][0]
            check("state '%s" % state in line and alice in line, line)
            check(self.slurm.node(NODE) == (state, alice), "alice's %s kept: %s" %
                  (state, self.slurm.node(NODE)))
            self.inject(RECOVER_GPU1)
            time.sleep(8)  # past recovery and the resume time
            check(("drain", "ok") not in actions(s) and ("resume", "ok") not in actions(s),
                  "never drained nor resumed: %s" % actions(s))
            if state == "fail":  # FAIL stays until a person resumes the node
                check(self.slurm.node(NODE) == (state, alice), "still %s after recovery: %s" %
                      (state, self.slurm.node(NODE)))
            # (ReturnToService=2 lets slurmctld itself return a DOWN node
            # whose slurmd answers: not gpuscope's doing, as the log shows.)
            check(not self.slurm.node(NODE)[1].startswith("gpuscope:"), "never ours: %s" %
                  (self.slurm.node(NODE),))
            s.stop()
            self.slurm.resume(NODE)
            wait_until(lambda: self.slurm.node(NODE) == ("idle", ""), "idle", timeout=20)

    def test_breaker_race_loser_undoes_its_drain(self):
        """Another agent (played by a wrapper around scontrol) drains gpunode2
        after our read and a second before our drain: both saw the breaker
        closed, ours ranks second by slurmctld's reason time and is undone."""
        shim = os.path.join(self.tmp, "shim")
        os.makedirs(shim, exist_ok=True)
        real = shutil.which("scontrol")
        with open(os.path.join(shim, "scontrol"), "w") as f:
            f.write('#!/bin/sh\ncase "$*" in *"nodename=%s state=drain"*)\n'
                    '  %s update nodename=gpunode2 state=drain '
                    '"reason=gpuscope: XID 79 on GPU 0 (GPU-x) racing agent"\n'
                    '  sleep 1.1;;\nesac\nexec %s "$@"\n' % (NODE, real, real))
        os.chmod(os.path.join(shim, "scontrol"), 0o755)
        s = self.serve(env={"PATH": shim + ":" + os.environ["PATH"]})
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "breaker_open")
        line = [x for x in s.output().splitlines() if "result=breaker_open" in x][0]
        check("lost the race" in line, line)
        wait_until(lambda: self.slurm.node(NODE) == ("idle", ""), "our drain undone", timeout=10)
        check(self.slurm.node("gpunode2")[1].startswith("gpuscope: XID 79 on GPU 0"),
              "the winner keeps its drain: %s" % (self.slurm.node("gpunode2"),))
        self.wait_counter(s, "drain", "breaker_open", 1)
        check(self.counter(s, "drain", "ok") == 0, "not counted as a drain")

    def test_restart_with_a_gpu_missing_does_not_resume(self):
        """issue 39: the restarted agent forgot the node had two GPUs and
        resumed its "GPU lost" drain with one still absent."""
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_until(lambda: self.slurm.node(NODE)[0].startswith("drain"), "drained", timeout=30)
        check(" of 2 GPUs " in self.slurm.node(NODE)[1], "count in the reason: %s" %
              (self.slurm.node(NODE),))
        s.stop()
        one_gpu = os.path.join(self.tmp, "one-h100.yaml")
        with open(self.scenario) as f, open(one_gpu, "w") as out:
            out.write(f.read().replace("count: 2", "count: 1"))
        s = self.serve(scenario=one_gpu)
        time.sleep(8)  # past the resume time (3 s), healthy but for the missing GPU
        check(self.slurm.node(NODE)[0].startswith("drain"), "not resumed: %s" %
              (self.slurm.node(NODE),))
        check(("resume", "ok") not in actions(s), "no resume: %s" % actions(s))
        s.stop()
        s = self.serve()  # both GPUs back
        wait_until(lambda: self.slurm.node(NODE) == ("idle", ""), "resumed with both GPUs",
                   timeout=30)
        wait_action(s, "resume", "ok")

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
