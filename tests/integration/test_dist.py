#!/usr/bin/env python3
"""The self-contained copy (scripts/dist.sh) and the real-driver check
(scripts/real_gpu_check.sh) that runs it beside nvidia-smi.

dist.sh must give a directory whose binary resolves every library from its own
lib/ or glibc and runs the simulator from there. real_gpu_check.sh is run with
a stand-in nvidia-smi that answers from the same simulator, except that it
renames the GPUs: the check must find every shared field equal but `name`, and
write /metrics, health and diagnose output. Env: GPUSCOPE_BUILD_DIR,
GPUSCOPE_SOURCE_DIR. About 15 s.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, SOURCE_DIR, check, check_exit, clean_env,  # noqa: E402
                              need_tool, main, sanitizer_report)

FAKE_SMI = """#!/bin/sh
gs="{gs}"
case "$1" in
  --version) echo "NVIDIA-SMI stand-in" ;;
  --help-query-gpu) "$gs" query --help-query-gpu ;;  # nvidia-smi's layout
  --query-gpu=*) "$gs" query "$@" | sed 's/NVIDIA H100 80GB HBM3/NVIDIA H100 renamed/' ;;
  -q) echo "==============NVSMI LOG==============" ;;
esac
"""


def make_dist(workdir):
    dist = os.path.join(workdir, "dist")
    p = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "dist.sh"), BUILD_DIR, dist],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "dist.sh failed:\n" + p.stdout + p.stderr)
    gs = os.path.join(dist, "gpuscope")
    env = clean_env({"LD_LIBRARY_PATH": "", "ASAN_OPTIONS": "detect_leaks=0"})
    modules = [os.path.join(dist, "lib", m)
               for m in ("libgpuscope-grpc.so", "libgpuscope-curl.so", "libgpuscope-otlp.so")]
    ldd = subprocess.run(["ldd", gs] + modules, capture_output=True, text=True, env=env).stdout
    check("not found" not in ldd, "a library is missing:\n" + ldd)
    for lib in ("libgrpc++", "libcurl", "libprotobuf", "libyaml-cpp", "libstdc++"):
        m = re.search(r"^\s*%s\S* => (\S+)" % re.escape(lib), ldd, re.M)
        check(m and m.group(1).startswith(os.path.join(dist, "lib")),
              "%s is not taken from dist/lib:\n%s" % (lib, ldd))
    # The agent itself maps neither gRPC, libcurl nor libprotobuf: they come with the modules;
    # nor GnuTLS, loaded on first use from lib/.
    own = subprocess.run(["ldd", gs], capture_output=True, text=True, env=env).stdout
    check(not re.search(r"libgrpc|libcurl|libprotobuf|libgnutls|libmicrohttpd", own),
          "the binary links them:\n" + own)
    gnutls = os.path.join(dist, "lib", "libgnutls.so.30")
    check(os.path.exists(gnutls), "dist/lib lacks libgnutls.so.30")
    tls_deps = subprocess.run(["ldd", gnutls], capture_output=True, text=True, env=env).stdout
    check("not found" not in tls_deps, "a library of GnuTLS is missing:\n" + tls_deps)
    # The HTTP client's module loads from lib/: the error is curl's, not a missing module.
    p = subprocess.run([gs, "diagnose", "--agent", "http://127.0.0.1:9"], capture_output=True,
                       text=True, env=env, timeout=60)
    check(p.returncode != 0 and "module" not in p.stderr and "127.0.0.1" in p.stderr,
          "diagnose --agent from dist: rc %d\n%s" % (p.returncode, p.stderr))
    # An install (the container image): bin/gpuscope and lib/gpuscope/ beside it.
    root = os.path.join(workdir, "install")
    os.makedirs(os.path.join(root, "bin"))
    os.makedirs(os.path.join(root, "lib", "gpuscope"))
    shutil.copy(gs, os.path.join(root, "bin"))
    shutil.copy(modules[1], os.path.join(root, "lib", "gpuscope"))
    p = subprocess.run([os.path.join(root, "bin", "gpuscope"), "diagnose", "--agent",
                        "http://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode != 0 and "module" not in p.stderr and "127.0.0.1" in p.stderr,
          "diagnose --agent from an install: rc %d\n%s" % (p.returncode, p.stderr))
    p = subprocess.run([gs, "--simulate", "idle-node"], capture_output=True, text=True,
                       env=env, timeout=60)
    check_exit("dist gpuscope --simulate idle-node", p.returncode, p.stdout + p.stderr)
    check("simulated node (scenario idle-node)" in p.stdout, p.stdout)
    return dist


def real_gpu_check(workdir, dist):
    smi_dir = os.path.join(workdir, "bin")
    os.makedirs(smi_dir)
    smi = os.path.join(smi_dir, "nvidia-smi")
    with open(smi, "w") as f:
        f.write(FAKE_SMI.format(gs=os.path.join(dist, "gpuscope")))
    os.chmod(smi, 0o755)
    out = os.path.join(workdir, "out")
    env = clean_env({
        "PATH": smi_dir + os.pathsep + os.environ["PATH"],
        "GPUSCOPE_NVML_LIB": os.path.join(dist, "sim", "libnvidia-ml.so.1"),
        "GPUSCOPE_SIM_SCENARIO": os.path.join(dist, "sim", "scenarios", "training-8xh100.yaml"),
        "GPUSCOPE_SIM_FROZEN_TIME": "60", "ASAN_OPTIONS": "detect_leaks=0"})
    p = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "real_gpu_check.sh"), dist, out],
                       capture_output=True, text=True, env=env, timeout=240)
    check(p.returncode == 0, "real_gpu_check.sh failed:\n" + p.stdout + p.stderr)
    read = lambda name: open(os.path.join(out, name)).read()
    diff = read("query-diff.txt")
    different = re.findall(r"^gpu (\d+) (\S+): DIFFERENT", diff, re.M)
    check(sorted(different) == sorted((str(g), "name") for g in range(8)),
          "expected exactly `name` to differ on 8 GPUs:\n" + diff[:3000])
    check("'equal': " in diff and "'equal': 0" not in diff, diff[:300])
    check(re.search(r"^DCGM_FI_DEV_POWER_USAGE\{", read("metrics.prom"), re.M),
          "no power series in metrics.prom")
    check("GPU 0:" in read("diagnose.txt"), read("diagnose.txt"))
    for name in ("serve.log", "diagnose.txt", "health.txt", "query.stderr"):
        report = sanitizer_report(read(name))
        check(report is None, "%s has a sanitizer report:\n%s" % (name, report))


class DistTest(unittest.TestCase):
    def test_dist_and_real_gpu_check(self):
        need_tool("ldd", "libc-bin")
        need_tool("curl", "curl")
        with tempfile.TemporaryDirectory() as workdir:
            real_gpu_check(workdir, make_dist(workdir))
        print("dist and real_gpu_check: ok")


if __name__ == "__main__":
    main()
