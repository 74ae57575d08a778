#!/usr/bin/env python3
"""The OTLP receiver's wire module (src/otlp/wire.h, libgpuscope-otlp.so):
an agent maps libprotobuf only once an application posts, and an install
that lacks the module keeps serving /metrics and answers each OTLP request
503 with the reason (the module's name), counted in
gpuscope_otlp_requests_total. ~5 s.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import BUILD_DIR, GPUSCOPE, Serve, check, free_port, main  # noqa: E402

SCENARIO = os.path.join(BUILD_DIR, "sim", "scenarios", "idle-node.yaml")
GAUGE = json.dumps({"resourceMetrics": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "trainer"}}]},
    "scopeMetrics": [{"metrics": [{"name": "training.step.duration", "unit": "s",
                                   "gauge": {"dataPoints": [{"asDouble": 0.25}]}}]}]}]}).encode()


def post(port):
    req = urllib.request.Request("http://127.0.0.1:%d/v1/metrics" % port, data=GAUGE,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def mapped(pid):
    with open("/proc/%d/maps" % pid) as f:
        return {os.path.basename(line.split()[-1]) for line in f if "/" in line}


def serve(binary, env=None):
    port = free_port()
    agent = Serve(["--simulate", SCENARIO, "--otlp-listen-address", "127.0.0.1:%d" % port],
                  binary=binary, env=env)
    agent.otlp_port = port
    return agent


class OtlpModuleTest(unittest.TestCase):
    def test_protobuf_mapped_on_first_request(self):
        with serve(GPUSCOPE) as agent:
            agent.wait_healthy()
            before = mapped(agent.proc.pid)
            check(not any(m.startswith("libprotobuf") for m in before),
                  "libprotobuf mapped before any request: %s" % sorted(before))
            status, body = post(agent.otlp_port)
            check(status == 200, "POST: %d %s" % (status, body))
            after = mapped(agent.proc.pid)
            check("libgpuscope-otlp.so" in after and
                  any(m.startswith("libprotobuf") for m in after),
                  "module and libprotobuf mapped after the request: %s" % sorted(after))
            agent.wait_metrics(lambda b: "gpuscope_app_training_step_duration_seconds" in b,
                               "the posted KPI on /metrics")

    def test_install_without_the_module(self):
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "gpuscope")  # alone: no module beside it, no lib/
            shutil.copy(GPUSCOPE, binary)
            env = {"GPUSCOPE_NVML_LIB": os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1")}
            with serve(binary, env) as agent:
                agent.wait_healthy()
                status, body = post(agent.otlp_port)
                check(status == 503 and "libgpuscope-otlp.so" in body,
                      "POST without the module: %d %s" % (status, body))
                text = agent.wait_metrics(
                    lambda b: re.search(r'^gpuscope_otlp_requests_total\{code="503"\} 1$', b,
                                        re.M), "the 503 counted")
                check("DCGM_FI_DEV_GPU_TEMP" in text, "GPU metrics still served")


if __name__ == "__main__":
    main()
