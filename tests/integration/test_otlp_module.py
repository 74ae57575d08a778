#!/usr/bin/env python3
"""The OTLP receiver's wire module (src/otlp/wire.h, libgpuscope-otlp.so):
an agent maps libprotobuf only once an application posts, and an install
that lacks the module keeps serving /metrics and answers each OTLP request
503 with the reason (the module's name), counted in
gpuscope_otlp_requests_total. A module the agent was not built with is
refused the same way, before it is mapped, and the agent lives on (issue 39,
item 11): a truncated copy (it killed the agent with SIGBUS), and one of
another build (its build id changed: another version installed mid-upgrade
crashed it with SIGSEGV). ~10 s.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import BUILD_DIR, GPUSCOPE, Serve, check, free_port, main  # noqa: E402

SCENARIO = os.path.join(BUILD_DIR, "sim", "scenarios", "idle-node.yaml")
GAUGE = json.dumps({"resourceMetrics": [{
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "trainer"}}]},
    "scopeMetrics": [{"metrics": [{"name": "training.step.duration", "unit": "s",
                                   "gauge": {"dataPoints": [{"asDouble": 0.25}]}}]}]}]}).encode()


def post(port):
    req = urllib.request.Request("http://127.0.0.1:%d/v1/metrics" % port, data=GAUGE,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def mapped(pid):
    with open("/proc/%d/maps" % pid) as f:
        return {os.path.basename(line.split()[-1]) for line in f if "/" in line}


def last_load_offset(elf):
    """The file offset of an ELF64 file's last PT_LOAD segment."""
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    offsets = []
    for i in range(phnum):
        p_type, _, p_offset = struct.unpack_from("<IIQ", elf, phoff + i * phentsize)
        if p_type == 1:  # PT_LOAD
            offsets.append(p_offset)
    return max(offsets)


def serve(binary, env=None):
    port = free_port()
    agent = Serve(["--simulate", SCENARIO, "--otlp-listen-address", "127.0.0.1:%d" % port],
                  binary=binary, env=env)
    agent.otlp_port = port
    return agent


class OtlpModuleTest(unittest.TestCase):
    def test_protobuf_mapped_on_first_request(self):
        with serve(GPUSCOPE) as agent:
            agent.wait_healthy()
            before = mapped(agent.proc.pid)
            check(not any(m.startswith("libprotobuf") for m in before),
                  "libprotobuf mapped before any request: %s" % sorted(before))
            status, body = post(agent.otlp_port)
            check(status == 200, "POST: %d %s" % (status, body))
            after = mapped(agent.proc.pid)
            check("libgpuscope-otlp.so" in after and
                  any(m.startswith("libprotobuf") for m in after),
                  "module and libprotobuf mapped after the request: %s" % sorted(after))
            agent.wait_metrics(lambda b: "gpuscope_app_training_step_duration_seconds" in b,
                               "the posted KPI on /metrics")

    def install(self, d, module=None):
        """A copy of the agent in d, with `module` (bytes) as its OTLP module
        beside it, or none; returns (binary, environment)."""
        binary = os.path.join(d, "gpuscope")
        shutil.copy(GPUSCOPE, binary)
        if module is not None:
            with open(os.path.join(d, "libgpuscope-otlp.so"), "wb") as f:
                f.write(module)
        return binary, {"GPUSCOPE_NVML_LIB": os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1")}

    def check_refused(self, binary, env, reason):
        """Each POST answers 503 naming reason; the agent logs it once and lives on."""
        with serve(binary, env) as agent:
            agent.wait_healthy()
            for _ in range(2):
                status, body = post(agent.otlp_port)
                check(status == 503 and "libgpuscope-otlp.so" in body and reason in body,
                      "POST: %d %s" % (status, body))
            text = agent.wait_metrics(
                lambda b: re.search(r'^gpuscope_otlp_requests_total\{code="503"\} 2$', b,
                                    re.M), "the 503s counted")
            check("DCGM_FI_DEV_GPU_TEMP" in text, "GPU metrics still served")
            check(agent.proc.poll() is None, "the agent died")
            check(reason in agent.output() and "answers 503" in agent.output(),
                  "no log line:\n" + agent.output()[-2000:])

    def test_install_without_the_module(self):
        with tempfile.TemporaryDirectory() as d:
            binary, env = self.install(d)  # alone: no module beside it, no lib/
            self.check_refused(binary, env, "not found")

    def test_truncated_module_is_refused(self):
        with open(os.path.join(BUILD_DIR, "libgpuscope-otlp.so"), "rb") as f:
            module = f.read()
        # Cut a page into its last loaded segment (the data the loader relocates): mapped, the
        # missing pages are a SIGBUS.
        cut = last_load_offset(module) + 4096
        with tempfile.TemporaryDirectory() as d:
            binary, env = self.install(d, module[:cut])
            self.check_refused(binary, env, "truncated")

    def test_module_of_another_build_is_refused(self):
        path = os.path.join(BUILD_DIR, "libgpuscope-otlp.so")
        notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
        build_id = bytes.fromhex(re.search(r"Build ID: ([0-9a-f]+)", notes).group(1))
        with open(path, "rb") as f:
            module = bytearray(f.read())
        at = module.find(b"GNU\0" + build_id)
        check(at > 0, "the build id note is not in the file")
        module[at + 4] ^= 0x5a  # what a module of another build or version differs in
        with tempfile.TemporaryDirectory() as d:
            binary, env = self.install(d, bytes(module))
            self.check_refused(binary, env, "not the one this gpuscope was built with")


if __name__ == "__main__":
    main()
