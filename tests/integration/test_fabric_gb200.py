#!/usr/bin/env python3
"""A GB200 node with one NVLink fabric fault per GPU (sim/scenarios/health/gb200-fabric.yaml)
is reported correctly end to end:
  - /metrics: gpuscope_fabric_* per GPU (state, error code, each health-mask issue, the
    configuration code), cluster UUID and clique once per GPU on gpuscope_fabric_info, the
    dcgm-exporter names when the counters CSV selects them, gpuscope_gpu_health{check="fabric"};
    `promtool check metrics` has nothing to say;
  - `gpuscope health` exits 2 and names the fabric findings; on the healthy tray it exits 0;
  - an H100 node shows no fabric series and no fabric check (NVML answers NOT_SUPPORTED).
"""
import json
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (SOURCE_DIR, Serve, check, main, need_tool, promtool,  # noqa: E402
                              run, temp_dir)

SCENARIO = os.path.join(SOURCE_DIR, "sim", "scenarios", "health", "gb200-fabric.yaml")
AFTER_FAULTS = {"GPUSCOPE_SIM_START_TIME": "10"}  # the faults start at 5 s
COUNTERS = ("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).\n"
            "DCGM_FI_DEV_FABRIC_MANAGER_STATUS, gauge, Fabric manager status.\n"
            "DCGM_FI_DEV_FABRIC_MANAGER_ERROR_CODE, gauge, Fabric manager error code.\n"
            "DCGM_FI_DEV_FABRIC_CLIQUE_ID, gauge, Fabric clique id.\n"
            "DCGM_FI_DEV_FABRIC_HEALTH_MASK, gauge, Fabric health mask.\n")


def value(text, pattern):
    m = re.search("^" + pattern + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def native(text, family, gpu, extra=""):
    return value(text, r'%s\{gpu="%d",uuid="[^"]+"%s\}' % (family, gpu, extra))


class FabricGb200Test(unittest.TestCase):
    def setUp(self):
        self.d = temp_dir(self, "gpuscope-fabric-")

    def test_metrics_per_fault(self):
        counters = os.path.join(self.d, "fabric.csv")
        with open(counters, "w") as f:
            f.write(COUNTERS)
        with Serve(["--simulate", SCENARIO, "-c", "200", "-f", counters, "--profile", "full"],
                   env=AFTER_FAULTS) as s:
            text = s.wait_metrics(lambda t: 'check="fabric"' in t and
                                  'gpuscope_fabric_state{gpu="7"' in t, "fabric series",
                                  timeout=30)
            state = [native(text, "gpuscope_fabric_state", g) for g in range(8)]
            check(state == [3, 2, 3, 3, 3, 3, 3, 3], "state %s" % state)
            check(native(text, "gpuscope_fabric_registration_failure", 2) == 999, "error code of GPU 2")
            check(native(text, "gpuscope_fabric_registration_failure", 0) == 0, "error code of GPU 0")
            issues = {3: "degraded_bandwidth", 4: "route_recovery", 5: "route_unhealthy",
                      6: "access_timeout_recovery"}
            for gpu in range(8):
                for issue in issues.values():
                    want = 1 if issues.get(gpu) == issue else 0
                    got = native(text, "gpuscope_fabric_issue_active", gpu,
                                 ',issue="%s"' % issue)
                    check(got == want, "GPU %d %s: %s, want %d" % (gpu, issue, got, want))
            config = [native(text, "gpuscope_fabric_configuration_state", g)
                      for g in range(8)]
            check(config == [1, 1, 1, 1, 1, 1, 1, 4], "configuration %s" % config)
            uuids = set(re.findall(r'^gpuscope_fabric_info\{gpu="\d",uuid="[^"]+",'
                                   r'cluster_uuid="([0-9a-f-]{36})",clique_id="1"\} 1$', text,
                                   re.M))
            check(len(uuids) == 1, "one cluster UUID for the node's fabric: %s" % uuids)
            check(text.count("gpuscope_fabric_info{") == 8, "one info series per GPU")
            check("cluster_uuid" not in re.sub(r"^gpuscope_fabric_info.*$", "", text,
                                               flags=re.M),
                  "the cluster UUID is only on the info series")
            # dcgm-exporter's names, as the counters file selects them.
            status = [value(text, r'DCGM_FI_DEV_FABRIC_MANAGER_STATUS\{gpu="%d",.*?\}' % g)
                      for g in range(8)]
            check(status == [3, 2, 4, 3, 3, 3, 3, 3], "DCGM status %s" % status)
            check(value(text, r'DCGM_FI_DEV_FABRIC_HEALTH_MASK\{gpu="0",.*?\}') == 0x1AA,
                  "healthy mask")
            check(value(text, r'DCGM_FI_DEV_FABRIC_HEALTH_MASK\{gpu="5",.*?\}') == 0x19A,
                  "route unhealthy mask")
            check(value(text, r'DCGM_FI_DEV_FABRIC_MANAGER_ERROR_CODE\{gpu="2",.*?\}') == 999,
                  "DCGM error code")
            check(value(text, r'DCGM_FI_DEV_FABRIC_CLIQUE_ID\{gpu="0",.*?\}') == 1, "clique")
            verdicts = [native(text, "gpuscope_gpu_health", g, ',check="fabric"')
                        for g in range(8)]
            check(verdicts == [0, 1, 2, 1, 1, 2, 1, 2], "fabric verdicts %s" % verdicts)

    def test_promtool_check_metrics(self):
        need_tool("promtool", "prometheus")
        with Serve(["--simulate", SCENARIO, "--metrics", "native", "-c", "200", "--profile",
                    "full"], env=AFTER_FAULTS) as s:
            s.wait_metrics(lambda t: 'check="fabric"' in t, "fabric check", timeout=30)
            time.sleep(0.5)
            status, _, text = s.get("/metrics")
            check(status == 200, status)
            rc, out = promtool(["check", "metrics"], text)
            check(rc == 0 and out == "", "promtool says (rc %d):\n%s" % (rc, out))

    def test_health_cli(self):
        code, out, err = run(["health", "--simulate", SCENARIO], env=AFTER_FAULTS, timeout=60)
        check(code == 20, "exit %d, want 20 (a GPU fails, docs/cli.md):\n%s%s" % (code, out, err))
        for needle in ("fabric registration failed: NVML code 999", "fabric route unhealthy",
                       "fabric incorrect configuration: no partition"):
            check(needle in out, "%r missing:\n%s" % (needle, out))
        code, out, err = run(["health", "--json", "--simulate", SCENARIO], env=AFTER_FAULTS,
                             timeout=60)
        doc = json.loads(out)
        fabric = {g["gpu"]: g["checks"]["fabric"]["verdict"] for g in doc["gpus"]}
        check(fabric == {0: "ok", 1: "warn", 2: "fail", 3: "warn", 4: "warn", 5: "fail",
                         6: "warn", 7: "fail"}, fabric)
        code, out, err = run(["health", "--simulate", "gb200-tray"], timeout=60)
        check(code == 0, "healthy tray: exit %d\n%s%s" % (code, out, err))

    def test_older_gpus_unchanged(self):
        with Serve(["--simulate", "training-8xh100", "-c", "200", "--profile", "full"]) as s:
            s.wait_healthy()
            time.sleep(0.5)
            _, _, text = s.get("/metrics")
            check("gpuscope_fabric" not in text and 'check="fabric"' not in text,
                  "fabric series on an H100 node")


if __name__ == "__main__":
    main()
