"""The GPU efficiency alert rules: promtool checks their syntax and runs their
unit tests (each alert fires when it should and stays silent on a healthy
node); every alert has labels.severity, a summary, a description naming the
node and GPU, and a runbook_url whose runbook exists in docs/runbooks/."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (RULE_TESTS_DIR, RULES_DIR, AlertRuleFileChecks,  # noqa: E402
                              main)

HEALTH = os.path.join(RULES_DIR, "gpu-health.yml")


class EfficiencyRulesTest(AlertRuleFileChecks, unittest.TestCase):
    RULES = os.path.join(RULES_DIR, "gpu-efficiency.yml")
    TESTS = os.path.join(RULE_TESTS_DIR, "gpu-efficiency-test.yml")

    def test_group_is_separate_from_health(self):
        self.assertEqual(self.group_names(), ["gpu-efficiency"])
        if os.path.exists(HEALTH):
            clash = {a["alert"] for a in self.alerts()} & {a["alert"] for a in self.alerts(HEALTH)}
            self.assertEqual(clash, set(), "alert names shared with gpu-health.yml")

    def test_required_alerts_exist(self):
        names = {a["alert"] for a in self.alerts()}
        for want in ("GpuIdleHeld", "GpuThrottledSustained", "GpuOomPredicted",
                     "GpuInterconnectSaturated", "GpuPcieLinkDowngraded"):
            self.assertIn(want, names)
        oom = [a for a in self.alerts() if a["alert"] == "GpuOomPredicted"][0]
        self.assertIn("gpuscope_memory_oom_eta_seconds", oom["expr"])
        self.assertIn("600", oom["expr"])  # 10 minutes
        idle = [a for a in self.alerts() if a["alert"] == "GpuIdleHeld"][0]
        self.assertIn("[30m]", idle["expr"])

    def test_every_alert_is_documented_and_labelled(self):
        for path in self.check_alerts_documented(("warning", "info")).values():
            with open(path) as f:
                text = f.read()
            self.assertIn("gpu-efficiency", text, path)
            for section in ("## What it means", "## How to confirm", "## What to do"):
                self.assertIn(section, text, path)


if __name__ == "__main__":
    main()
