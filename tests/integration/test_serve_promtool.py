#!/usr/bin/env python3
"""`promtool check metrics` on the live /metrics of `gpuscope serve
--metrics native`: no problems at all (no exemptions), in a healthy scenario
and in the fault drill (lost GPU, XIDs, throttling: more families appear).
Also checks that --metrics native really drops the DCGM families.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, need_tool, promtool, run_script  # noqa: E402


def main():
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
    print("ok")


if __name__ == "__main__":
    sys.exit(run_script(main))
