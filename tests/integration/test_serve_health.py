#!/usr/bin/env python3
"""Health and XID families reach /metrics, and /health follows the GPUs:
  - a scenario with XID 94 on GPU 1 and XID 95 (+ an uncorrectable ECC error,
    XID 48) on GPU 2, run 20x faster, shows DCGM_FI_DEV_XID_ERRORS (last XID),
    gpuscope_xid_errors_total{xid}, DCGM_EXP_XID_ERRORS_COUNT{xid,
    window_size_in_ms} (the counters file enables it; -x sets the window) and
    gpuscope_gpu_health{check="xid"} warn/fail;
  - injecting `lost` into every GPU through the simulator's control file
    turns /health to 503 "all ... GPUs are lost", gpuscope_collector_up to 0,
    while /metrics keeps answering.
"""
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, Serve, check, main, temp_dir  # noqa: E402

SCENARIOS = os.path.join(SOURCE_DIR, "sim", "scenarios", "health")


def value(text, pattern):
    m = re.search("^" + pattern + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


class ServeHealthTest(unittest.TestCase):
    def setUp(self):
        self.d = temp_dir(self, "gpuscope-health-")

    def test_xids(self):
        counters = os.path.join(self.d, "xid.csv")
        with open(counters, "w") as f:
            f.write("DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error.\n"
                    "DCGM_EXP_XID_ERRORS_COUNT, gauge, XID errors in the window.\n")
        with Serve(["--simulate", os.path.join(SCENARIOS, "xid-94-95.yaml"), "-c", "200",
                    "-f", counters, "-x", "60000"], env={"GPUSCOPE_SIM_TIME_SCALE": "20"}) as s:
            text = s.wait_metrics(lambda t: 'xid="95"' in t and 'xid="94"' in t, "XIDs", timeout=20)
            check(value(text, r'DCGM_FI_DEV_XID_ERRORS\{gpu="1".*?\}') == 94, "last XID gpu 1")
            check(value(text, r'DCGM_FI_DEV_XID_ERRORS\{gpu="2".*?\}') == 95, "last XID gpu 2")
            check(value(text, r'DCGM_FI_DEV_XID_ERRORS\{gpu="0".*?\}') == 0, "no XID gpu 0")
            check(value(text, r'gpuscope_xid_errors_total\{gpu="1",uuid="[^"]+",xid="94"\}') == 1,
                  "xid total")
            check(re.search(r'^DCGM_EXP_XID_ERRORS_COUNT\{gpu="2",UUID="[^"]+",.*xid="95",'
                            r'window_size_in_ms="60000"\} 1$', text, re.M), "window count")
            check(value(text, r'gpuscope_gpu_health\{gpu="1",uuid="[^"]+",check="xid"\}') == 1,
                  "xid 94 warns")
            check(value(text, r'gpuscope_gpu_health\{gpu="2",uuid="[^"]+",check="xid"\}') == 2,
                  "xid 95 fails")
            check(s.get("/health")[0] == 200, "one failing GPU does not make serve unhealthy")

    def test_all_lost(self):
        control = os.path.join(self.d, "control")
        open(control, "w").close()
        with Serve(["--simulate", "training-8xh100", "-c", "200"],
                   env={"GPUSCOPE_SIM_CONTROL": control}) as s:
            s.wait_healthy()
            with open(control, "a") as f:
                f.write("inject all lost\n")
            deadline = time.time() + 20
            status, body = 200, ""
            while time.time() < deadline and status == 200:
                status, _, body = s.get("/health")
                time.sleep(0.2)
            check(status == 503 and "all 8 GPUs are lost" in body, "health %s %r" % (status, body))
            text = s.wait_metrics(lambda t: 'gpuscope_collector_up{gpu="7"} 0' in t,
                                  "collector down", timeout=20)
            check('gpuscope_gpu_lost{gpu="0",' in text, "gpu_lost family")
            with open(control, "a") as f:
                f.write("clear all lost\n")
            s.wait_healthy(timeout=60)  # re-attached (lost GPUs are retried with backoff)


if __name__ == "__main__":
    main()
