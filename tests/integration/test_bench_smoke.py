#!/usr/bin/env python3
"""Smoke run of the benchmarks: checks that they run and report, not speed.

- gpuscope_bench's micro-benchmarks with a tiny minimum time, as JSON: every
  expected benchmark is there with a positive time, and the render benchmark
  reports a non-trivial body;
- gpuscope_bench --mode=counters lists catalog metrics with their types (the
  harness then serves with it, so serve accepting it is checked there);
- gpuscope_bench --mode=detection: every kind of the onset scenarios is found
  by diagnose and exported by serve within its target (scenario seconds:
  60 s, idle_held 210 s; issue 40);
- bench/harness.py --smoke (every stage for a second or two, callgrind off):
  the JSON and the markdown report are well formed and hold every section.

In a sanitizer build the detection and harness parts are skipped (minutes under
ASan; the release build runs them, and analysis.Detection runs the detection
cases under ASan). Skipped (exit 77, ctest "Skipped") where gpuscope_bench was not built (no
Google Benchmark) or a peer tool (wrk, nginx, prometheus-node-exporter) is
missing; under CI=true either is a failure (scripts/setup.sh installs them).
Run: GPUSCOPE_BUILD_DIR=build/release GPUSCOPE_SOURCE_DIR=. python3 tests/integration/test_bench_smoke.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import need, need_tool, main, sanitized  # noqa: E402

SRC = os.path.abspath(os.environ.get(
    "GPUSCOPE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.path.abspath(os.environ.get("GPUSCOPE_BUILD_DIR", os.path.join(SRC, "build", "release")))
BENCH = os.path.join(BUILD, "gpuscope_bench")
HARNESS = os.path.join(SRC, "bench", "harness.py")
TOOLS = [("wrk", "wrk"), ("/usr/sbin/nginx", "nginx-light"),
         ("/usr/bin/prometheus-node-exporter", "prometheus-node-exporter")]


def need_bench():
    need(os.access(BENCH, os.X_OK), "gpuscope_bench not built (Google Benchmark, Debian "
         "package libbenchmark-dev, installed by scripts/setup.sh)")


class MicroBenchmarks(unittest.TestCase):
    def setUp(self):
        need_bench()

    def test_json_output(self):
        out = subprocess.run(
            [BENCH, "--benchmark_min_time=0.001", "--benchmark_format=json",
             "--benchmark_filter=BM_Render/8|BM_ExporterCycle/8|BM_SnapshotPublish/8|"
             "BM_ParseDefaultCounters|BM_SampleCycle/8"],
            capture_output=True, text=True, timeout=240, check=True).stdout
        data = json.loads(out)
        names = {b["name"] for b in data["benchmarks"]}
        for name in ("BM_Render/8", "BM_ExporterCycle/8/0", "BM_ExporterCycle/8/1",
                     "BM_SnapshotPublish/8",
                     "BM_ParseDefaultCounters"):
            self.assertIn(name, names)
        for b in data["benchmarks"]:
            self.assertGreater(b["real_time"], 0, b["name"])
            self.assertGreater(b["iterations"], 0, b["name"])
        render = next(b for b in data["benchmarks"] if b["name"] == "BM_Render/8")
        self.assertGreater(render["body_bytes"], 10000)
        cycle = [b for b in data["benchmarks"] if b["name"].startswith("BM_SampleCycle/8")]
        self.assertTrue(cycle)
        self.assertGreater(cycle[0]["nvml_calls_per_gpu"], 1)

    def test_counters_file_is_accepted(self):
        csv = subprocess.run([BENCH, "--mode=counters"], capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("DCGM_FI_DEV_GPU_UTIL, gauge", csv)
        self.assertIn("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter", csv)

    def test_detection_latency_meets_targets(self):
        if sanitized(BUILD):
            # Several minutes under ASan; the same cases run there as
            # analysis.Detection.LatencyFromOnsetMeetsTargets.
            self.skipTest("sanitizer build: analysis.Detection.LatencyFromOnsetMeetsTargets "
                          "runs these cases")
        out = subprocess.run([BENCH, "--mode=detection"], capture_output=True, text=True,
                             check=True).stdout
        d = json.loads(out)
        self.assertGreaterEqual(len(d["cases"]), 30)
        for kind, worst in d["worst"].items():
            target = 210 if kind == "idle_held" else 60
            self.assertLessEqual(worst["diagnose_s"], target, kind)
            self.assertLessEqual(worst["serve_s"], target, kind)
        self.assertIn("starved", d["worst"])
        self.assertIn("memory_bandwidth", d["worst"])

    def test_unknown_mode_fails(self):
        r = subprocess.run([BENCH, "--mode=nope"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown --mode", r.stderr)


class HarnessSmoke(unittest.TestCase):
    def setUp(self):
        if sanitized(BUILD):
            # Its detection stage alone outlasts the test's 280 s under ASan, and what it
            # checks (every stage reports, the report is well formed) is not about memory:
            # the release build runs it; the agent's paths run under ASan in the other tests.
            self.skipTest("sanitizer build: the release build runs the harness smoke")
        need_bench()
        for tool, package in TOOLS:
            need_tool(tool, package)

    def test_smoke_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            md, js = os.path.join(tmp, "performance.md"), os.path.join(tmp, "results.json")
            r = subprocess.run([sys.executable, HARNESS, BUILD, "--smoke", "--no-callgrind",
                                "--out", md, "--json", js],
                               capture_output=True, text=True, timeout=280)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            with open(js) as f:
                results = json.load(f)
            with open(md) as f:
                report = f.read()
        self.assertTrue(results["smoke"])
        self.assertGreater(results["machine"]["nproc"], 0)
        for server in ("gpuscope-8", "nginx-8", "gpuscope-64", "nginx-64", "node-exporter"):
            scrape = results["scrape"][server]
            self.assertGreater(scrape["requests"], 0, server)
            self.assertGreater(scrape["p99_ms"], 0, server)
            self.assertGreater(scrape["body_bytes"], 0, server)
        # nginx served exactly gpuscope's body.
        self.assertEqual(results["scrape"]["gpuscope-8"]["body_bytes"],
                         results["scrape"]["nginx-8"]["body_bytes"])
        for gpus in ("8", "64"):
            self.assertGreater(results["startup"][gpus]["median_s"], 0)
        sampling = results["sampling"]["8-100"]
        self.assertGreater(sampling["rss_kib"], 1000)
        self.assertGreater(sampling["cpu_percent"], 0)
        self.assertTrue(sampling["threads_ms_per_s"])
        for mix in ("8-1000", "64-1000", "8-100"):
            calls = results["nvml"][mix]
            self.assertGreater(calls["per_gpu_cycle"], 1, mix)
            self.assertIn("nvmlDeviceGetFieldValues", calls["functions"])
        # The slow tier (every 10 s) adds calls to the 1 s mix, hardly to the 100 ms one.
        self.assertGreater(results["nvml"]["8-1000"]["per_gpu_cycle"],
                           results["nvml"]["8-100"]["per_gpu_cycle"])
        # Attribution on serves pod labels: a longer body than off.
        attribution = results["attribution"]
        self.assertNotIn("error", attribution)
        self.assertGreater(attribution["on"]["p99_ms"], 0)
        self.assertGreater(attribution["on"]["body_bytes"], attribution["off"]["body_bytes"])
        self.assertIn("BM_Render/8", results["micro"]["results"])
        self.assertIsNone(results["soak"]["error"])
        self.assertGreater(len(results["soak"]["samples"]), 1)
        for heading in ("# Performance", "## Summary", "## Scrapes", "## Micro-benchmarks",
                        "## Sampling", "## Detection latency", "## NVML calls",
                        "## Instructions", "## Soak", "## Method", "Smoke run"):
            self.assertIn(heading, report)
        self.assertIn("/metrics p99 latency", report)


if __name__ == "__main__":
    main()
