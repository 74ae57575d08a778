#!/usr/bin/env python3
"""vGPU (issue 43), end to end on the simulator.

Host: sim/scenarios/vgpu/host.yaml, two H100s each carrying three virtual GPUs
of different VMs. Each instance gets its own series (native gpuscope_vgpu_*
and dcgm-exporter's DCGM_FI_DEV_VGPU_MEMORY_USAGE) labelled with the
instance, its type and its VM; the VM is the board's holder, so the job
ledger and `gpuscope report tenants` list the six VMs; `promtool check
metrics` accepts the output; the tenant-c VM's licence lapses at 8 s and the
host sees its grace period.

Guest: sim/scenarios/vgpu/guest.yaml, a VM whose vGPU licence lapses 5 s
into the run: DCGM_FI_DEV_VGPU_LICENSE_STATUS goes 1 -> 0, the native state
5 -> 2 (grace period), the license health check warns; the counters file
that lists DCGM_FI_DEV_VGPU_LICENSE_STATUS starts without a warning.
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (SOURCE_DIR, Serve, check, main, parse_exposition,  # noqa: E402
                              promtool, run, wait_until)

HOST = os.path.join(SOURCE_DIR, "sim", "scenarios", "vgpu", "host.yaml")
GUEST = os.path.join(SOURCE_DIR, "sim", "scenarios", "vgpu", "guest.yaml")
VM = "0c8f1a2e-%s-4a7b-9d3e-5a1b2c3d4e0%d"
# vm id -> (gpu, vGPU type, framebuffer used MiB, granted SM share)
INSTANCES = {
    VM % ("1111", 1): ("0", "GRID H100-20C", 14336, 0.4),
    VM % ("2222", 2): ("0", "GRID H100-10C", 8192, 0.3),
    VM % ("3333", 3): ("0", "GRID H100-40C", 30720, 0.3),
    VM % ("4444", 4): ("1", "GRID H100-20C", 6144, 0.3),
    VM % ("5555", 5): ("1", "GRID H100-20C", 9216, 0.2),
    VM % ("6666", 6): ("1", "GRID H100-20C", 12288, 0.0),
}
LAPSING_VM = VM % ("3333", 3)


def by_vm(body, name):
    return {s.labels["vm_id"]: s for s in parse_exposition(body).find(name)}


class VgpuHostTest(unittest.TestCase):
    def serve(self, *extra):
        return Serve(["--simulate", HOST, "--slow-interval", "1s", "--attribution-refresh",
                      "500ms", "-c", "200"] + list(extra))

    def test_per_instance_series_labels_and_tenants(self):
        with self.serve() as agent:
            body = agent.wait_metrics(
                lambda b: len(by_vm(b, "gpuscope_vgpu_sm_utilization_ratio")) == 6,
                "six vGPU instances")
            sm = by_vm(body, "gpuscope_vgpu_sm_utilization_ratio")
            mib = by_vm(body, "DCGM_FI_DEV_VGPU_MEMORY_USAGE")
            used = by_vm(body, "gpuscope_vgpu_framebuffer_used_bytes")
            for vm, (gpu, vgpu_type, fb_mib, share) in INSTANCES.items():
                s = sm[vm]
                check(s.labels["gpu"] == gpu and s.labels["vgpu_type"] == vgpu_type and
                      s.labels["workload"] == vm and s.labels["vgpu"].isdigit() and
                      s.labels.get("vgpu_uuid"),
                      "labels of %s: %s" % (vm, s.labels))
                check(abs(s.value - share) < 0.011, "SM share of %s: %s" % (vm, s.value))
                check(mib[vm].value == fb_mib and mib[vm].labels["gpu"] == gpu and
                      mib[vm].labels["vgpu_id"] == s.labels["vgpu"],
                      "DCGM_FI_DEV_VGPU_MEMORY_USAGE of %s: %s" % (vm, mib[vm]))
                check(used[vm].value == fb_mib * 1048576, "bytes of %s" % vm)
            # The board holds each VM's whole framebuffer (20 + 10 + 40 GiB on GPU 0).
            board = parse_exposition(body).find("gpuscope_memory_used_bytes", gpu="0")
            check(board and board[0].value == 70 * 1024 ** 3,
                  "GPU 0's memory is its vGPUs' framebuffers: %s" % board)
            # The lapsing VM: licensed, then in the grace period (state 2).
            agent.wait_metrics(lambda b: by_vm(b, "gpuscope_vgpu_instance_license_state")
                               [LAPSING_VM].value == 2, "tenant-c's grace period", timeout=20)
            states = by_vm(agent.get("/metrics")[2], "gpuscope_vgpu_instance_license_state")
            check(all(states[vm].value == 5 for vm in INSTANCES if vm != LAPSING_VM),
                  "the other VMs licensed: %s" % {k: v.value for k, v in states.items()})
            # The JSON API: each board's instances under it, as the web page's cards show them.
            status, _, api = agent.get("/api/v1/gpus")
            check(status == 200, "/api/v1/gpus: %s" % status)
            devices = json.loads(api)["devices"]
            vgpus = {v["vm_id"]: (d["gpu"], v) for d in devices for v in d.get("vgpus", [])}
            check(set(vgpus) == set(INSTANCES), "the API's vGPUs: %s" % sorted(vgpus))
            for vm, (gpu, v) in vgpus.items():
                check(str(gpu) == INSTANCES[vm][0] and v["type"] == INSTANCES[vm][1] and
                      v["fb_used_bytes"] == INSTANCES[vm][2] * 1048576 and v["vm"] == vm and
                      "license_state" in v and "sm_utilization" in v,
                      "API entry of %s: %s" % (vm, v))
            # The VMs hold the boards: the ledger and the tenant report see each one.
            wait_until(lambda: len(self.workloads(agent)) == 6, "six VM workloads in the ledger",
                       timeout=20)
            code, out, err = run(["report", "tenants", "--by", "workload", "--json", "--agent",
                                  agent.base])
            check(code == 0, "report tenants: %s %s" % (out, err))
            holders = {r["holder"] for r in json.loads(out)["tenants"]}
            check(all(any(vm in h for h in holders) for vm in INSTANCES),
                  "report tenants lists each VM: %s" % holders)

    def workloads(self, agent):
        status, _, body = agent.get("/api/v1/jobs?kind=workload")
        check(status == 200, "/api/v1/jobs: %s %s" % (status, body))
        return {j["id"] for j in json.loads(body)["jobs"] if j["id"] in INSTANCES}

    def test_promtool_and_info_mode(self):
        with self.serve("--metrics", "native", "--attribution-labels", "info") as agent:
            body = agent.wait_metrics(
                lambda b: len(by_vm(b, "gpuscope_vgpu_sm_utilization_ratio")) == 6 and
                "gpuscope_gpu_holder_info" in b, "six vGPU instances and the holders")
            rc, out = promtool(["check", "metrics"], body)
            check(rc == 0 and out == "", "promtool says (rc %d):\n%s" % (rc, out))
            sm = by_vm(body, "gpuscope_vgpu_sm_utilization_ratio")
            check(all("workload" not in s.labels for s in sm.values()),
                  "info mode: no holder labels on the instance series")
            holders = {s.labels["workload"] for s in
                       parse_exposition(body).find("gpuscope_gpu_holder_info")}
            check(holders == set(INSTANCES), "the VMs hold the boards: %s" % holders)


class VgpuGuestTest(unittest.TestCase):
    def test_licence_lapses_mid_run(self):
        work = tempfile.mkdtemp(prefix="gpuscope-vgpu-")
        counters = os.path.join(work, "counters.csv")
        with open(counters, "w") as f:
            f.write("DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).\n"
                    "DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status\n")
        with Serve(["--simulate", GUEST, "--slow-interval", "1s", "-f", counters]) as agent:
            body = agent.wait_metrics(lambda b: "DCGM_FI_DEV_VGPU_LICENSE_STATUS" in b,
                                      "the licence served in the guest")
            exp = parse_exposition(body)
            check(exp.value("DCGM_FI_DEV_VGPU_LICENSE_STATUS") == 1 and
                  exp.value("gpuscope_vgpu_license_state") == 5, "licensed at first")
            body = agent.wait_metrics(
                lambda b: parse_exposition(b).value("gpuscope_vgpu_license_state") == 2,
                "the grace period after the licence lapsed", timeout=20)
            exp = parse_exposition(body)
            check(exp.value("DCGM_FI_DEV_VGPU_LICENSE_STATUS") == 0, "unlicensed")
            check(exp.value("gpuscope_gpu_health", check="license") == 1,
                  "the license check warns in the grace period: %s" %
                  exp.find("gpuscope_gpu_health"))
            check("VGPU_LICENSE_STATUS" not in agent.output(),
                  "no start-up warning about the licence field: %s" % agent.output())
        # One-shot health at the scenario's start, then at its settled moment (the lapse
        # plus 5 minutes: inside the 20-minute grace period).
        for at, verdict in (("0", "ok"), (None, "warn")):
            code, out, err = run(["health", "--simulate", GUEST, "--json"] +
                                 (["--at", at] if at else []))
            check(code == 0, "health in the guest: %s %s" % (out, err))
            checks = json.loads(out)["gpus"][0]["checks"]
            check(checks.get("license", {}).get("verdict") == verdict,
                  "license %s at %s: %s" % (verdict, at or "the settled moment", checks))


class BareMetalTest(unittest.TestCase):
    def test_no_vgpu_series(self):
        training = os.path.join(SOURCE_DIR, "sim", "scenarios", "training-8xh100.yaml")
        with Serve(["--simulate", training, "--slow-interval", "1s"]) as agent:
            body = agent.wait_metrics(lambda b: "gpuscope_gpu_info" in b, "first scrape")
            names = {s.name for s in parse_exposition(body).samples}
            check(not [n for n in names if n.startswith(("gpuscope_vgpu", "DCGM_FI_DEV_VGPU"))],
                  "no vGPU series on bare metal: %s" % sorted(names))
            check(not parse_exposition(body).find("gpuscope_gpu_health", check="license"),
                  "no license check on bare metal")


if __name__ == "__main__":
    main()
