#!/usr/bin/env python3
"""A smoke test of `gpuscope serve`: the index page, /health, /metrics in
both formats, 404, settings precedence (flag > GPUSCOPE_* > --config YAML),
and /health answering 503 while NVML is missing.

Env: GPUSCOPE_BUILD_DIR (the build folder with gpuscope and sim/),
GPUSCOPE_SOURCE_DIR (the checkout). stdlib only.
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main  # noqa: E402


class ServeCommonTest(unittest.TestCase):
    def test_endpoints(self):
        with Serve(["--simulate", "training-8xh100"]) as s:
            s.wait_healthy()
            check("serving /metrics" in s.output() and "8 GPUs" in s.output() and
                  "simulator" in s.output(), "start line: " + s.output())
            status, headers, body = s.get("/")
            check(status == 200 and "text/html" in headers["Content-Type"], "index %s" % status)
            check('href="/metrics"' in body and 'href="/health"' in body, body)
            status, headers, body = s.get("/health")
            check(status == 200 and body.strip() == "OK", "health %s %r" % (status, body))
            status, headers, text = s.get("/metrics")
            check(status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"),
                  "metrics %s %s" % (status, headers))
            check('DCGM_FI_DEV_GPU_TEMP{gpu="7"' in text and "gpuscope_nvml_up 1" in text,
                  text[:500])
            status, headers, om = s.get("/metrics", {"Accept": "application/openmetrics-text"})
            check(headers["Content-Type"].startswith("application/openmetrics-text"), headers)
            check(om.endswith("# EOF\n"), om[-100:])
            status, _, _ = s.get("/nope")
            check(status == 404, "404 expected, got %s" % status)

    def test_settings_precedence(self):
        """The YAML --config file, overridden by the environment, overridden by flags."""
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write("metrics: native\ncollect-interval: 500ms\nhostname: from-file\n")
        try:
            with Serve(["--simulate", "training-8xh100", "--config", f.name]) as s:
                text = s.get("/metrics")[2]
                check("DCGM_FI_" not in text and "gpuscope_gpu_info{" in text, "file: native")
            with Serve(["--simulate", "training-8xh100", "--config", f.name],
                       env={"GPUSCOPE_METRICS": "dcgm"}) as s:
                text = s.get("/metrics")[2]
                check('Hostname="from-file"' in text and "gpuscope_gpu_info{" not in text,
                      "env beats file")
            with Serve(["--simulate", "training-8xh100", "--config", f.name, "--metrics", "both"],
                       env={"GPUSCOPE_METRICS": "dcgm"}) as s:
                text = s.get("/metrics")[2]
                check("DCGM_FI_DEV_GPU_TEMP{" in text and "gpuscope_gpu_info{" in text,
                      "flag beats env")
        finally:
            os.unlink(f.name)

    def test_nvml_missing(self):
        """serve keeps running, /health says why."""
        with Serve(["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"]) as s:
            status, _, body = s.get("/health")
            check(status == 503 and "NVML is down" in body, "health %s %r" % (status, body))
            status, _, text = s.get("/metrics")
            check(status == 200 and "gpuscope_nvml_up 0" in text, text[:300])


if __name__ == "__main__":
    main()
