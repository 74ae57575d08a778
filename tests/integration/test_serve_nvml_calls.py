#!/usr/bin/env python3
"""Scrapes never call NVML: the simulator's per-function call counters (its
control file's `stats <path>` command, see sim/README.md) are the same before
and after 100 scrapes of /metrics (both formats) and /health. The collect
interval is 10 minutes, so after the first cycles the sampler makes no calls;
the XID event thread keeps waiting on its event set, so nvmlEventSetWait is
left out of the comparison.
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, temp_dir  # noqa: E402

EVENT_WAITS = ("nvmlEventSetWait", "nvmlEventSetWait_v2")


def stats(control, path):
    with open(control, "a") as f:
        f.write("stats %s\n" % path)
    deadline = time.time() + 10
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            return {k: v for k, v in data["functions"].items() if k not in EVENT_WAITS}
        time.sleep(0.05)
    raise AssertionError("the simulator wrote no stats to " + path)


class ServeNvmlCallsTest(unittest.TestCase):
    def test_scrapes_make_no_nvml_calls(self):
        d = temp_dir(self, "gpuscope-calls-")
        control = os.path.join(d, "control")
        open(control, "w").close()
        with Serve(["--simulate", "training-8xh100", "-c", "600000"],
                   env={"GPUSCOPE_SIM_CONTROL": control}) as s:
            s.wait_healthy()
            time.sleep(1.0)  # the loop's first cycle runs right after start
            before = stats(control, os.path.join(d, "before.json"))
            check(sum(before.values()) > 0, "no NVML calls counted at all")
            for i in range(100):
                accept = {"Accept": "application/openmetrics-text"} if i % 2 else {}
                status, _, body = s.get("/metrics", accept)
                check(status == 200 and "DCGM_FI_DEV_GPU_TEMP" in body, status)
            for _ in range(10):
                check(s.get("/health")[0] == 200, "health")
            after = stats(control, os.path.join(d, "after.json"))
            diff = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)
                    if after.get(k, 0) != before.get(k, 0)}
            check(not diff, "scrapes made NVML calls: %s" % diff)


if __name__ == "__main__":
    main()
