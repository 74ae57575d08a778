"""The per-workload baseline rules (deploy/prometheus/rules/gpu-baselines.yml):
promtool checks them and runs their unit tests (every alert fires when a
workload leaves its band and stays silent on healthy, daily-cycle and
warming-up workloads); each alert has a runbook and carries the baseline, the
current value and the deviation; `gpuscope baseline rules` prints the shipped
file, and its output for extra signals or another window passes promtool."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, RULE_TESTS_DIR, RULES_DIR, RUNBOOKS,  # noqa: E402
                              AlertRuleFileChecks, RUNBOOK_URL_BASE, need, need_tool, promtool,
                              run, main)


class BaselineRulesTest(AlertRuleFileChecks, unittest.TestCase):
    RULES = os.path.join(RULES_DIR, "gpu-baselines.yml")
    TESTS = os.path.join(RULE_TESTS_DIR, "gpu-baselines-test.yml")

    def test_groups(self):
        self.assertEqual(self.group_names(), ["gpuscope-baselines-5m", "gpuscope-baselines-14d",
                                              "gpuscope-baselines-alerts"])

    def test_every_alert_is_documented(self):
        alerts = self.alerts()
        self.assertEqual({a["alert"] for a in alerts}, {
            "GpuWorkloadSmActivityBelowBaseline", "GpuWorkloadIdleAboveBaseline",
            "GpuWorkloadTemperatureAboveBaseline", "GpuWorkloadThrottleAboveBaseline"})
        for a in alerts:
            name, ann = a["alert"], a["annotations"]
            self.assertEqual(a["labels"]["severity"], "warning")
            self.assertIn(a["labels"]["side"], ("efficiency", "health"))
            for key in ("summary", "description", "baseline", "current", "deviation"):
                self.assertTrue(ann.get(key), "%s: %s" % (name, key))
            self.assertIn("warming_up_14d", a["expr"], name)
            self.assertEqual(ann["runbook_url"], RUNBOOK_URL_BASE + name + ".md")
            with open(os.path.join(RUNBOOKS, name + ".md")) as f:
                text = f.read()
            for section in ("## What it means", "## How to confirm", "## What to do"):
                self.assertIn(section, text, name)

    def test_cli_prints_the_shipped_file(self):
        need(os.path.exists(GPUSCOPE), "gpuscope is not built", setup_installs=False)
        rc, out, err = run(["baseline", "rules"])
        self.assertEqual(rc, 0, err)
        with open(self.RULES) as f:
            self.assertEqual(out, f.read(), "regenerate gpu-baselines.yml")

    def test_cli_rules_for_extra_signals_and_another_window_pass_promtool(self):
        need(os.path.exists(GPUSCOPE), "gpuscope is not built", setup_installs=False)
        need_tool("promtool", "prometheus")
        rc, out, err = run(["baseline", "rules", "--window", "28d", "--warmup", "10d",
                            "--sustain", "30m", "--signal",
                            'step_time_seconds:rising:0.005:avg_over_time('
                            'app_step_time_seconds{workload!=""}[5m])',
                            "--signal", "tokens_per_second:falling:50:rate("
                            'app_tokens_total{workload!=""}[5m])'])
        self.assertEqual(rc, 0, err)
        self.assertIn("GpuWorkloadStepTimeSecondsAboveBaseline", out)
        self.assertIn("GpuWorkloadTokensPerSecondBelowBaseline", out)
        self.assertIn("gpuscope:workload_signal:p95_28d", out)
        with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
            f.write(out)
            f.flush()
            rc, text = promtool(["check", "rules", f.name])
        self.assertEqual(rc, 0, text)
        rc, _, err = run(["baseline", "rules", "--signal", "bad"])
        self.assertNotEqual(rc, 0)
        self.assertIn("NAME:DIRECTION:FLOOR:EXPR", err)


if __name__ == "__main__":
    main()
