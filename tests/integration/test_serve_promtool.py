#!/usr/bin/env python3
"""`promtool check metrics` on the live /metrics of `gpuscope serve
--metrics native`: no problems at all (no exemptions), in a healthy scenario
and in the fault drill (lost GPU, XIDs, throttling: more families appear).
Also checks that --metrics native really drops the DCGM families, and the
series budget of the default (lean) profile: at most 60 series per GPU on the
8 x H100 node with the default metrics set and counters file, the full profile
keeping today's detail (docs/scaling.md). Per-process families (one series
per process, bounded by the processes a GPU runs) are not counted.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (Serve, check, main, need_tool, parse_exposition,  # noqa: E402
                              promtool)


LEAN_MAX_PER_GPU = 60
GPUS = 8


def series_per_gpu(text):
    """Series per gpu label value, per-process families left out."""
    counts = {}
    for s in parse_exposition(text).samples:
        if "process" not in s.name and "gpu" in s.labels:
            counts[s.labels["gpu"]] = counts.get(s.labels["gpu"], 0) + 1
    return counts


class ServePromtoolTest(unittest.TestCase):
    def test_series_budget(self):
        """Counted once the diagnosis has run (its first verdicts come after 30 s
        of window), so that its series count too; both profiles at once."""
        counts = {}
        with Serve(["--simulate", "training-8xh100", "-c", "200", "--profile", "lean"]) as lean, \
                Serve(["--simulate", "training-8xh100", "-c", "200", "--profile", "full"]) as full:
            for profile, s in (("lean", lean), ("full", full)):
                text = s.wait_metrics(lambda t: "gpuscope_bottleneck_confidence{" in t,
                                      "%s: the first diagnosis" % profile, timeout=90)
                counts[profile] = series_per_gpu(text)
                check(len(counts[profile]) == GPUS, "%s: gpus %s" % (profile, counts[profile]))
                if profile == "full":
                    check("gpuscope_nvlink_link_errors_total{" in text, "full: no per-link series")
                else:
                    check("gpuscope_nvlink_errors_total{" in text, "lean: no NVLink totals")
        worst = max(counts["lean"].values())
        print("series per GPU: lean %d, full %d" % (worst, max(counts["full"].values())))
        check(worst <= LEAN_MAX_PER_GPU, "lean profile: %d series on one GPU, budget %d: %s" % (
            worst, LEAN_MAX_PER_GPU, counts["lean"]))
        check(min(counts["full"].values()) > 2 * worst, "full profile lost detail: %s" % counts)

    def test_promtool_check_metrics(self):
        need_tool("promtool", "prometheus")
        for scenario in ("training-8xh100", "fault-drill", "mixed-node"):
            with Serve(["--simulate", scenario, "--metrics", "native", "-c", "200"]) as s:
                s.wait_healthy()
                time.sleep(1.0)  # a few cycles: GPM and integrals present
                status, _, text = s.get("/metrics")
                check(status == 200, status)
                check("DCGM_" not in text, "DCGM family in native output")
                check("gpuscope_energy_joules_total" in text or scenario != "training-8xh100",
                      "energy missing")
                rc, out = promtool(["check", "metrics"], text)
                check(rc == 0 and out == "", "%s: promtool says (rc %d):\n%s" % (scenario, rc, out))


if __name__ == "__main__":
    main()
