"""Per-workload baselines over 14 days of simulator history, in a real
Prometheus (tests/integration/baseline_history.py builds it: the generator
steps the simulator at 1-minute resolution through the agent's sampler and
renderer; promtool backfills the raw series and then the recording rules).

The history (tests/integration/baselines/history.yaml):
  (a) steady training on H100                        ml/llm-train
  (b) inference following the day                    serve/chat-api
  (c) training whose SM activity drops 25% on day 14 ml/vision-train
  (d) the same training as (a) moved to A100 on day 10
  (e) training whose temperature creeps up 6 C over the last 2 days

Asserted: deviation alerts fire for (c) and (e) only; (b) stays silent;
(d) has a fresh A100 baseline that is warming up, and no alert."""
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, GPUSCOPE, SOURCE_DIR, need, need_tool,  # noqa: E402
                              RUNBOOK_URL_BASE, run, main, wait_until)

A100 = "NVIDIA A100-SXM4-80GB"
H100 = "NVIDIA H100 80GB HBM3"


class BaselineHistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need_tool("promtool", "prometheus")
        need_tool("prometheus", "prometheus")
        import baseline_history as bh
        need(os.path.exists(bh.GENERATOR), "gpuscope_baseline_history is not built",
             setup_installs=False)
        cls.bh = bh
        cls.tmp = tempfile.TemporaryDirectory(dir=BUILD_DIR, prefix="baseline-history-")
        # The alerts read the window group's last 2 hours: backfill 3.
        cls.history = bh.History(cls.tmp.name, baseline_hours=3)
        cls.prom = cls.history.prom
        print("timings (s):", {k: round(v, 1) for k, v in cls.history.timings.items()},
              file=sys.stderr)
        # The alert group has been evaluated once on the loaded history.
        wait_until(cls.alerts_evaluated, "the baseline alert group's first evaluation", 90)

    @classmethod
    def tearDownClass(cls):
        cls.history.close()
        cls.tmp.cleanup()

    @classmethod
    def alerts_evaluated(cls):
        for g in cls.prom.api("/api/v1/rules", {})["groups"]:
            if g["name"] == "gpuscope-baselines-alerts":
                return not g["lastEvaluation"].startswith("0001")
        return False

    def firing(self):
        out = set()
        for a in self.prom.api("/api/v1/alerts", {})["alerts"]:
            if a["state"] == "firing":
                out.add((a["labels"]["alertname"], a["labels"]["workload"], a["labels"]["model"]))
        return out

    def test_deviation_alerts_fire_for_c_and_e_only(self):
        self.assertEqual(self.firing(), {
            ("GpuWorkloadSmActivityBelowBaseline", "vision-train", H100),
            ("GpuWorkloadTemperatureAboveBaseline", "speech-train", H100),
        })

    def test_annotations_carry_baseline_current_and_deviation(self):
        alerts = {a["labels"]["alertname"]: a
                  for a in self.prom.api("/api/v1/alerts", {})["alerts"]}
        sm = alerts["GpuWorkloadSmActivityBelowBaseline"]["annotations"]
        self.assertRegex(sm["baseline"], r"^median 8\d(\.\d+)?%, p5 .*, p95 .*, spread .* over 14 days$")
        self.assertRegex(sm["current"], r"^6\d(\.\d+)?%$")
        self.assertRegex(sm["deviation"], r"^-\d+\.\d spreads \(alert at -3\)$")
        self.assertIn("sim-node:9400 GPU 4", sm["description"])
        temp = alerts["GpuWorkloadTemperatureAboveBaseline"]["annotations"]
        self.assertRegex(temp["current"], r"^(6\d|7\d)\.\d C$")
        self.assertEqual(temp["runbook_url"],
                         RUNBOOK_URL_BASE + "GpuWorkloadTemperatureAboveBaseline.md")

    def test_moved_workload_has_a_fresh_a100_baseline_warming_up(self):
        warm = {(r["metric"]["model"], r["metric"]["signal"]): float(r["value"][1])
                for r in self.prom.query(
                    'last_over_time(gpuscope:workload_baseline:warming_up_14d'
                    '{workload="llm-train"}[2h])')}
        self.assertEqual(warm[(A100, "sm_active")], 1)
        self.assertEqual(warm[(H100, "sm_active")], 0)
        days = self.prom.query('last_over_time(gpuscope:workload_baseline:history_days_14d'
                               '{workload="llm-train",signal="sm_active"}[2h])')
        by_model = {r["metric"]["model"]: float(r["value"][1]) for r in days}
        self.assertAlmostEqual(by_model[A100], 4, delta=0.1)
        self.assertAlmostEqual(by_model[H100], 14, delta=0.1)

    def test_daily_cycle_stays_inside_its_band(self):
        # (b)'s SM activity swings with the day, yet its lowest hour of the
        # last day is not 3 spreads below its median.
        lowest = self.prom.query(
            'min_over_time(gpuscope:workload_signal:avg5m{workload="chat-api",signal="sm_active"}'
            '[1d])')[0]
        p50 = self.prom.query('last_over_time(gpuscope:workload_signal:p50_14d'
                              '{workload="chat-api",signal="sm_active"}[2h])')[0]
        p5 = self.prom.query('last_over_time(gpuscope:workload_signal:p5_14d'
                             '{workload="chat-api",signal="sm_active"}[2h])')[0]
        spread = self.prom.query('last_over_time(gpuscope:workload_signal:spread_14d'
                                 '{workload="chat-api",signal="sm_active"}[2h])')[0]
        low, mid, band, s = (float(x["value"][1]) for x in (lowest, p50, p5, spread))
        self.assertLess(low, band, "the trough dips below p5 every day")
        self.assertGreater((low - mid) / s, -3, "yet stays within 3 spreads")

    def test_every_dashboard_query_returns_data(self):
        # The Baselines dashboard as Grafana draws it: each variable has
        # values, and each panel query has data over the last hour of the
        # history (its variables set to "All"). test_fleet cannot check it:
        # its agents run for a minute, not 14 days.
        import json
        import re
        path = os.path.join(SOURCE_DIR, "deploy", "grafana", "dashboards", "baselines.json")
        with open(path) as f:
            dash = json.load(f)
        span = {"start": self.history.end - 3600, "end": int(time.time()), "step": 60}
        used = set()
        panels = [q for p in dash["panels"] for q in [p] + p.get("panels", [])]
        for panel in panels:
            for target in panel.get("targets", []):
                used.update(re.findall(r"\$(\w+)", target["expr"]))
                expr = re.sub(r"\$\w+", ".*", target["expr"])
                result = self.prom.api("/api/v1/query_range", dict(span, query=expr))["result"]
                self.assertTrue(result, f"'{panel['title']}' has no data: {expr}")
        for var in dash["templating"]["list"]:
            if var["type"] != "query" or var["name"] not in used:
                continue
            metric, label = var["query"]["query"][len("label_values("):-1].rsplit(",", 1)
            metric = re.sub(r"\$\w+", ".*", metric)
            values = self.prom.api(f"/api/v1/label/{label.strip()}/values",
                                   {"match[]": metric, "start": span["start"]})
            self.assertTrue(values, f"variable {var['name']} has no values")

    def test_cli_report(self):
        need(os.path.exists(GPUSCOPE), "gpuscope is not built", setup_installs=False)
        rc, out, err = run(["baseline", "--prometheus", self.prom.base, "--json"], timeout=60)
        self.assertEqual(rc, 0, err)
        import json
        rows = {(r["workload"], r["model"], r["signal"]): r for r in json.loads(out)["baselines"]}
        self.assertEqual(rows[("vision-train", H100, "sm_active")]["verdict"], "below")
        self.assertEqual(rows[("speech-train", H100, "temperature_celsius")]["verdict"], "above")
        self.assertEqual(rows[("llm-train", A100, "sm_active")]["verdict"], "warming-up")
        self.assertEqual(rows[("llm-train", H100, "sm_active")]["verdict"], "normal")
        self.assertNotIn(rows[("chat-api", H100, "sm_active")]["verdict"], ("below", "above"))
        rc, text, err = run(["baseline", "--prometheus", self.prom.base,
                             "--workload", "vision-train"], timeout=60)
        self.assertEqual(rc, 0, err)
        self.assertIn("ml/vision-train", text)
        self.assertNotIn("llm-train", text)
        self.assertRegex(text, r"sm_active .* below")


if __name__ == "__main__":
    main()
