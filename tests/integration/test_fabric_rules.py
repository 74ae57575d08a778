"""The NVLink fabric alert rules (GB200 NVL72): promtool checks their syntax and
runs their unit tests (each fabric fault fires; a healthy GB200, a GPU outside
any fabric and a node whose registration is in progress for two minutes after
boot stay silent); every alert is labelled and has a runbook with the operator
sections; the rules read only the gpuscope_fabric_* series the agent exports."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (RULE_TESTS_DIR, RULES_DIR,  # noqa: E402
                              AlertRuleFileChecks, main)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FabricRulesTest(AlertRuleFileChecks, unittest.TestCase):
    RULES = os.path.join(RULES_DIR, "gpu-fabric.yml")
    TESTS = os.path.join(RULE_TESTS_DIR, "gpu-fabric-test.yml")

    def test_group_name(self):
        self.assertEqual(self.group_names(), ["gpu-fabric"])

    def test_every_alert_is_documented_and_labelled(self):
        self.check_alerts_documented(("critical", "warning"))

    def test_runbooks_have_the_operator_sections(self):
        self.check_runbooks_say(("gpuscope health", "## What to do", "simulator"))

    def test_registration_in_progress_has_time_to_train(self):
        # Link training after a reboot takes about a minute: the alert waits longer.
        unhealthy = [a for a in self.alerts() if a["alert"] == "GpuFabricUnhealthy"][0]
        self.assertEqual(unhealthy["for"], "5m")

    def test_rules_read_exported_families(self):
        with open(os.path.join(ROOT, "src", "collect", "catalog_rows.h")) as f:
            catalog = f.read()
        for a in self.alerts():
            for name in set(re.findall(r"gpuscope_fabric_\w+", a["expr"])):
                self.assertIn('"%s"' % name, catalog, name)


if __name__ == "__main__":
    main()
