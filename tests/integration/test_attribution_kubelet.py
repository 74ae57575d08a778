#!/usr/bin/env python3
"""Kubernetes attribution end to end: `gpuscope serve -k` on the simulator's
mixed node (8 GPUs, one split into 3 MIG instances) against a fake kubelet
(fake_kubelet.py) that grants whole GPUs, MIG slices and a time-sliced GPU.

Checks, in one run:
- the socket is missing at start: metrics flow without pod labels and
  gpuscope_attribution_up{source="kubelet"} is 0; the kubelet appears and
  the labels come by themselves;
- every per-GPU and per-MIG series carries dcgm-exporter's container,
  namespace, pod labels (DCGM families) or namespace, pod, container,
  workload (native ones); the time-sliced GPU shows both pods, each series once;
- a real Prometheus joins a GPU metric with a pod-labelled application series
  on (namespace, pod);
- the kubelet restarts with other pods: the labels follow;
- an answer of 1,000 pods over 4 MiB is read.
"""
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, HTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (PROMETHEUS, Prometheus, Serve, check, main, need,  # noqa: E402
                              need_tool, parse_exposition, temp_dir)

try:
    from fake_kubelet import FakeKubelet, encode_pods
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeKubelet = None

def series(body):
    """(name, {label: value}) of every sample with labels."""
    return [(s.name, s.labels) for s in parse_exposition(body).samples if s.labels]


def metrics(agent):
    status, _, body = agent.get("/metrics")
    check(status == 200, "scrape answered %s" % status)
    return body


def devices(body):
    """uuid of each whole GPU by index, and MIG uuid by (gpu, gpu_instance)."""
    gpus, migs = {}, {}
    for name, labels in series(body):
        if name != "gpuscope_gpu_info":
            continue
        if "gpu_instance" in labels:
            migs[(labels["gpu"], labels["gpu_instance"])] = labels["uuid"]
        else:
            gpus[labels["gpu"]] = labels["uuid"]
    return gpus, migs


def check_labels(body, gpus, migs):
    owners = {}  # (gpu, gpu_instance or "") -> set of pods
    per_gpu = 0
    seen = set()
    for name, labels in series(body):
        if "gpu" not in labels or name == "gpuscope_collector_up":
            continue  # collector_up keeps its own gpu label only (self-metric)
        if name == "gpuscope_gpu_holder_sm_share_ratio" and "pod" not in labels:
            continue  # the share of processes no holder matches: nobody's, by design
        key = (name,) + tuple(sorted(labels.items()))
        check(key not in seen, "duplicate series %s %s" % (name, labels))
        seen.add(key)
        per_gpu += 1
        instance = labels.get("GPU_I_ID", labels.get("gpu_instance", ""))
        owners.setdefault((labels["gpu"], instance), set()).add(labels.get("pod", ""))
        if labels.get("pod"):
            check(labels.get("namespace") and labels.get("container"),
                  "%s: pod without namespace/container %s" % (name, labels))
            if not name.startswith("DCGM_"):
                check(labels.get("workload"), "%s: native series without workload" % name)
    check(per_gpu > 500, "only %d per-GPU series" % per_gpu)
    check(owners[("0", "")] == {"trainer-7d9f8c6b4-x2kq9"}, "GPU 0 owners %s" % owners[("0", "")])
    check(owners[("1", "")] == {"api-b2c4d", "web-x2kq9"}, "GPU 1 owners %s" % owners[("1", "")])
    check(owners[("3", "")] == {""}, "GPU 3 is not granted: %s" % owners[("3", "")])
    check(owners[("7", "1")] == {"slice-a-0"}, "MIG 7/1 owners %s" % owners.get(("7", "1")))
    check(owners[("7", "3")] == {"slice-b-0"}, "MIG 7/3 owners %s" % owners.get(("7", "3")))
    check(owners[("7", "")] == {""}, "the MIG parent is nobody's: %s" % owners[("7", "")])
    util = [labels for name, labels in series(body)
            if name == "DCGM_FI_DEV_GPU_UTIL" and labels["gpu"] == "0"]
    check(len(util) == 1 and list(util[0])[-3:] == ["container", "namespace", "pod"],
          "dcgm-exporter's label order: %s" % util)


def pods(gpus, migs):
    return [
        ("ml", "trainer-7d9f8c6b4-x2kq9", "main", "nvidia.com/gpu", [gpus["0"]]),
        # GPU 1 time-sliced between two pods, by replica ids and device name.
        ("inf", "web-x2kq9", "srv", "nvidia.com/gpu", [gpus["1"] + "::0", gpus["1"] + "::1"]),
        ("inf", "api-b2c4d", "srv", "nvidia.com/gpu", ["nvidia1"]),
        ("ml", "slice-a-0", "c", "nvidia.com/mig-3g.40gb", [migs[("7", "1")]]),
        ("ml", "slice-b-0", "c", "nvidia.com/mig-2g.20gb", [migs[("7", "3")]]),
        ("web", "nginx-0", "c", "example.com/fpga", ["fpga0"]),
    ]


class AppMetrics(BaseHTTPRequestHandler):
    """An application's own series, labelled with its pod as Kubernetes
    service discovery would."""

    def do_GET(self):
        body = (b'app_step_duration_seconds{namespace="ml",pod="trainer-7d9f8c6b4-x2kq9"} 0.25\n')
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def check_promql_join(workdir, agent):
    app = HTTPServer(("127.0.0.1", 0), AppMetrics)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    config = ("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
              "  - job_name: gpuscope\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
              "  - job_name: app\n    honor_labels: true\n"
              "    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
              % (agent.port, app.server_address[1]))
    prom = Prometheus(workdir, config)
    try:
        prom.wait_ready()
        joined = prom.wait_for('DCGM_FI_DEV_GPU_UTIL * on (namespace, pod) group_left() '
                               'app_step_duration_seconds', 1)
        check(len(joined) == 1 and joined[0]["metric"]["gpu"] == "0",
              "join by pod: %s" % joined)
    finally:
        prom.close()
        app.shutdown()


class AttributionKubeletTest(unittest.TestCase):
    def test_pods_label_series_and_follow_the_kubelet(self):
        need(FakeKubelet is not None,
             "python3-grpcio not installed (Debian package python3-grpcio)")
        need_tool(PROMETHEUS, "prometheus")
        workdir = temp_dir(self, "gpuscope-attribution-")
        socket_path = os.path.join(workdir, "kubelet.sock")
        kubelet = FakeKubelet(socket_path)
        with Serve(["--simulate", "mixed-node", "-k", "--pod-resources-kubelet-socket",
                    socket_path, "--attribution-refresh", "1s", "-c", "500"]) as agent:
            agent.wait_healthy()
            body = metrics(agent)
            check('gpuscope_attribution_up{source="kubelet"} 0' in body, "kubelet down at start")
            check('pod="' not in body, "no pod labels without a kubelet")
            gpus, migs = devices(body)
            check(len(gpus) == 8 and len(migs) == 3, "inventory %s %s" % (gpus, migs))

            kubelet.set_pods(pods(gpus, migs))
            kubelet.start()
            body = agent.wait_metrics(
                lambda b: 'gpuscope_attribution_up{source="kubelet"} 1' in b
                and 'pod="slice-b-0"' in b, "labels after the kubelet came up")
            check_labels(body, gpus, migs)
            check_promql_join(workdir, agent)

            # The kubelet restarts; while it is gone the labels go, then follow its new answer.
            kubelet.stop()
            agent.wait_metrics(lambda b: 'gpuscope_attribution_up{source="kubelet"} 0' in b
                               and 'pod="' not in b, "labels gone while the kubelet is down")
            kubelet.set_pods([("ml", "next-q7x4z", "main", "nvidia.com/gpu", [gpus["3"]])])
            kubelet.start()
            body = agent.wait_metrics(lambda b: 'pod="next-q7x4z"' in b, "labels after a restart")
            check('pod="trainer-7d9f8c6b4-x2kq9"' not in body, "old pods are gone")

            # A thousand pods with long names, three of them on GPUs (most pods of a
            # node hold no GPU, but the kubelet lists them all): over gRPC's 4 MiB default.
            many = [("ns-%d" % (i % 20), "pod-%d-%s" % (i, "p" * 5000), "c",
                     "nvidia.com/gpu" if i >= 997 else "example.com/nic",
                     [gpus[str(i % 3)] if i >= 997 else "nic%d" % i]) for i in range(1000)]
            check(len(encode_pods(many)) > 4 * 1024 * 1024, "the answer is over 4 MiB")
            kubelet.set_pods(many)
            body = agent.wait_metrics(lambda b: 'pod="pod-999-' in b, "1,000-pod answer",
                                      timeout=60)
            check('pod="pod-996-' not in body, "pods without GPUs label nothing")
            kubelet.stop()
        print("attribution: kubelet labels, restart, join and 4 MiB answer OK")


if __name__ == "__main__":
    main()
