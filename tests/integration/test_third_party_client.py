#!/usr/bin/env python3
"""A third-party NVML client runs unchanged against the simulator.

Debian bookworm packages no NVML client in main (nvtop is in contrib; gpustat
and pynvml are PyPI only), so tests/clients/nvtop_startup.c follows nvtop's
NVIDIA start-up as its public source describes it: dlopen libnvidia-ml.so
(then .so.1), the symbols nvtop requires with its newest-version-first
fallbacks (one missing: "No GPU to monitor"), nvmlInit, then per GPU a handle,
PCI info and one refresh's reads. The test builds it with the system C
compiler, points LD_LIBRARY_PATH at the simulator and checks it sees every GPU
with the names and bus ids `gpuscope query` prints, and N/A utilization on the
MIG-enabled GPU. With no library on the path it must refuse as nvtop does.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. Needs cc (build-essential). ~3 s.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, SOURCE_DIR, check, clean_env, need_tool,  # noqa: E402
                              run, main, sanitized)

CLIENT = os.path.join(SOURCE_DIR, "tests", "clients", "nvtop_startup.c")
SIM_DIR = os.path.join(BUILD_DIR, "sim")
FROZEN = {"GPUSCOPE_SIM_FROZEN_TIME": "30"}


def build(workdir):
    cc = need_tool("cc", "build-essential")
    exe = os.path.join(workdir, "nvtop_startup")
    p = subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-o", exe, CLIENT, "-ldl"] +
                       sanitized(), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "cc failed:\n" + p.stderr)
    return exe


def client(exe, scenario, lib_dir):
    env = clean_env(dict(FROZEN, GPUSCOPE_SIM_SCENARIO=scenario, LD_LIBRARY_PATH=lib_dir,
                         ASAN_OPTIONS="detect_leaks=0"))
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, p.stdout + p.stderr


def expected(scenario):
    code, out, err = run(["query", "--simulate", scenario, "--format=csv,noheader",
                          "--query-gpu=index,name,pci.bus_id,utilization.gpu"], FROZEN)
    check(code == 0, err)
    return [[c.strip() for c in line.split(",")] for line in out.splitlines()]


class ThirdPartyClientTest(unittest.TestCase):
    def test_nvtop_style_client_on_the_simulator(self):
        with tempfile.TemporaryDirectory() as d:
            exe = build(d)
            for scenario in ("training-8xh100", "mixed-node", "gb200-tray"):
                code, out = client(exe, scenario, SIM_DIR)
                check(code == 0, "%s: exit %d:\n%s" % (scenario, code, out))
                check("No GPU to monitor" not in out, out)
                gpus = re.findall(r"^GPU (\d+): (.*?) \| (\S+) \| util (\S+) ", out, re.M)
                want = expected(scenario)
                check(len(gpus) == len(want), "%s: saw %d GPUs, query %d:\n%s" %
                      (scenario, len(gpus), len(want), out))
                for (index, name, bus, util), (w_index, w_name, w_bus, w_util) in zip(gpus, want):
                    check((index, name, bus) == (w_index, w_name, w_bus),
                          "%s: %r vs query %r" % (scenario, (index, name, bus), (w_index, w_name, w_bus)))
                    check(util == ("N/A" if w_util == "[N/A]" else w_util.replace(" %", "%")),
                          "%s GPU %s: util %s, query %s" % (scenario, index, util, w_util))
                if scenario == "mixed-node":
                    check(gpus[7][3] == "N/A", "MIG parent utilization: " + gpus[7][3])
                print(out.strip().splitlines()[0])
            # No libnvidia-ml on the path: the client refuses, as nvtop does.
            code, out = client(exe, "training-8xh100", d)
            check(code == 1 and "No GPU to monitor" in out,
                  "without the library: %d %s" % (code, out))


if __name__ == "__main__":
    main()
