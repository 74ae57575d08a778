"""The GPU health alert rules: promtool checks their syntax and runs their unit
tests (each alert fires on its fault series and stays silent on a healthy
node); every alert has labels.severity, a summary, a description naming the
node and GPU, and a runbook_url whose runbook exists in docs/runbooks/."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (RULE_TESTS_DIR, RULES_DIR,  # noqa: E402
                              AlertRuleFileChecks, main)


class HealthRulesTest(AlertRuleFileChecks, unittest.TestCase):
    RULES = os.path.join(RULES_DIR, "gpu-health.yml")
    TESTS = os.path.join(RULE_TESTS_DIR, "gpu-health-test.yml")

    def test_group_name(self):
        self.assertEqual(self.group_names(), ["gpu-health"])

    def test_every_alert_is_documented_and_labelled(self):
        # GpuMissing and GpuExporterDown are node-level: no gpu label.
        self.check_alerts_documented(("critical", "warning"),
                                     node_level=("GpuMissing", "GpuExporterDown"))

    def test_lost_gpu_alert_is_immediate(self):
        # The fire drill expects an alert for gpu="3" soon after gpuscope_gpu_lost == 1.
        lost = [a for a in self.alerts() if a["alert"] == "GpuFallenOffBus"][0]
        self.assertIn("gpuscope_gpu_lost", lost["expr"])
        self.assertIn(lost.get("for", "0s"), ("0s", "0m"))

    def test_runbooks_have_the_operator_sections(self):
        self.check_runbooks_say(("gpuscope health", "## What to do"))


if __name__ == "__main__":
    main()
