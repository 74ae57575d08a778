#!/usr/bin/env python3
"""The web page's JSON API (docs/api.md), tested like /metrics:

- golden JSON: `gpuscope serve --simulate mixed-node` with the simulator
  frozen at t=120 s (GPUSCOPE_SIM_FROZEN_TIME, as test_serve_golden.py) and a
  fixed host name answers /api/v1/gpus, /api/v1/window, /api/v1/health and
  /api/v1/diagnosis byte-identically in two runs, equal to
  tests/golden/api/mixed-node-*.json (the agent version is masked);
- the API reads the exporter's snapshot: the temperatures and power in
  /api/v1/gpus equal those of /metrics;
- with Accept-Encoding: gzip, the API and the page's files come compressed;
- bad parameters answer 400 with a message naming the parameter; the API
  answers only GET/HEAD, and JSON with Content-Type application/json.

Regenerate the golden files (after an intended change) with
  GPUSCOPE_UPDATE_GOLDEN=1 GPUSCOPE_BUILD_DIR=build/<dir> \\
    python3 tests/integration/test_web_api.py
and review the diff.
"""
import difflib
import gzip
import json
import os
import re
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, Serve, check, main  # noqa: E402

GOLDEN_DIR = os.path.join(SOURCE_DIR, "tests", "golden", "api")
QUERIES = {
    "gpus": "/api/v1/gpus",
    "window": "/api/v1/window?gpu=7&gi=1&metrics=gpu_util,memory_used,power_usage,sm_clock",
    "window-all": "/api/v1/window?gpu=all&metrics=gpu_temp",
    "health": "/api/v1/health",
    "diagnosis": "/api/v1/diagnosis?gpu=6",
    "diagnosis-text": "/api/v1/diagnosis?format=text",
}
BAD = [  # (query, words the 400 message must hold)
    ("/api/v1/window?metrics=gpu_util", "gpu: missing"),
    ("/api/v1/window?gpu=abc&metrics=gpu_util", "gpu: 'abc' is not a GPU index"),
    ("/api/v1/window?gpu=99&metrics=gpu_util", "gpu: no GPU 99 on this node (it has 0-7)"),
    ("/api/v1/window?gpu=7&gi=5&metrics=gpu_util", "gi: GPU 7 has no GPU instance '5'"),
    ("/api/v1/window?gpu=0", "metrics: missing"),
    ("/api/v1/window?gpu=0&metrics=gpu_util,bogus", "metrics: unknown metric 'bogus'"),
    ("/api/v1/window?gpu=0&metrics=gpu_util&since=-1", "since: not a unix time"),
    ("/api/v1/window?gpu=0&metrics=gpu_util&since=1e400", "since: not a unix time"),
    ("/api/v1/window?gpu=0&gpu=1&metrics=gpu_util", "parameter 'gpu' given twice"),
    ("/api/v1/window?gpu=all&gi=1&metrics=gpu_util", "gi: not allowed with gpu=all"),
    ("/api/v1/gpus?gpu=1", "unknown parameter 'gpu' (this endpoint takes: none)"),
    ("/api/v1/health?x=%01", "unknown parameter 'x'"),
    ("/api/v1/health?id=0,", "id: --id: empty entry"),
    ("/api/v1/health?id=0%1b%5b2J", "id: '0?[2J' is not a list of GPU ids"),
    ("/api/v1/health?id=" + "7%2c" * 2100, "is not a list of GPU ids"),
    ("/api/v1/jobs?kind=%1b%5b2J", "kind: '?[2J' is not job, pod or workload"),
    ("/api/v1/diagnosis?format=xml", "format: json or text"),
    ("/api/v1/diagnosis?gpu=all", "gpu: 'all' is not a GPU index"),
]


def fetch_all():
    with Serve(["--simulate", "mixed-node", "-c", "100", "--hostname", "golden-node"],
               env={"GPUSCOPE_SIM_FROZEN_TIME": "120"}) as s:
        s.wait_healthy()
        time.sleep(1.0)  # several cycles: the state has reached its fixed point
        out = {}
        for name, query in QUERIES.items():
            status, headers, body = s.get(query)
            check(status == 200, "%s: %s %s" % (query, status, body))
            want = "text/plain" if name.endswith("-text") else "application/json"
            check(headers["Content-Type"].startswith(want), "%s: %s" % (query, headers))
            out[name] = normalize(name, body)
        check_same_snapshot(s, json.loads(s.get("/api/v1/gpus")[2]))
        check_gzip(s)
        check_bad_parameters(s)
        check(process_names(s) == set(), "process names served without --process-names")
    return out


def process_names(s):
    """Every process name the API serves (gpus, health, diagnosis)."""
    names = set()
    for path, devices in (("/api/v1/gpus", "devices"), ("/api/v1/health", "gpus"),
                          ("/api/v1/diagnosis", "gpus")):
        doc = json.loads(s.get(path)[2])
        for d in doc.get(devices, []):
            names.update(p["name"] for p in d.get("processes", []) if p.get("name"))
    return names


def normalize(name, body):
    """Masks what differs between runs by design: the agent version and the
    cycle count (how many cycles ran before the request)."""
    if name.endswith("-text"):
        return body
    doc = json.loads(body)
    if "agent" in doc:
        doc["agent"]["version"] = "VERSION"
        doc["sequence"] = 0
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def check_same_snapshot(s, gpus):
    metrics = s.get("/metrics")[2]
    for d in gpus["devices"]:
        if d.get("mig"):
            continue
        m = re.search(r'^DCGM_FI_DEV_GPU_TEMP\{gpu="%d",[^}]*\} (\S+)$' % d["gpu"], metrics, re.M)
        check(m and float(m.group(1)) == d["values"]["gpu_temp"],
              "GPU %d temperature: /metrics %s, API %s" % (d["gpu"], m and m.group(1),
                                                             d["values"]["gpu_temp"]))
    check(len(gpus["devices"]) == 11, "mixed-node has 8 GPUs and 3 MIG instances")


def check_gzip(s):
    """With Accept-Encoding: gzip the API and the assets come compressed, and
    decompress to what is served plain."""
    for path in ("/api/v1/gpus", "/ui/uPlot.min.js", "/"):
        req = urllib.request.Request(s.base + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=10) as r:
            check(r.headers.get("Content-Encoding") == "gzip", "%s: %s" % (path, r.headers))
            body = gzip.decompress(r.read()).decode()
        plain = s.get(path)[2]
        if path == "/api/v1/gpus":  # the cycle count may have moved on between the two
            body, plain = (re.sub(r'"sequence":\d+', "", x) for x in (body, plain))
        check(body == plain, "%s: gzipped body differs from the plain one" % path)


def check_bad_parameters(s):
    for query, words in BAD:
        status, _, body = s.get(query)
        check(status == 400 and words in body, "%s: %s %r (want 400 with %r)" % (query, status,
                                                                                body, words))


class WebApiTest(unittest.TestCase):
    def test_process_names_opt_in(self):
        """Names leave the host only with --process-names (privacy)."""
        with Serve(["--simulate", "mixed-node", "-c", "100", "--process-names"],
                   env={"GPUSCOPE_SIM_FROZEN_TIME": "120"}) as s:
            s.wait_healthy()
            time.sleep(1.0)
            names = process_names(s)
            check({"python3", "vllm"} <= names, "with --process-names: %s" % sorted(names))

    def test_answers_match_the_goldens(self):
        first, second = fetch_all(), fetch_all()
        update = os.environ.get("GPUSCOPE_UPDATE_GOLDEN") == "1"
        for name in QUERIES:
            check(first[name] == second[name], "%s: two runs differ:\n%s" % (name, "".join(
                difflib.unified_diff(first[name].splitlines(True), second[name].splitlines(True),
                                     "run1", "run2", n=1))[:3000]))
            golden = os.path.join(GOLDEN_DIR, "mixed-node-%s.%s" % (
                name, "txt" if name.endswith("-text") else "json"))
            text = first[name]
            if update:
                with open(golden, "w") as f:
                    f.write(text)
                print("wrote", golden)
            with open(golden) as f:
                want = f.read()
            check(text == want, "%s differs from %s:\n%s" % (name, golden, "".join(
                difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden",
                                     "served", n=1))[:4000]))


if __name__ == "__main__":
    main()
