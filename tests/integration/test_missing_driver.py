#!/usr/bin/env python3
"""No driver: gpuscope degrades instead of dying.

- `gpuscope serve --nvml-lib /nonexistent` starts and keeps serving:
  /metrics has gpuscope_nvml_up 0, /health answers 503 with the reason.
- `gpuscope serve --simulate` with GPUSCOPE_SIM_INIT_ERROR=DRIVER_NOT_LOADED
  (the kernel module missing) does the same, with the driver's reason.
- `gpuscope health` in both cases exits non-zero with one sentence on
  stderr, and --json still gives a document saying NVML is down.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~10 s.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, run  # noqa: E402

NOT_LOADED = {"GPUSCOPE_SIM_INIT_ERROR": "DRIVER_NOT_LOADED"}


def check_serve_degraded(args, env, reason):
    s = Serve(args, env=env)
    code = None
    try:
        status, _, text = s.get("/metrics")
        check(status == 200, "/metrics %s" % status)
        check("gpuscope_nvml_up 0" in text, "nvml_up: " + text[:400])
        check("DCGM_FI_DEV_GPU_TEMP{" not in text, "GPU series without NVML")
        status, _, body = s.get("/health")
        check(status == 503, "/health %s %r" % (status, body))
        check("NVML is down" in body and reason in body, "/health reason %r" % body)
        check(s.proc.poll() is None, "serve exited:\n" + s.output())
    finally:
        code = s.stop()
    check(code == 0, "SIGTERM exit %s" % code)


def check_health_fails(args, env, reason):
    code, out, err = run(["health"] + args, env=env)
    check(code != 0, "health exited 0:\n" + out)
    check(out == "", "health printed a report: %r" % out)
    lines = [line for line in err.splitlines() if not line.startswith("gpuscope-sim:")]
    check(len(lines) == 1 and reason in lines[0], "want one sentence naming %r, got %r"
          % (reason, err))
    code, out, err = run(["health", "--json"] + args, env=env)
    check(code != 0, "health --json exited 0")
    doc = json.loads(out)
    check(doc["nvml_up"] is False and reason in doc["nvml_error"] and doc["verdict"] == "fail",
          doc)


class MissingDriverTest(unittest.TestCase):
    def test_no_library(self):
        missing = ["--nvml-lib", "/nonexistent"]
        check_serve_degraded(missing, None, "/nonexistent")
        check_health_fails(missing, None, "/nonexistent")

    def test_driver_not_loaded(self):
        simulated = ["--simulate", "training-8xh100"]
        check_serve_degraded(simulated, NOT_LOADED, "DRIVER_NOT_LOADED")
        check_health_fails(simulated, NOT_LOADED, "DRIVER_NOT_LOADED")


if __name__ == "__main__":
    main()
