#!/usr/bin/env python3
"""Application KPIs never make a sampling cycle late (issue 31, finding 1).

`gpuscope serve` on a simulated 10-GPU node whose one process (pid 4242) runs on every GPU,
its OTLP receiver on a free port and a 5 s kpi_regression window. 3,000 senders (service.name
svc-N, process.pid 4242: each attributed to all 10 GPUs, 30,000 series) post a cumulative step-duration histogram every 2 s (OTLP/JSON, ~1 MB)
for ~20 s, the step time rising half-way so that kpi_regression has findings to join.

Before the fix the KPI join ran inside the sampler's publish hook, O(readings x findings):
every cycle was late, /health flapped to 503 and /metrics grew to tens of MB. Checks, from
the agent's own counters: /health answers 200 throughout, gpuscope_collect_overruns_total
stays 0 (no cycle ran past its tick), /metrics stays under its bound with the cut counted
in gpuscope_otlp_series_omitted_active, and the join still runs (the KPI series and
kpi_regression's change ratios are there).

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. ~35 s.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, free_port, main  # noqa: E402

GPUS = 10
SENDERS = 3000
# The application share is cut at 1 MiB (KpiJoinOptions::max_metrics_bytes); the GPU
# families of 10 simulated GPUs and the kpi_regression ones (1,024 keys at most) add well
# under 2 MiB.
MAX_METRICS_BYTES = 3 << 20
SCENARIO = "seed: 31\ngpus:\n" + "".join(
    "  - model: h100-sxm\n    workload: [{at: 0, kind: training}]\n"
    "    processes: [{pid: 4242, name: python3, used_memory_gib: 20}]\n" for _ in range(GPUS))
BOUNDS = [0.05, 0.1, 0.2, 0.5, 1, 2]


def request(round_no):
    """3,000 resources, one cumulative histogram each; 0.1 s steps, 0.3 s from round 5 on."""
    steps = 20 * (round_no + 1)
    mean_sum = 20 * 0.1 * min(round_no + 1, 5) + 20 * 0.3 * max(round_no - 4, 0)
    buckets = [0] * (len(BOUNDS) + 1)
    buckets[BOUNDS.index(0.1)] = 20 * min(round_no + 1, 5)
    buckets[BOUNDS.index(0.5)] = steps - buckets[BOUNDS.index(0.1)]
    resources = []
    for i in range(SENDERS):
        resources.append({
            "resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": "svc-%04d" % i}},
                {"key": "process.pid", "value": {"intValue": "4242"}}]},
            "scopeMetrics": [{"metrics": [{
                "name": "training.step.duration", "unit": "s",
                "histogram": {"aggregationTemporality": 2, "dataPoints": [{
                    "count": str(steps), "sum": mean_sum, "bucketCounts": [str(b) for b in buckets],
                    "explicitBounds": BOUNDS}]}}]}]})
    return json.dumps({"resourceMetrics": resources}).encode()


def post(url, body):
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, json.loads(r.read() or b"{}")


def value(text, series):
    m = re.search(r"^%s (\S+)$" % re.escape(series), text, re.M)
    return float(m.group(1)) if m else None


class Poster(threading.Thread):
    """Posts a round every 2 s; records each answer."""

    def __init__(self, url, rounds):
        super().__init__(daemon=True)
        self.url, self.rounds, self.answers, self.error = url, rounds, [], None

    def run(self):
        try:
            for n in range(self.rounds):
                started = time.time()
                self.answers.append(post(self.url, request(n)))
                time.sleep(max(0, 2 - (time.time() - started)))
        except Exception as e:  # reported by the main thread
            self.error = e


class OtlpKpiLoadTest(unittest.TestCase):
    def test_kpi_load_keeps_the_agent_healthy(self):
        workdir = tempfile.mkdtemp(prefix="gpuscope-kpi-load-")
        scenario = os.path.join(workdir, "node.yaml")
        with open(scenario, "w") as f:
            f.write(SCENARIO)
        otlp_port = free_port()
        try:
            # One poster is one sender (its peer, 127.0.0.1 and its uid): no share, all of the
            # store for its 3,000 resources.
            with Serve(["--simulate", scenario, "--otlp-listen-address", "127.0.0.1:%d" % otlp_port,
                        "--kpi-regression-window", "5s", "--otlp-sender-share", "1"]) as serve:
                serve.wait_healthy()
                text = serve.wait_metrics(lambda t: "gpuscope_collect_overruns_total" in t,
                                          "the overrun counter")
                check(value(text, "gpuscope_collect_overruns_total") == 0, text[-2000:])
                poster = Poster("http://127.0.0.1:%d/v1/metrics" % otlp_port, 10)
                poster.start()
                unhealthy, largest, polls = [], 0, 0
                while poster.is_alive() or polls == 0:
                    status, _, body = serve.get("/health")
                    if status != 200:
                        unhealthy.append((time.time(), status, body))
                    status, _, text = serve.get("/metrics")
                    check(status == 200, status)
                    largest = max(largest, len(text))
                    polls += 1
                    time.sleep(0.5)
                check(poster.error is None, poster.error)
                check([a[0] for a in poster.answers] == [200] * 10, poster.answers)
                check(not unhealthy, "/health was not 200: %s" % unhealthy[:5])
                check(largest <= MAX_METRICS_BYTES, "/metrics reached %d bytes" % largest)

                # The 30,000 attributed series are cut to the 1 MiB of application lines before
                # they reach the regression keys: the cut is counted as metrics_bytes.
                def joined(t):
                    omitted = value(t, 'gpuscope_otlp_series_omitted_active{limit="metrics_bytes"}')
                    return ('gpuscope_app_step_duration_seconds_count{gpu="0"' in t and
                            "gpuscope_kpi_change_ratio{" in t and omitted and omitted > 0)
                text = serve.wait_metrics(joined, "the KPI join's families", timeout=30)
                check(value(text, 'gpuscope_otlp_series_omitted_active{limit="metrics_bytes"}') > 0,
                      "the 1 MiB cut is not counted")
                check(value(text, "gpuscope_otlp_series_active") == SENDERS, text[-3000:])
                overruns = value(text, "gpuscope_collect_overruns_total")
                check(overruns == 0, "%s sampling cycles ran late" % overruns)
                print("%d polls, /metrics at most %d bytes, no late cycle, /health always 200" %
                      (polls, largest))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
