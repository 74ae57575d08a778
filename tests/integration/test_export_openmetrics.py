#!/usr/bin/env python3
"""A real Prometheus parses the exporter's bodies in both formats.

The golden bodies tests/golden/export_full_gpu.{prom,om} (one GPU, every
catalog family in both name sets, written and kept current by the export unit
tests) are served by a tiny HTTP server: the text body as
`text/plain; version=0.0.4`, the OpenMetrics body as
`application/openmetrics-text; version=1.0.0`, so Prometheus uses its text
parser for one job and its OpenMetrics parser for the other. Both targets must
be up with no scrape error, and both must yield exactly the series the bodies
hold, under the same names.
"""
import collections
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (PROMETHEUS, SOURCE_DIR, Prometheus, check, free_port,  # noqa: E402
                              main, need_tool, parse_exposition)

GOLDEN = os.path.join(SOURCE_DIR, "tests", "golden")
BODIES = {
    "/text": ("export_full_gpu.prom", "text/plain; version=0.0.4; charset=utf-8"),
    "/om": ("export_full_gpu.om", "application/openmetrics-text; version=1.0.0; charset=utf-8"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path not in BODIES:
            self.send_error(404)
            return
        name, content_type = BODIES[self.path]
        with open(os.path.join(GOLDEN, name), "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def sample_names(path, openmetrics):
    """How many samples of each name a body holds."""
    with open(path) as f:
        body = parse_exposition(f.read(), openmetrics)
    return dict(collections.Counter(s.name for s in body.samples))


def wait_targets(prom, deadline):
    while time.time() < deadline:
        targets = prom.api("/api/v1/targets", {})["activeTargets"]
        if len(targets) == 2 and all(t["lastScrape"] != "0001-01-01T00:00:00Z" for t in targets):
            return targets
        time.sleep(0.5)
    raise AssertionError("Prometheus did not scrape both targets in time")


def check_job(prom, job, expected):
    result = prom.query('count by (__name__) ({job="%s",__name__!~"up|scrape_.*"})' % job)
    got = {r["metric"]["__name__"]: int(r["value"][1]) for r in result}
    missing = {k: v for k, v in expected.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if expected.get(k) != v}
    check(got == expected, "job %s: series differ; expected %s, got %s" % (job, missing, extra))


class ExportOpenMetricsTest(unittest.TestCase):
    def test_prometheus_parses_both_formats(self):
        need_tool(PROMETHEUS, "prometheus")
        for name, _ in BODIES.values():
            check(os.path.exists(os.path.join(GOLDEN, name)), "missing golden body " + name)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        target = "127.0.0.1:%d" % server.server_address[1]
        work = tempfile.mkdtemp(prefix="gpuscope-export-om-")
        config = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
        for job, path in (("text", "/text"), ("om", "/om")):
            config += ("  - job_name: %s\n    metrics_path: %s\n"
                       "    static_configs:\n      - targets: ['%s']\n" % (job, path, target))
        prom = Prometheus(work, config)
        try:
            prom.wait_ready(60)
            for t in wait_targets(prom, time.time() + 60):
                check(t["health"] == "up" and not t["lastError"], "target %s: health %s, error %r"
                      % (t["scrapeUrl"], t["health"], t["lastError"]))
            text = sample_names(os.path.join(GOLDEN, "export_full_gpu.prom"), openmetrics=False)
            om = sample_names(os.path.join(GOLDEN, "export_full_gpu.om"), openmetrics=True)
            check(text == om, "text and OpenMetrics bodies hold different series")
            # Samples are ingested a moment after the scrape is recorded.
            time.sleep(2)
            check_job(prom, "text", text)
            check_job(prom, "om", text)
            print("OK: Prometheus parsed %d series in both formats" % sum(text.values()))
        finally:
            prom.close()
            server.shutdown()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
