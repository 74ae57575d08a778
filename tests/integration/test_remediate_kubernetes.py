#!/usr/bin/env python3
"""`gpuscope serve --remediate kubernetes` against a fake API server (no
kube-apiserver is installable here): a Python HTTPS server in this test, with
a certificate from a CA made here, that keeps a NodeList of 10 nodes and checks
every request the agent sends:

  - the bearer token of the service-account folder, on every request;
  - TLS verified against the folder's ca.crt (a wrong CA fails the handshake);
  - GET /api/v1/nodes for the node and the circuit breaker;
  - PATCH /api/v1/nodes/NODE/status, application/strategic-merge-patch+json,
    one condition GpuHealthy=False naming XID 79, the GPU and the runbook;
  - with --remediate-taint, PATCH /api/v1/nodes/NODE, application/json-patch+json:
    a resourceVersion test and the NoSchedule taint gpuscope.io/gpu-unhealthy,
    other taints kept; removed again, with the condition back to True, once the
    GPU is healthy for --remediate-resume-after;
  - an API server answering 403, or not listening: a clear error in the log and
    /metrics unaffected;
  - deploy/k8s-remediation builds with kustomize, with RBAC limited to what the
    actuator sends.
"""
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (SOURCE_DIR, Serve, check, free_port, main, need_tool,  # noqa: E402
                              temp_dir, wait_until)
from remediate_common import (FAST, RECOVER_GPU1, XID79_ON_GPU1, inject,  # noqa: E402
                              wait_action, write_scenario)

NODE = "gpu-node-3"
TOKEN = "sa-token-remediate-29"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True)


def make_ca(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
            "-days", "2", "-subj", "/CN=" + name)
    return key, crt


def make_server_cert(d, ca_key, ca_crt):
    key, csr, crt = (os.path.join(d, "server." + x) for x in ("key", "csr", "crt"))
    ext = os.path.join(d, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
            "-subj", "/CN=kubernetes")
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
            "-out", crt, "-days", "2", "-extfile", ext)
    return key, crt


class FakeApiServer:
    """The node API of a cluster of 10 nodes; `problems` collects every
    request that does not look like what the real API server takes."""

    def __init__(self, cert, key):
        self.lock = threading.Lock()
        self.nodes = {}
        for i in range(10):
            name = "gpu-node-%d" % i
            self.nodes[name] = {
                "metadata": {"name": name, "resourceVersion": "100",
                             "labels": {"kubernetes.io/hostname": name}},
                "spec": {"taints": [{"key": "dedicated", "value": "ml",
                                     "effect": "NoSchedule"}]} if name == NODE else {},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        self.requests, self.problems = [], []
        self.forbid = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                code, body = outer.handle("GET", self.path, self.headers, b"")
                self.answer(code, body)

            def do_PATCH(self):
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                code, body = outer.handle("PATCH", self.path, self.headers, data)
                self.answer(code, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()

    def handle(self, method, path, headers, data):
        with self.lock:
            self.requests.append((method, path, headers.get("Content-Type"), data))
            if headers.get("Authorization") != "Bearer " + TOKEN:
                self.problems.append("no bearer token on %s %s" % (method, path))
                return 401, {"kind": "Status", "message": "Unauthorized"}
            if method == "GET" and path == "/api/v1/nodes":
                return 200, {"kind": "NodeList", "apiVersion": "v1",
                             "items": list(self.nodes.values())}
            if self.forbid:
                return 403, {"kind": "Status", "code": 403, "message":
                             'nodes "%s" is forbidden: User "system:serviceaccount:gpuscope:'
                             'gpuscope" cannot patch resource "nodes/status"' % NODE}
            m = re.fullmatch(r"/api/v1/nodes/([^/]+)(/status)?", path)
            if method != "PATCH" or not m or m.group(1) not in self.nodes:
                self.problems.append("unexpected %s %s" % (method, path))
                return 404, {"kind": "Status", "message": "not found"}
            node = self.nodes[m.group(1)]
            if m.group(2):
                return self.patch_status(node, headers, data)
            return self.patch_node(node, headers, data)

    def bump(self, node):
        meta = node["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)

    def patch_status(self, node, headers, data):
        if headers.get("Content-Type") != "application/strategic-merge-patch+json":
            self.problems.append("status patch content type %s" % headers.get("Content-Type"))
            return 415, {"kind": "Status", "message": "unsupported media type"}
        patch = json.loads(data)
        if list(patch) != ["status"] or list(patch["status"]) != ["conditions"]:
            self.problems.append("status patch touches more than conditions: %s" % patch)
        conditions = node["status"]["conditions"]
        for c in patch["status"]["conditions"]:
            for field in ("type", "status", "reason", "message", "lastTransitionTime"):
                if field not in c:
                    self.problems.append("condition without %s: %s" % (field, c))
            conditions[:] = [x for x in conditions if x["type"] != c["type"]] + [c]
        self.bump(node)
        return 200, node

    def patch_node(self, node, headers, data):
        if headers.get("Content-Type") != "application/json-patch+json":
            self.problems.append("node patch content type %s" % headers.get("Content-Type"))
            return 415, {"kind": "Status", "message": "unsupported media type"}
        ops = json.loads(data)
        for op in ops:
            if op["op"] == "test":
                if op["path"] != "/metadata/resourceVersion":
                    self.problems.append("test of %s" % op["path"])
                if op["value"] != node["metadata"]["resourceVersion"]:
                    return 422, {"kind": "Status", "message": "the object has been modified"}
            elif op["op"] == "add" and op["path"] == "/spec/taints":
                node["spec"]["taints"] = op["value"]
            else:
                self.problems.append("unexpected op %s" % op)
        self.bump(node)
        return 200, node

    def condition(self, name=NODE):
        with self.lock:
            for c in self.nodes[name]["status"]["conditions"]:
                if c["type"] == "GpuHealthy":
                    return dict(c)
        return None

    def taints(self, name=NODE):
        with self.lock:
            return [t["key"] for t in self.nodes[name]["spec"].get("taints", [])]


class RemediateKubernetesTest(unittest.TestCase):
    def setUp(self):
        need_tool("openssl", "openssl")
        self.d = temp_dir(self, "gpuscope-k8s-")
        ca_key, ca_crt = make_ca(self.d, "cluster-ca")
        key, crt = make_server_cert(self.d, ca_key, ca_crt)
        self.api = FakeApiServer(crt, key)
        self.addCleanup(self.api.stop)
        self.sa = os.path.join(self.d, "serviceaccount")
        os.makedirs(self.sa)
        with open(os.path.join(self.sa, "token"), "w") as f:
            f.write(TOKEN + "\n")
        with open(ca_crt) as src, open(os.path.join(self.sa, "ca.crt"), "w") as dst:
            dst.write(src.read())
        self.scenario = write_scenario(self.d)

    def serve(self, *extra, port=None):
        self.control = os.path.join(self.d, "control")
        open(self.control, "w").close()
        s = Serve(["--simulate", self.scenario, "--remediate", "kubernetes",
                   "--kubernetes-node", NODE, "--kubernetes-serviceaccount-dir", self.sa]
                  + FAST + list(extra),
                  env={"GPUSCOPE_SIM_CONTROL": self.control,
                       "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                       "KUBERNETES_SERVICE_PORT": str(port or self.api.port)})
        self.addCleanup(s.stop)
        s.wait_healthy()
        return s

    def inject(self, lines):
        inject(self.control, lines)

    def test_condition_and_taint_then_resume(self):
        s = self.serve("--remediate-taint")
        time.sleep(1)
        check(self.api.condition() is None and self.api.requests == [],
              "healthy: nothing sent %s" % self.api.requests)
        self.inject(XID79_ON_GPU1)
        wait_until(lambda: (self.api.condition() or {}).get("status") == "False",
                   "GpuHealthy=False", timeout=30)
        c = self.api.condition()
        check(c["reason"] == "GpuscopeXid79", c)
        check(c["message"].startswith("gpuscope: XID 79 on GPU 1 (GPU-") and
              c["message"].endswith("/docs/runbooks/GpuFallenOffBus.md"), c)
        wait_until(lambda: "gpuscope.io/gpu-unhealthy" in self.api.taints(), "taint")
        check(self.api.taints() == ["dedicated", "gpuscope.io/gpu-unhealthy"],
              "other taints kept: %s" % self.api.taints())
        wait_action(s, "drain", "ok")
        for node in self.api.nodes:
            if node != NODE:
                check(self.api.condition(node) is None, "only %s marked" % NODE)
        self.inject(RECOVER_GPU1)
        wait_until(lambda: (self.api.condition() or {}).get("status") == "True",
                   "GpuHealthy=True after recovery", timeout=40)
        wait_until(lambda: self.api.taints() == ["dedicated"], "taint removed")
        wait_action(s, "resume", "ok")
        methods = {(m, p, t) for m, p, t, _ in self.api.requests}
        check(methods == {("GET", "/api/v1/nodes", None),
                          ("PATCH", "/api/v1/nodes/%s/status" % NODE,
                           "application/strategic-merge-patch+json"),
                          ("PATCH", "/api/v1/nodes/%s" % NODE, "application/json-patch+json")},
              "request shapes: %s" % methods)
        check(self.api.problems == [], "problems: %s" % self.api.problems)

    def test_forbidden_is_a_clear_error(self):
        self.api.forbid = True
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "error")
        check("HTTP 403" in s.output() and "cannot patch resource" in s.output(),
              s.output()[-1500:])
        s.wait_metrics(lambda t: 'gpuscope_remediation_actions_total{action="drain",'
                       'result="error"} 1' in t, "metrics served, the error counted", timeout=10)
        check(self.api.problems == [], "problems: %s" % self.api.problems)

    def test_wrong_ca_and_server_down(self):
        _, other_ca = make_ca(self.d, "other-ca")
        with open(other_ca) as src, open(os.path.join(self.sa, "ca.crt"), "w") as dst:
            dst.write(src.read())
        s = self.serve()
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "error")
        check(re.search(r"certificate|SSL", s.output()), s.output()[-1500:])
        check(self.api.condition() is None, "nothing changed without a verified server")
        s.stop()
        s = self.serve(port=free_port())
        self.inject(XID79_ON_GPU1)
        wait_action(s, "drain", "error")
        check("GET https://127.0.0.1:" in s.output(), s.output()[-1500:])
        check(s.get("/metrics")[0] == 200, "metrics served with the API server down")


class RemediationOverlayTest(unittest.TestCase):
    """deploy/k8s-remediation: the base manifests, a service account whose
    ClusterRole allows only what the actuator sends, and the agent in dry run."""

    def test_kustomize_build(self):
        import yaml
        need_tool("kubectl", "kubernetes-client")
        r = subprocess.run(["kubectl", "kustomize", os.path.join(SOURCE_DIR, "deploy",
                                                                  "k8s-remediation")],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, r.stderr)
        docs = {d["kind"]: d for d in yaml.safe_load_all(r.stdout) if d}
        rules = {(tuple(x["resources"]), tuple(sorted(x["verbs"])))
                 for x in docs["ClusterRole"]["rules"]}
        check(rules == {(("nodes",), ("get", "list", "patch")),
                        (("nodes/status",), ("get", "patch"))}, "RBAC: %s" % rules)
        binding = docs["ClusterRoleBinding"]
        check(binding["subjects"][0]["name"] == docs["ServiceAccount"]["metadata"]["name"],
              "bound to the agent's service account")
        pod = docs["DaemonSet"]["spec"]["template"]["spec"]
        check(pod["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"] and
              pod["automountServiceAccountToken"] is True, "token mounted")
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        check(env.get("GPUSCOPE_REMEDIATE") == "kubernetes" and
              env.get("GPUSCOPE_REMEDIATE_DRY_RUN") == "true" and "NODE_NAME" in env,
              "env: %s" % env)


if __name__ == "__main__":
    main()
