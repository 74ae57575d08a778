"""The GPU efficiency alert rules: promtool checks their syntax and runs their
unit tests (each alert fires when it should and stays silent on a healthy
node); every alert has labels.severity, a summary, a description naming the
node and GPU, and a runbook_url whose runbook exists in docs/runbooks/."""
import os
import shutil
import subprocess
import unittest

import yaml

SOURCE = os.environ.get("GPUSCOPE_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RULES = os.path.join(SOURCE, "deploy", "prometheus", "rules", "gpu-efficiency.yml")
TESTS = os.path.join(SOURCE, "deploy", "prometheus", "tests", "gpu-efficiency-test.yml")
HEALTH = os.path.join(SOURCE, "deploy", "prometheus", "rules", "gpu-health.yml")
RUNBOOKS = os.path.join(SOURCE, "docs", "runbooks")
PROMTOOL = shutil.which("promtool")


def alerts(path=RULES):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


class EfficiencyRulesTest(unittest.TestCase):
    @unittest.skipUnless(PROMTOOL, "promtool not installed")
    def test_promtool_check_rules(self):
        out = subprocess.run([PROMTOOL, "check", "rules", RULES], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    @unittest.skipUnless(PROMTOOL, "promtool not installed")
    def test_promtool_unit_tests(self):
        out = subprocess.run([PROMTOOL, "test", "rules", TESTS], capture_output=True, text=True,
                             cwd=os.path.dirname(TESTS))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_group_is_separate_from_health(self):
        with open(RULES) as f:
            doc = yaml.safe_load(f)
        self.assertEqual([g["name"] for g in doc["groups"]], ["gpu-efficiency"])
        if os.path.exists(HEALTH):
            clash = {a["alert"] for a in alerts()} & {a["alert"] for a in alerts(HEALTH)}
            self.assertEqual(clash, set(), "alert names shared with gpu-health.yml")

    def test_required_alerts_exist(self):
        names = {a["alert"] for a in alerts()}
        for want in ("GpuIdleHeld", "GpuThrottledSustained", "GpuOomPredicted",
                     "GpuInterconnectSaturated", "GpuPcieLinkDowngraded"):
            self.assertIn(want, names)
        oom = [a for a in alerts() if a["alert"] == "GpuOomPredicted"][0]
        self.assertIn("gpuscope_memory_oom_eta_seconds", oom["expr"])
        self.assertIn("600", oom["expr"])  # 10 minutes
        idle = [a for a in alerts() if a["alert"] == "GpuIdleHeld"][0]
        self.assertIn("[30m]", idle["expr"])

    def test_every_alert_is_documented_and_labelled(self):
        names = [a["alert"] for a in alerts()]
        self.assertEqual(len(names), len(set(names)), "duplicate alert names")
        for a in alerts():
            name = a["alert"]
            self.assertIn(a["labels"]["severity"], ("warning", "info"), name)
            ann = a["annotations"]
            self.assertTrue(ann.get("summary"), name)
            self.assertIn("$labels.instance", ann["description"], name)
            self.assertIn("$labels.gpu", ann["description"], name)
            url = ann["runbook_url"]
            self.assertTrue(url.endswith("/docs/runbooks/%s.md" % name), url)
            path = os.path.join(RUNBOOKS, name + ".md")
            self.assertTrue(os.path.isfile(path), "missing runbook " + path)
            with open(path) as f:
                text = f.read()
            self.assertIn("gpu-efficiency", text, path)
            for section in ("## What it means", "## How to confirm", "## What to do"):
                self.assertIn(section, text, path)

    def test_every_alert_has_a_firing_and_a_silent_unit_test(self):
        with open(TESTS) as f:
            doc = yaml.safe_load(f)
        fired, silent_on_healthy = set(), set()
        for t in doc["tests"]:
            for c in t["alert_rule_test"]:
                if c.get("exp_alerts"):
                    fired.add(c["alertname"])
                elif t["name"].startswith("healthy"):
                    silent_on_healthy.add(c["alertname"])
        names = {a["alert"] for a in alerts()}
        self.assertEqual(names - fired, set(), "alerts without a firing test")
        self.assertEqual(names - silent_on_healthy, set(), "alerts without a healthy-node test")


if __name__ == "__main__":
    unittest.main()
