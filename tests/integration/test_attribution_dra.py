#!/usr/bin/env python3
"""Kubernetes DRA attribution end to end (issue 41 #2): `gpuscope serve -k` on
the simulator's mixed node (8 GPUs, GPU 7 split into 3 MIG instances), a fake
kubelet (fake_kubelet.py) that grants a whole GPU and a MIG device through
DRA ResourceClaims beside device-plugin grants, and a fake API server
(fake_kube_api.py) serving the node's ResourceSlices.

Checks:
- with the API: the DRA-allocated whole GPU and MIG device carry pod,
  namespace and container on every series, exactly the label names that the
  device-plugin GPU and MIG device beside them carry;
  gpuscope_attribution_up{source="resourceslices"} is 1; the slices were
  listed read-only, with the node's field selector;
- on a 1.32 cluster (v1beta1 only, attributes under `basic`) with the GPU
  slice on the second page of the list, the same;
- without API access (RBAC denied: 403): the whole GPU is still attributed
  by its device name's minor, the MIG device is not (its name does not say
  which instance), the reader is down, and that is logged once.

Sources of the shapes the fakes send:
- k8s.io/kubelet pkg/apis/podresources/v1/api.proto (kubernetes/kubernetes,
  staging/src/k8s.io/kubelet): ContainerResources.dynamic_resources = 5,
  DynamicResource{claim_name = 2, claim_namespace = 3, claim_resources = 4},
  ClaimResource{cdi_devices = 1, driver_name = 2, pool_name = 3,
  device_name = 4}; KubeletPodResourcesDynamicResources beta since 1.34.
- Kubernetes API reference, ResourceSlice v1 (resource.k8s.io/v1, 1.34):
  spec.driver, spec.pool{name, generation, resourceSliceCount},
  spec.nodeName, spec.devices[]{name, attributes, capacity}; field
  selectors spec.nodeName and spec.driver; list paging (limit, continue).
- NVIDIA k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/deviceinfo.go: device
  names gpu-<minor> (PR #428) and gpu-<minor>-mig-..., attributes type
  (gpu, mig), uuid, parentUUID, profile, productName, driverVersion.
"""
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (SOURCE_DIR, Serve, check, main, need, need_tool,  # noqa: E402
                              parse_exposition, temp_dir)
from fake_kube_api import start_api  # noqa: E402

try:
    from fake_kubelet import DRA, FakeKubelet
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeKubelet = None

NODE = "gpu-node-1"
DRIVER = "gpu.nvidia.com"


def series(body):
    return [(s.name, s.labels) for s in parse_exposition(body).samples if s.labels]


def inventory(body):
    """{gpu index: (uuid, minor)} and {(gpu, gpu_instance): mig uuid}."""
    gpus, migs, minors = {}, {}, {}
    for name, labels in series(body):
        if name == "gpuscope_gpu_info":
            if "gpu_instance" in labels:
                migs[(labels["gpu"], labels["gpu_instance"])] = labels["uuid"]
            else:
                gpus[labels["gpu"]] = labels["uuid"]
        elif name.startswith("DCGM_") and labels.get("device", "").startswith("nvidia"):
            minors[labels["gpu"]] = int(labels["device"][len("nvidia"):])
    return {g: (u, minors.get(g, int(g))) for g, u in gpus.items()}, migs


def holders(body, name, gpu, instance=""):
    """The (label names, pod) of each series `name` of one GPU or MIG instance."""
    out = []
    for n, labels in series(body):
        if n == name and labels.get("gpu") == gpu and \
                labels.get("GPU_I_ID", labels.get("gpu_instance", "")) == instance:
            out.append((tuple(labels), labels.get("pod", "")))
    return out


class AttributionDraTest(unittest.TestCase):
    def setUp(self):
        need(FakeKubelet is not None,
             "python3-grpcio not installed (Debian package python3-grpcio)")
        need_tool("openssl", "openssl")
        self.d = temp_dir(self, "gpuscope-dra-")
        self.api, self.sa = start_api(self, self.d, nodes=2)
        self.socket = os.path.join(self.d, "kubelet.sock")
        self.kubelet = FakeKubelet(self.socket)
        self.addCleanup(self.kubelet.stop)

    def serve(self):
        agent = Serve(["--simulate", "mixed-node", "-k", "--pod-resources-kubelet-socket",
                       self.socket, "--attribution-refresh", "1s", "-c", "500",
                       "--kubernetes-node", NODE, "--kubernetes-serviceaccount-dir", self.sa],
                      env={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                           "KUBERNETES_SERVICE_PORT": str(self.api.port)})
        self.addCleanup(agent.stop)
        agent.wait_healthy()
        status, _, body = agent.get("/metrics")
        check(status == 200, "scrape answered %s" % status)
        return agent, body

    def grant(self, gpus, migs):
        """GPU 0 and MIG 7/1 by DRA; GPU 2 and MIG 7/3 by the device plugin.
        The NVIDIA driver's slice lists every GPU of the node by minor, and
        GPU 7's MIG devices, as it publishes them."""
        mig_names = {}
        devices = []
        for gpu, (uuid, minor) in sorted(gpus.items()):
            if gpu != "7":
                devices.append(("gpu-%d" % minor, "gpu", uuid, None))
        for (gpu, gi), uuid in sorted(migs.items()):
            mig_names[gi] = "gpu-%d-mig-1g20gb-%s-%s" % (gpus[gpu][1], gi, gi)
            devices.append((mig_names[gi], "mig", uuid, gpus[gpu][0]))
        self.api.add_gpu_slice(NODE, devices)
        # Another node's slice, with a device of the same name: never used here.
        self.api.add_gpu_slice("gpu-node-0", [("gpu-%d" % gpus["0"][1], "gpu",
                                               "GPU-00000000-0000-0000-0000-000000000000", None)])
        self.kubelet.set_pods([
            ("ml", "dra-trainer-0", "main", DRA,
             [("trainer-gpu", DRIVER, NODE, "gpu-%d" % gpus["0"][1])]),
            ("ml", "dra-slice-0", "c", DRA, [("slice-mig", DRIVER, NODE, mig_names["1"])]),
            ("ml", "plugin-trainer-0", "main", "nvidia.com/gpu", [gpus["2"][0]]),
            ("ml", "plugin-slice-0", "c", "nvidia.com/mig-1g.20gb", [migs[("7", "3")]]),
        ])
        self.kubelet.start()

    def test_dra_devices_labelled_as_device_plugin_ones(self):
        agent, body = self.serve()
        gpus, migs = inventory(body)
        check(len(gpus) == 8 and len(migs) == 3, "inventory %s %s" % (gpus, migs))
        self.grant(gpus, migs)
        body = agent.wait_metrics(
            lambda b: 'gpuscope_attribution_up{source="resourceslices"} 1' in b
            and 'pod="dra-slice-0"' in b, "DRA labels with the API")
        for metric in ("DCGM_FI_DEV_GPU_UTIL", "gpuscope_gpu_info"):
            dra_gpu, plugin_gpu = holders(body, metric, "0"), holders(body, metric, "2")
            check([p for _, p in dra_gpu] == ["dra-trainer-0"], "GPU 0: %s" % dra_gpu)
            check([p for _, p in plugin_gpu] == ["plugin-trainer-0"], "GPU 2: %s" % plugin_gpu)
            check(dra_gpu[0][0] == plugin_gpu[0][0],
                  "%s: DRA labels %s, device plugin's %s" % (metric, dra_gpu, plugin_gpu))
        for metric in ("DCGM_FI_DEV_FB_USED", "gpuscope_gpu_info"):
            dra_mig, plugin_mig = holders(body, metric, "7", "1"), holders(body, metric, "7", "3")
            check([p for _, p in dra_mig] == ["dra-slice-0"], "MIG 7/1: %s" % dra_mig)
            check([p for _, p in plugin_mig] == ["plugin-slice-0"], "MIG 7/3: %s" % plugin_mig)
            check(dra_mig[0][0] == plugin_mig[0][0],
                  "%s: DRA labels %s, device plugin's %s" % (metric, dra_mig, plugin_mig))
        check(all(p == "" for _, p in holders(body, "DCGM_FI_DEV_GPU_UTIL", "7")),
              "the MIG parent is nobody's")
        check('gpuscope_attribution_up{source="kubelet"} 1' in body, "kubelet up")
        check(self.api.problems == [], "problems: %s" % self.api.problems)
        check(self.api.slice_lists and all(
            q.get("fieldSelector") == ["spec.nodeName=" + NODE] for q in self.api.slice_lists),
            "listed by node: %s" % self.api.slice_lists)
        check(all(m == "GET" for m, _, _, _ in self.api.requests), "read-only")
        print("dra: GPU and MIG device labelled from the ResourceSlices as device-plugin ones")

    def test_kubernetes_1_32_and_many_slices(self):
        """A 1.32 cluster serves ResourceSlices as v1beta1 only; NVIDIA's slice
        comes after 600 others of the node (NIC drivers), on the second page."""
        self.api.slice_versions = ["v1beta1"]
        for i in range(600):
            self.api.add_other_slice(NODE, "nic.example.com", "nic-%d" % i)
        agent, body = self.serve()
        gpus, migs = inventory(body)
        self.grant(gpus, migs)
        body = agent.wait_metrics(
            lambda b: 'gpuscope_attribution_up{source="resourceslices"} 1' in b
            and 'pod="dra-slice-0"' in b, "DRA labels from v1beta1, page 2")
        check([p for _, p in holders(body, "DCGM_FI_DEV_FB_USED", "7", "1")] == ["dra-slice-0"],
              "MIG 7/1 from the second page")
        check([q.get("limit") for q in self.api.slice_lists[:2]] == [["500"], ["500"]] and
              "continue" in self.api.slice_lists[1], "two pages: %s" % self.api.slice_lists[:2])
        check(self.api.problems == [], "problems: %s" % self.api.problems)
        print("dra: v1beta1 and a second page")

    def test_without_api_access_the_name_names_the_gpu(self):
        self.api.forbid_slices = True
        agent, body = self.serve()
        gpus, migs = inventory(body)
        self.grant(gpus, migs)
        body = agent.wait_metrics(
            lambda b: 'gpuscope_attribution_up{source="resourceslices"} 0' in b
            and 'pod="dra-trainer-0"' in b and 'pod="plugin-slice-0"' in b,
            "DRA labels by name without the API")
        check([p for _, p in holders(body, "DCGM_FI_DEV_GPU_UTIL", "0")] == ["dra-trainer-0"],
              "GPU 0 by its name's minor")
        check('pod="dra-slice-0"' not in body, "a MIG name says no instance")
        check('gpuscope_attribution_failures_total{source="resourceslices"} 1' in body,
              "the failed list is counted")
        check([p for _, p in holders(body, "DCGM_FI_DEV_FB_USED", "7", "3")] ==
              ["plugin-slice-0"], "device-plugin MIG unaffected")
        time.sleep(3)  # several refreshes, one state
        log = agent.output()
        check(log.count("attribution source resourceslices is down") == 1 and
              "cannot list resource" in log, "logged once: %s" % log[-2000:])
        print("dra: without the API, the whole GPU by name; the MIG device unattributed")


class DraManifestTest(unittest.TestCase):
    """deploy/k8s: the agent's service account may read ResourceSlices and
    nothing else, and its token is mounted."""

    def test_kustomize_build(self):
        import yaml
        need_tool("kubectl", "kubernetes-client")
        r = subprocess.run(["kubectl", "kustomize", os.path.join(SOURCE_DIR, "deploy", "k8s")],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, r.stderr)
        docs = {d["kind"]: d for d in yaml.safe_load_all(r.stdout) if d}
        rules = [(x["apiGroups"], x["resources"], sorted(x["verbs"]))
                 for x in docs["ClusterRole"]["rules"]]
        check(rules == [(["resource.k8s.io"], ["resourceslices"], ["get", "list", "watch"])],
              "RBAC: %s" % rules)
        binding = docs["ClusterRoleBinding"]
        account = docs["ServiceAccount"]["metadata"]
        check(binding["roleRef"]["name"] == docs["ClusterRole"]["metadata"]["name"] and
              binding["subjects"] == [{"kind": "ServiceAccount", "name": account["name"],
                                       "namespace": account["namespace"]}], binding)
        pod = docs["DaemonSet"]["spec"]["template"]["spec"]
        check(pod["serviceAccountName"] == account["name"] and
              pod["automountServiceAccountToken"] is True, "token mounted")
        env = {e["name"] for e in pod["containers"][0]["env"]}
        check("NODE_NAME" in env and "--kubernetes" in pod["containers"][0]["args"],
              "node name and -k: %s" % pod["containers"][0])


if __name__ == "__main__":
    main()
