"""The vGPU alert rules: promtool checks their syntax and runs their unit
tests; every alert has labels.severity, a summary, a description naming the
node and GPU, and a runbook_url whose runbook exists in docs/runbooks/."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (RULE_TESTS_DIR, RULES_DIR,  # noqa: E402
                              AlertRuleFileChecks, main)


class VgpuRulesTest(AlertRuleFileChecks, unittest.TestCase):
    RULES = os.path.join(RULES_DIR, "gpu-vgpu.yml")
    TESTS = os.path.join(RULE_TESTS_DIR, "gpu-vgpu-test.yml")

    def test_group_name(self):
        self.assertEqual(self.group_names(), ["gpu-vgpu"])

    def test_every_alert_is_documented_and_labelled(self):
        self.check_alerts_documented(("critical", "warning"))

    def test_runbooks_have_the_operator_sections(self):
        self.check_runbooks_say(("gpuscope health", "## What to do"))


if __name__ == "__main__":
    main()
