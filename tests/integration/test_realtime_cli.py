#!/usr/bin/env python3
"""The real-time paths of the CLI, through the binary, as users run them:

- `gpuscope diagnose --live`: the live sampler (once a second of wall time,
  what every user on a real driver gets; on the simulator diagnose otherwise
  steps the clock offline) on sped-up scenarios (GPUSCOPE_SIM_TIME_SCALE=10)
  with a 40 s window, a little over the 30 s that gives verdicts: a steady
  compute-bound H100, and a cooling failure that heats the GPU into thermal
  throttling within the window's 400 scenario seconds. Both run at once.
- `gpuscope health` on a faulty scenario (a remap failure on GPU 1): exit 2,
  the failing memory check named on GPU 1, GPU 0 ok.
- `gpuscope health --watch 5` on a PCIe replay storm: the second sample gives
  the replay rate against the link's limit (one sample alone cannot), the
  pcie check warns (exit 0, 1 with --strict).

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~50 s.
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, check, check_exit, clean_env,  # noqa: E402
                              run, main)

DIAGNOSIS = os.path.join(SOURCE_DIR, "sim", "scenarios", "diagnosis")
HEALTH = os.path.join(SOURCE_DIR, "sim", "scenarios", "health")
AFTER_FAULTS = {"GPUSCOPE_SIM_START_TIME": "20"}  # the health scenarios' faults hit at 10 s
WINDOW_S = 40  # min_span_seconds is 30: room for late samples on a loaded machine


def start_live_diagnose(scenario, time_scale):
    cmd = [GPUSCOPE, "diagnose", "--live", "--json", "--window", "%ds" % WINDOW_S,
           "--simulate", os.path.join(DIAGNOSIS, scenario + ".yaml")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env({"GPUSCOPE_SIM_TIME_SCALE": str(time_scale)}))


def live_findings(proc, what):
    out, err = proc.communicate(timeout=WINDOW_S + 120)
    check_exit("diagnose --live " + what, proc.returncode, err)
    check("sampling for %d s" % WINDOW_S in err, "%s: not sampled live: %r" % (what, err))
    doc = json.loads(out)
    check(len(doc["gpus"]) == 1, doc)
    gpu = doc["gpus"][0]
    # Sampled in real time: the window spans wall seconds, not scenario ones.
    check(WINDOW_S - 5 <= gpu["window_seconds"] <= WINDOW_S + 1, gpu["window_seconds"])
    return {f["kind"]: f for f in gpu["findings"]}


def health_json(args, env):
    code, out, err = run(["health", "--json"] + args, env=env, timeout=60)
    return code, json.loads(out), err


def checks_of(gpu):
    return gpu["checks"]


class RealtimeCliTest(unittest.TestCase):
    def test_health_fault(self):
        scenario = ["--simulate", os.path.join(HEALTH, "row-remap-failure.yaml")]
        code, out, err = run(["health"] + scenario, env=AFTER_FAULTS, timeout=60)
        check(code == 20, "health on a remap failure: exit %d, want 20:\n%s%s" % (code, out, err))
        check("GPU 1" in out and "FAIL" in out and "memory" in out, "text report:\n" + out)
        code, doc, _ = health_json(scenario, AFTER_FAULTS)
        check(code == 20 and doc["verdict"] == "fail", (code, doc["verdict"]))
        gpus = {g["gpu"]: g for g in doc["gpus"]}
        check(gpus[1]["verdict"] == "fail" and checks_of(gpus[1])["memory"]["verdict"] == "fail",
              gpus[1])
        check(gpus[0]["verdict"] == "ok", gpus[0])

    def test_health_watch(self):
        scenario = ["--simulate", os.path.join(HEALTH, "pcie-replay-storm.yaml")]
        _, once, _ = health_json(scenario, AFTER_FAULTS)
        once_pcie = checks_of({g["gpu"]: g for g in once["gpus"]}[1])["pcie"]
        check("a rate needs a later sample" in json.dumps(once_pcie), once_pcie)
        code, doc, err = health_json(["--watch", "5", "--count", "1"] + scenario, AFTER_FAULTS)
        check(code == 0, "a warning exits 0: %d %s" % (code, err))
        gpus = {g["gpu"]: g for g in doc["gpus"]}
        pcie = checks_of(gpus[1])["pcie"]
        check(pcie["verdict"] == "warn", pcie)
        evidence = json.dumps(pcie)
        check("PCIe replays" in evidence and "/min, limit 4/min (Gen3 x8" in evidence, evidence)
        check(checks_of(gpus[0])["pcie"]["verdict"] == "ok", gpus[0])
        code, _, _ = run(["health", "--strict", "--watch", "5", "--count", "1"] + scenario,
                         env=AFTER_FAULTS,
                         timeout=60)
        check(code == 1, "--strict --watch on a warning: exit %d, want 1" % code)

    def test_diagnose_live(self):
        compute = start_live_diagnose("classic-compute-bound", 10)
        thermal = start_live_diagnose("classic-thermal", 10)
        f = live_findings(compute, "classic-compute-bound")
        check(set(f) == {"compute_bound"}, "compute-bound verdicts: %s" % f)
        check("SM active 8" in f["compute_bound"]["verdict"], f["compute_bound"]["verdict"])
        f = live_findings(thermal, "classic-thermal")
        check("thermal_throttle" in f, "thermal verdicts: %s" % f)


if __name__ == "__main__":
    main()
