#!/usr/bin/env python3
"""Golden /metrics: `gpuscope serve --simulate training-8xh100` with the
simulator frozen at t=120 s (GPUSCOPE_SIM_FROZEN_TIME) and a fixed host name
serves byte-identical text in every run, equal to
tests/golden/metrics/training-8xh100.prom.

Why it is deterministic: with GPUSCOPE_SIM_FROZEN_TIME serve's clock is
frozen at the same instant as the simulator's (serve.h), so every cycle reads
the same values, integrals add nothing after the first cycle (zero elapsed
time), the slow tier is read once, timestamps are constant and durations
render as 0. The body served is the same from the second cycle on; the test
waits a few cycles, then scrapes exactly once (gpuscope_scrapes_total, which
counts earlier scrapes, reads 0; /health requests do not count). Two runs
are compared with each other and with the golden file; the version and commit labels of
gpuscope_build_info is masked so that a release does not need a new file.

Regenerate the golden file (after an intended output change) with
  GPUSCOPE_UPDATE_GOLDEN=1 GPUSCOPE_BUILD_DIR=build/<dir> \\
    python3 tests/integration/test_serve_golden.py
and review the diff.
"""
import difflib
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, Serve, check, main  # noqa: E402

GOLDEN = os.path.join(SOURCE_DIR, "tests", "golden", "metrics", "training-8xh100.prom")


def scrape_once():
    with Serve(["--simulate", "training-8xh100", "-c", "100", "--hostname", "golden-node"],
               env={"GPUSCOPE_SIM_FROZEN_TIME": "120"}) as s:
        s.wait_healthy()
        time.sleep(1.0)  # several cycles: the body has reached its fixed point
        status, headers, text = s.get("/metrics")
        check(status == 200, "status %s" % status)
        check("clock frozen" in s.output(), s.output())
    return re.sub(r"gpuscope_build_info\{[^}]*\}",
                  "gpuscope_build_info{VERSION}", text)


class ServeGoldenTest(unittest.TestCase):
    def test_two_runs_serve_the_golden_bytes(self):
        first, second = scrape_once(), scrape_once()
        check(first == second, "two runs differ:\n" + "".join(difflib.unified_diff(
            first.splitlines(True), second.splitlines(True), "run1", "run2", n=1))[:4000])
        if os.environ.get("GPUSCOPE_UPDATE_GOLDEN") == "1":
            with open(GOLDEN, "w") as f:
                f.write(first)
            print("wrote", GOLDEN)
        with open(GOLDEN) as f:
            golden = f.read()
        check(first == golden, "differs from %s:\n%s" % (GOLDEN, "".join(difflib.unified_diff(
            golden.splitlines(True), first.splitlines(True), "golden", "served", n=1))[:4000]))
        check('DCGM_FI_DEV_GPU_TEMP{gpu="7"' in golden and 'Hostname="golden-node"' in golden,
              "golden content")


if __name__ == "__main__":
    main()
