#!/usr/bin/env python3
"""GPM series at the minimum interval, and /health, /ready when every GPU hangs
(issue 15).

- `gpuscope serve --simulate training-8xh100 -c 100` with every DCGM_FI_PROF_*
  field enabled: 50 consecutive scrapes, spaced so that they land on many
  different cycles, all carry every GPM family for all 8 GPUs (a GPM sample
  less than 100 ms after the last one used to drop its values, so series
  flickered in and out).
- Every GPU's power call hangs (simulator control file, `inject all hang`):
  the sampler keeps cycling but no GPU has fresh data, so /health answers 503
  naming the stale GPUs, and /ready answers 503 with no detail; both turn 200
  again once the hang is cleared and the calls return.
- With basic auth on, /ready answers without credentials (a kubelet httpGet
  probe cannot send any) and says nothing but ready/not ready; /health and
  /metrics still want credentials.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib + htpasswd. ~30 s.
"""
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (Serve, check, main, parse_exposition, temp_dir,  # noqa: E402
                              wait_until)

GPM_FIELDS = ["GR_ENGINE_ACTIVE", "SM_ACTIVE", "SM_OCCUPANCY", "PIPE_TENSOR_ACTIVE",
              "PIPE_TENSOR_HMMA_ACTIVE", "DRAM_ACTIVE", "PIPE_FP64_ACTIVE", "PIPE_FP32_ACTIVE",
              "PIPE_FP16_ACTIVE", "PCIE_TX_BYTES", "PCIE_RX_BYTES", "NVLINK_TX_BYTES",
              "NVLINK_RX_BYTES"]
NATIVE_GPM = ["gpuscope_sm_active_ratio", "gpuscope_sm_occupancy_ratio",
              "gpuscope_pipe_active_ratio"]
SCRAPES = 50


def gpus_per_family(text):
    """{sample name: the gpu labels it has}."""
    out = {}
    for sample in parse_exposition(text).samples:
        if "gpu" in sample.labels:
            out.setdefault(sample.name, set()).add(sample.labels["gpu"])
    return out


class ServeGpmHealthTest(unittest.TestCase):
    def setUp(self):
        self.d = temp_dir(self, "gpuscope-gpm-health-")

    def test_gpm_never_flickers(self):
        counters = os.path.join(self.d, "gpm.csv")
        with open(counters, "w") as f:
            f.write("DCGM_FI_DEV_GPU_TEMP, gauge, t\n")
            for field in GPM_FIELDS:
                f.write("DCGM_FI_PROF_%s, gauge, gpm\n" % field)
        # The full profile: every native GPM family, some of them full only.
        with Serve(["--simulate", "training-8xh100", "-c", "100", "-f", counters,
                    "--profile", "full"]) as s:
            s.wait_healthy()
            wanted = ["DCGM_FI_PROF_" + f for f in GPM_FIELDS] + NATIVE_GPM
            all_gpus = {str(g) for g in range(8)}
            wait_until(lambda: all(gpus_per_family(s.get("/metrics")[2]).get(n) == all_gpus
                                 for n in wanted), "every GPM family on every GPU", timeout=20)
            missing = []
            sequences = set()
            for i in range(SCRAPES):
                status, _, text = s.get("/metrics")
                check(status == 200, "scrape %d: %s" % (i, status))
                families = gpus_per_family(text)
                for name in wanted:
                    if families.get(name) != all_gpus:
                        missing.append((i, name, sorted(all_gpus - families.get(name, set()))))
                sequences.add(re.search(r"^gpuscope_last_collect_timestamp_seconds (\S+)$", text,
                                        re.M).group(1))
                time.sleep(0.037 * (1 + i % 3))  # 37-111 ms: lands on many different cycles
            check(not missing, "GPM series flickered in %d of %d scrapes: %s"
                  % (len({m[0] for m in missing}), SCRAPES, missing[:10]))
            check(len(sequences) >= 20, "only %d distinct cycles scraped" % len(sequences))
            print("gpm: %d scrapes over %d cycles at -c 100, every GPM family on all 8 GPUs"
                  % (SCRAPES, len(sequences)))

    def test_all_gpus_hung(self):
        control = os.path.join(self.d, "control")
        open(control, "w").close()
        with Serve(["--simulate", "training-8xh100", "-c", "200", "--stale-after", "2s"],
                   env={"GPUSCOPE_SIM_CONTROL": control}) as s:
            s.wait_healthy()
            check(s.get("/ready")[:3:2] == (200, "ready\n"), "ready: %s" % (s.get("/ready"),))
            with open(control, "a") as f:
                f.write("inject all hang nvmlDeviceGetPowerUsage 5\n")
            wait_until(lambda: s.get("/health")[0] == 503, "/health 503 with every GPU hung",
                       timeout=20)
            status, _, body = s.get("/health")
            check("no GPU has fresh data: 8 stale" in body, "/health reason: %r" % body)
            status, _, body = s.get("/ready")
            check((status, body) == (503, "not ready\n"), "/ready: %s %r" % (status, body))
            check(s.get("/metrics")[0] == 200, "/metrics must keep answering")
            with open(control, "a") as f:
                f.write("clear all hang\n")
            wait_until(lambda: s.get("/health")[0] == 200, "/health 200 after the hang", timeout=20)
            check(s.get("/ready")[0] == 200, "/ready after the hang")
            print("hung: /health and /ready 503 while all 8 GPUs hung, 200 after")

    def test_ready_without_credentials(self):
        hashed = subprocess.run(["htpasswd", "-nbBC", "10", "u", "p"], capture_output=True,
                                text=True, check=True).stdout.strip().split(":", 1)[1]
        web = os.path.join(self.d, "web.yml")
        with open(web, "w") as f:
            f.write("basic_auth_users:\n  u: '%s'\n" % hashed)
        with Serve(["--simulate", "training-8xh100", "-c", "200", "--web-config-file", web]) as s:
            wait_until(lambda: s.get("/ready")[0] == 200, "/ready without credentials", timeout=20)
            status, _, body = s.get("/ready")
            check(body == "ready\n", "/ready says more than ready: %r" % body)
            check(s.get("/health")[0] == 401, "/health must want credentials")
            check(s.get("/metrics")[0] == 401, "/metrics must want credentials")
            check(s.get("/ready?x=1")[0] == 200, "query string")
            print("auth: /ready 200 without credentials, /health and /metrics 401")


if __name__ == "__main__":
    main()
