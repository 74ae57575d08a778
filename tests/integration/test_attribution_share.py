#!/usr/bin/env python3
"""Each pod's share of a time-sliced GPU (issue 41, item 3), end to end:
`gpuscope serve` on sim/scenarios/shared-gpu.yaml, a fake kubelet granting
each GPU to two pods (time-slicing replicas), a fake container runtime naming
each process's pod, and their cgroups under a fake /proc root.

GPU 0 is 80% busy: the trainer pod's process has 70% of the kernel time, the
notebook pod's 10%. Before the measured share, every holder of a shared GPU
got the GPU's one value and the ledger split it evenly, so the notebook paid
half of a GPU it barely used. Now:
- gpuscope_gpu_holder_sm_share_ratio gives each pod its share (0.7, 0.1), and
  the shares add up to the GPU's busy share within 5%, in both
  --attribution-labels modes;
- the ledger (/api/v1/jobs, `gpuscope report`) splits busy time 7:1 and names
  the method "measured";
- GPU 1 runs the same pair, but its driver gives no per-process samples: no
  share series, an even split, and the report says "even split".
"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (SOURCE_DIR, Serve, check, main, need, parse_exposition,  # noqa: E402
                              run, wait_until)

try:
    from fake_cri import FakeCri
    from fake_kubelet import FakeKubelet
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeKubelet = None

SCENARIO = os.path.join(SOURCE_DIR, "sim", "scenarios", "shared-gpu.yaml")
CGROUP = ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
          "cri-containerd-%s.scope\n")
POD_UID = {"trainer": "0f9e8d7c_6b5a_4c3d_9e2f_1a0b9c8d7e6f",
           "notebook": "1a2b3c4d_5e6f_4a7b_8c9d_0e1f2a3b4c5d"}
# pid -> (pod, container id); GPU 0: 6100 and 6200, GPU 1: 6300 and 6400.
PROCESSES = {6100: ("trainer", "a" * 64), 6200: ("notebook", "b" * 64),
             6300: ("trainer", "c" * 64), 6400: ("notebook", "d" * 64)}
PODS = {"trainer": "trainer-7d9f8c6b4-x2kq9", "notebook": "notebook-0"}
SHARE = "gpuscope_gpu_holder_sm_share_ratio"


def write_proc(root):
    for pid, (pod, container) in PROCESSES.items():
        os.makedirs(os.path.join(root, str(pid)))
        with open(os.path.join(root, str(pid), "cgroup"), "w") as f:
            f.write(CGROUP % (POD_UID[pod], container))


def shares(body):
    """{(gpu, pod): share} of the share gauge."""
    return {(s.labels["gpu"], s.labels.get("pod")): s.value
            for s in parse_exposition(body).find(SHARE)}


def busy_seconds(body, gpu):
    values = [s.value for s in parse_exposition(body).find("gpuscope_gpu_busy_seconds_total")
              if s.labels["gpu"] == gpu]
    check(values, "gpuscope_gpu_busy_seconds_total of GPU %s" % gpu)
    return values[0]


class SharedGpuTest(unittest.TestCase):
    def setUp(self):
        need(FakeKubelet is not None, "python3-grpcio missing")
        self.work = tempfile.mkdtemp(prefix="gpuscope-share-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.proc = os.path.join(self.work, "proc")
        write_proc(self.proc)
        self.kubelet = FakeKubelet(os.path.join(self.work, "kubelet.sock"))
        self.kubelet.start()
        self.addCleanup(self.kubelet.stop)
        self.cri = FakeCri(os.path.join(self.work, "cri.sock"), [
            (container, "ml", PODS[pod], "main") for pod, container in PROCESSES.values()])
        self.cri.start()
        self.addCleanup(self.cri.stop)

    def serve(self, *extra):
        return Serve(["--simulate", SCENARIO, "--kubernetes", "--pod-resources-kubelet-socket",
                      self.kubelet.socket_path, "--container-runtime-socket",
                      self.cri.socket_path, "--proc-root", self.proc, "--slow-interval", "1s",
                      "--attribution-refresh", "500ms", "-c", "200"] + list(extra))

    def grant(self, agent):
        body = agent.wait_metrics(lambda b: "gpuscope_gpu_info" in b, "first scrape")
        uuids = {s.labels["gpu"]: s.labels["uuid"]
                 for s in parse_exposition(body).find("gpuscope_gpu_info")}
        pods = []
        for gpu in ("0", "1"):
            for replica, pod in enumerate(("trainer", "notebook")):
                pods.append(("ml", PODS[pod], "main", "nvidia.com/gpu",
                             ["%s::%d" % (uuids[gpu], replica)]))
        self.kubelet.set_pods(pods)

    def check_shares(self, agent, mode):
        """Each pod's share on GPU 0 near its truth, their sum near the GPU's
        busy share over the same seconds; none on GPU 1 (unsupported)."""
        agent.wait_metrics(lambda b: len([k for k in shares(b) if k[0] == "0"]) == 2,
                           "both pods' shares on GPU 0 (%s mode)" % mode)
        time.sleep(2.5)  # a few slow periods: the busy rate and the shares cover the same time
        _, _, before = agent.get("/metrics")
        time.sleep(3)
        _, _, after = agent.get("/metrics")
        busy = (busy_seconds(after, "0") - busy_seconds(before, "0")) / 3
        got = shares(after)
        trainer, notebook = got[("0", PODS["trainer"])], got[("0", PODS["notebook"])]
        print("%s mode: shares trainer %.3f notebook %.3f, sum %.3f, GPU busy %.3f" % (
            mode, trainer, notebook, trainer + notebook, busy))
        check(abs(trainer - 0.7) <= 0.05 and abs(notebook - 0.1) <= 0.05,
              "each pod's share near its truth (0.7, 0.1): %s" % got)
        check(abs((trainer + notebook) - busy) <= 0.05 * busy,
              "shares add up to the busy share within 5%%: %.3f vs %.3f" % (
                  trainer + notebook, busy))
        check(not [k for k in got if k[0] == "1"],
              "no share where per-process samples are unsupported: %s" % got)

    def pod_devices(self, agent):
        """{(pod, gpu): device row} from the ledger."""
        status, _, body = agent.get("/api/v1/jobs?kind=pod")
        check(status == 200, "/api/v1/jobs: %s %s" % (status, body))
        return {(j["id"].split("/")[1], d["gpu"]): d
                for j in json.loads(body)["jobs"] for d in j["devices"]}

    def test_measured_share_and_even_split_fallback(self):
        with self.serve() as agent:
            self.grant(agent)
            # A few seconds of both pods on both GPUs (the notebook holds 1/8 of GPU 0's time).
            wait_until(lambda: all(self.pod_devices(agent).get((PODS[p], g), {}).get(
                "held_seconds", 0) > 0.3 for p in ("trainer", "notebook") for g in (0, 1)) and
                self.pod_devices(agent)[(PODS["trainer"], 0)]["held_seconds"] > 3,
                "the ledger's pods on both GPUs", timeout=20)
            rows = self.pod_devices(agent)
            trainer, notebook = rows[(PODS["trainer"], 0)], rows[(PODS["notebook"], 0)]
            ratio = trainer["busy_seconds"] / max(notebook["busy_seconds"], 1e-9)
            # Before the measured share: 1 : 1, the notebook paid half the GPU.
            print("GPU 0 busy seconds: trainer %.2f, notebook %.2f (%.1f : 1)" % (
                trainer["busy_seconds"], notebook["busy_seconds"], ratio))
            check(6 <= ratio <= 8.5 and trainer["split"] == notebook["split"] == "measured",
                  "GPU 0 split by measured share 7:1: %s %s" % (trainer, notebook))
            even = [rows[(PODS[p], 1)] for p in ("trainer", "notebook")]
            check(all(d["split"] == "even split" for d in even) and
                  abs(even[0]["held_seconds"] - even[1]["held_seconds"]) <= 0.5,
                  "GPU 1 split evenly, and says so: %s" % even)
            self.check_shares(agent, "series")
            # The reports name the method per GPU-holder row.
            code, out, err = run(["report", "pod", "ml/" + PODS["notebook"], "--json",
                                  "--agent", agent.base])
            check(code == 0, "report pod: %s %s" % (out, err))
            gpus = {g["gpu"]: g for g in json.loads(out)["gpus"]}
            check(gpus[0]["split"] == "measured" and gpus[1]["split"] == "even split",
                  "report pod --json names the split: %s" % gpus)
            code, out, err = run(["report", "pod", "ml/" + PODS["notebook"], "--agent",
                                  agent.base])
            check(code == 0 and "SPLIT" in out and "measured" in out and "even split" in out,
                  "report pod table: %s %s" % (out, err))
            code, out, err = run(["report", "tenants", "--by", "pod", "--json", "--agent",
                                  agent.base])
            check(code == 0, "report tenants: %s %s" % (out, err))
            tenants = {r["holder"]: r for r in json.loads(out)["tenants"]}
            notebook_row = tenants["pod ml/" + PODS["notebook"]]
            trainer_row = tenants["pod ml/" + PODS["trainer"]]
            check(notebook_row["split"] == "mixed" and
                  trainer_row["busy_gpu_hours"] > 2 * notebook_row["busy_gpu_hours"],
                  "report tenants uses the measured share: %s" % tenants)

    def test_share_in_info_mode(self):
        with self.serve("--attribution-labels", "info") as agent:
            self.grant(agent)
            self.check_shares(agent, "info")
            _, _, body = agent.get("/metrics")
            busy = [s.labels for s in parse_exposition(body).find(
                "gpuscope_gpu_busy_seconds_total")]
            check(all("pod" not in labels for labels in busy),
                  "info mode keeps pods off the GPU series: %s" % busy)


if __name__ == "__main__":
    main()
