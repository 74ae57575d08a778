"""`gpuscope diagnose` on the four classic scenarios of sim/scenarios/diagnosis/:
the command samples 5 minutes of scenario time offline (stepping the
simulator's clock) and prints each GPU's verdict with its numbers, evidence and
action; --json gives the same as a document."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE as BINARY, SOURCE_DIR, main  # noqa: E402

SCENARIOS = os.path.join(SOURCE_DIR, "sim", "scenarios", "diagnosis")


def diagnose(scenario, *extra):
    # The classic scenarios tell their onset from 0 s: --at 5m ends the window
    # there, [0 s, 5 min] (the default moment, 5 min after the last change,
    # would start the window at classic-thermal's onset at 30 s).
    cmd = [BINARY, "diagnose", "--simulate", os.path.join(SCENARIOS, scenario + ".yaml"),
           "--window", "5m", "--at", "5m", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class DiagnoseCommandTest(unittest.TestCase):
    def test_help(self):
        # A broken `diagnose --help` is a failure (it once made the whole
        # file skip silently).
        out = subprocess.run([BINARY, "diagnose", "--help"], capture_output=True, text=True,
                             timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("--window", out.stdout)

    def findings(self, scenario):
        out = diagnose(scenario, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        doc = json.loads(out.stdout)
        self.assertEqual(len(doc["gpus"]), 1)
        gpu = doc["gpus"][0]
        self.assertGreaterEqual(gpu["window_seconds"], 290)
        return {f["kind"]: f for f in gpu["findings"]}

    def test_compute_bound(self):
        f = self.findings("classic-compute-bound")
        self.assertEqual(set(f), {"compute_bound"})
        self.assertIn("SM active 8", f["compute_bound"]["verdict"])
        self.assertGreater(f["compute_bound"]["confidence"], 0.8)

    def test_memory_bound_with_oom_trend(self):
        f = self.findings("classic-memory-oom")
        self.assertEqual(set(f), {"memory_bandwidth", "memory_capacity"})
        self.assertIn("DRAM busy 88%", f["memory_bandwidth"]["verdict"])
        eta = f["memory_capacity"]["oom_eta_seconds"]
        self.assertTrue(300 < eta < 600, eta)  # ~7.5 minutes after the 5-minute mark
        self.assertIn("growing 48 MiB/s", f["memory_capacity"]["verdict"])

    def test_thermal_throttling(self):
        f = self.findings("classic-thermal")
        self.assertEqual(set(f), {"thermal_throttle"})
        t = f["thermal_throttle"]
        self.assertIn("against slowdown at 89 C", t["verdict"])
        # From its maximum: 1980 MHz at 1 s; 1979 when the first 20 s bucket
        # of the tiered window averages in the idle first sample.
        self.assertRegex(t["verdict"], r"SM clock falling 19(80|79) ->")
        share = [e for e in t["evidence"] if e["signal"] == "thermal_reason_share"][0]
        self.assertGreater(share["value"], 0.5)
        self.assertEqual(share["threshold"], 0.1)

    def test_pcie_bottleneck(self):
        f = self.findings("classic-pcie")
        self.assertEqual(set(f), {"interconnect_bound", "pcie_degraded"})
        self.assertIn("PCIe at 7.0 GB/s of 7.9 GB/s", f["interconnect_bound"]["verdict"])
        self.assertIn("Gen3 x8 of Gen5 x16", f["pcie_degraded"]["verdict"])

    def test_text_report(self):
        out = diagnose("classic-thermal")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("GPU 0: NVIDIA H100 80GB HBM3", out.stdout)
        self.assertIn("[thermal_throttle] confidence", out.stdout)
        self.assertIn("evidence: thermal_reason_share", out.stdout)
        self.assertIn("action: ", out.stdout)


if __name__ == "__main__":
    main()
