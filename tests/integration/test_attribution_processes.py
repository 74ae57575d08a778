#!/usr/bin/env python3
"""Per-process attribution end to end: `gpuscope serve --process-series 2
--process-names` on a simulated node whose processes have cgroups under a fake
/proc root, with a fake kubelet (fake_kubelet.py) and a fake container runtime
(fake_cri.py).

GPU 0 is granted to one container: the CRI names its containerised processes,
a host process is nobody's, and the third process by memory is summed into
pid="other". GPU 1 is time-sliced by two pods: only the CRI can say which
process is whose. GPU 2 is split into two MIG instances: the busy
one carries its own GPM activity and its process, the idle one reads zero.
The summary and `health --json` say whose each process is.
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, need, parse_exposition, run  # noqa: E402

# Under ASan, Debian 12's LeakSanitizer crashes at exit ("Tracer caught signal
# 11") walking the dynamic TLS of the dlopen'ed gRPC module after the kubelet
# and CRI clients ran in one command; without TLS roots it runs. Only here:
# elsewhere use_tls=0 reports glibc's dlerror buffer as a leak.
os.environ.setdefault("LSAN_OPTIONS", "use_tls=0")

try:
    from fake_cri import FakeCri
    from fake_kubelet import FakeKubelet
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeKubelet = None

SCENARIO = """seed: 7
gpus:
  - model: h100-sxm
    workload: [{at: 0, kind: training}]
    processes:
      - {pid: 5000, name: python3, used_memory_gib: 40}
      - {pid: 5001, name: Xorg, used_memory_gib: 0.5, type: graphics, sm_share: 0}
      - {pid: 5002, name: helper, used_memory_gib: 1}
  - model: h100-sxm
    workload: [{at: 0, kind: inference}]
    processes:
      - {pid: 5100, name: api-server, used_memory_gib: 10}
      - {pid: 5101, name: web-server, used_memory_gib: 8}
  - model: h100-sxm
    mig: {instances: [3g.40gb, 2g.20gb]}
    workload: [{at: 0, kind: training}]
    processes:
      - {pid: 5200, name: python3, used_memory_gib: 20, gpu_instance: 0}
"""
CONTAINERD = ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f9e8d7c_6b5a_"
              "4c3d_9e2f_1a0b9c8d7e6f.slice/cri-containerd-%s.scope\n")


def series(body, family):
    """(labels, value) of each sample named family."""
    return [(s.labels, s.value) for s in parse_exposition(body).find(family)]


def write_proc(root):
    cgroups = {5000: CONTAINERD % ("a" * 64), 5002: CONTAINERD % ("a" * 64),
               5001: "0::/user.slice/user-0.slice/session-1.scope\n",
               5100: CONTAINERD % ("b" * 64), 5101: CONTAINERD % ("c" * 64),
               5200: CONTAINERD % ("d" * 64)}
    for pid, text in cgroups.items():
        os.makedirs(os.path.join(root, str(pid)))
        with open(os.path.join(root, str(pid), "cgroup"), "w") as f:
            f.write(text)


def check_metrics(body, mig_gi):
    memory = series(body, "gpuscope_process_memory_used_bytes")
    by_pid = {(l["gpu"], l.get("gpu_instance", ""), l["pid"]): (l, v) for l, v in memory}
    check(set(by_pid) == {("0", "", "5000"), ("0", "", "5002"), ("0", "", "other"),
                          ("1", "", "5100"), ("1", "", "5101"), ("2", mig_gi, "5200")},
          "process series: %s" % sorted(by_pid))
    trainer, value = by_pid[("0", "", "5000")]
    check(trainer.get("pod") == "trainer-7d9f8c6b4-x2kq9" and trainer.get("container") == "main"
          and trainer.get("workload") == "trainer" and trainer.get("type") == "compute"
          and trainer.get("process_name") == "python3" and value == 40 * 2**30,
          "GPU 0's trainer: %s %s" % (trainer, value))
    check(by_pid[("0", "", "5002")][0].get("pod") == "trainer-7d9f8c6b4-x2kq9",
          "the CRI names the helper too")
    other, value = by_pid[("0", "", "other")]
    check(value == 2**29 and "pod" not in other and "type" not in other,
          "the host's Xorg is summed into other: %s %s" % (other, value))
    check(by_pid[("1", "", "5100")][0].get("pod") == "api-b2c4d" and
          by_pid[("1", "", "5101")][0].get("pod") == "web-x2kq9",
          "the CRI names the shared GPU's processes: %s" % [by_pid[("1", "", p)] for p in
                                                           ("5100", "5101")])
    mig, _ = by_pid[("2", mig_gi, "5200")]
    check(mig.get("uuid", "").startswith("MIG-") and mig.get("pod") == "slice-a-0",
          "the MIG process: %s" % mig)
    sm = {(l["gpu"], l["pid"]): v for l, v in series(body, "gpuscope_process_sm_utilization_ratio")}
    check(sm.get(("0", "5000"), 0) > 0.3 and ("2", "5200") not in sm,
          "SM utilization per process (none on MIG): %s" % sm)
    # Self-metrics keep one series per device, whoever holds it (docs/attribution.md).
    collector = series(body, "gpuscope_collector_up")
    check(len(collector) == 5 and all(set(l) <= {"gpu", "gpu_instance", "compute_instance"}
                                      for l, _ in collector),
          "gpuscope_collector_up without attribution labels: %s" % collector)
    up = series(body, "gpuscope_attribution_up")
    check(({"source": "cri"}, 1.0) in up and ({"source": "kubelet"}, 1.0) in up,
          "sources up: %s" % up)


def check_mig_activity(agent, mig_gi):
    def instances(body):
        return {l.get("gpu_instance"): v for l, v in series(body, "gpuscope_sm_active_ratio")
                if l["gpu"] == "2" and "gpu_instance" in l}
    body = agent.wait_metrics(lambda b: len(instances(b)) == 2, "GPM on both MIG instances",
                               timeout=40)
    sm = instances(body)
    idle = [gi for gi in sm if gi != mig_gi][0]
    check(sm[mig_gi] > 0.5 and sm[idle] == 0,
          "each instance its own SM activity (busy %s, idle %s): %s" % (mig_gi, idle, sm))


def check_commands(common):
    code, out, err = run(common)
    check(code == 0 and "python3  (serves ml/trainer-7d9f8c6b4-x2kq9 (container main, workload "
          "trainer))" in out, "summary: %s %s" % (out[-1500:], err))
    code, out, err = run(["health", "--json"] + common)
    check(code in (0, 1, 20), "health: %s" % err)
    gpus = {g["gpu"]: g for g in json.loads(out)["gpus"]}
    procs = {p["pid"]: p for p in gpus[1]["processes"]}
    check(procs[5100]["holder"]["pod"] == "api-b2c4d" and procs[5100]["name"] == "api-server",
          "health --json processes: %s" % gpus[1]["processes"])


class AttributionProcessesTest(unittest.TestCase):
    def test_processes_named_by_pod(self):
        need(FakeKubelet is not None, "python3-grpcio missing")
        work = tempfile.mkdtemp(prefix="gpuscope-procattr-")
        kubelet = cri = None
        try:
            proc = os.path.join(work, "proc")
            write_proc(proc)
            scenario = os.path.join(work, "node.yaml")
            with open(scenario, "w") as f:
                f.write(SCENARIO)
            kubelet = FakeKubelet(os.path.join(work, "kubelet.sock"))
            kubelet.start()
            cri = FakeCri(os.path.join(work, "cri.sock"), [
                ("a" * 64, "ml", "trainer-7d9f8c6b4-x2kq9", "main"),
                ("b" * 64, "inf", "api-b2c4d", "srv"), ("c" * 64, "inf", "web-x2kq9", "srv"),
                ("d" * 64, "ml", "slice-a-0", "c")])
            cri.start()
            # The options the CLI commands share with serve (serve also takes -k).
            common = ["--simulate", scenario, "--kubernetes", "--pod-resources-kubelet-socket",
                      kubelet.socket_path, "--container-runtime-socket", cri.socket_path,
                      "--proc-root", proc, "--process-names"]
            # --profile full: the MIG check reads the native GPM ratios.
            args = common + ["--process-series", "2", "--slow-interval", "1s",
                             "--attribution-refresh", "500ms", "-c", "200", "--profile", "full"]
            with Serve(args) as agent:
                body = agent.wait_metrics(lambda b: "gpuscope_gpu_info" in b, "first scrape")
                info = series(body, "gpuscope_gpu_info")
                gpus = {l["gpu"]: l["uuid"] for l, _ in info if "gpu_instance" not in l}
                migs = sorted((l["gpu_instance"], l["uuid"], l["mig_profile"]) for l, _ in info
                              if "gpu_instance" in l)
                big = [m for m in migs if m[2] == "3g.40gb"][0]
                kubelet.set_pods([
                    ("ml", "trainer-7d9f8c6b4-x2kq9", "main", "nvidia.com/gpu", [gpus["0"]]),
                    ("inf", "web-x2kq9", "srv", "nvidia.com/gpu", [gpus["1"] + "::0"]),
                    ("inf", "api-b2c4d", "srv", "nvidia.com/gpu", [gpus["1"] + "::1"]),
                    ("ml", "slice-a-0", "c", "nvidia.com/mig-3g.40gb", [big[1]])])
                body = agent.wait_metrics(
                    lambda b: 'pod="slice-a-0",container="c",workload="slice-a",pid="5200"' in b
                    and 'pid="5101"' in b, "process labels")
                check_metrics(body, big[0])
                check_mig_activity(agent, big[0])
            check_commands(common)
        finally:
            for server in (kubelet, cri):
                if server:
                    server.stop()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
