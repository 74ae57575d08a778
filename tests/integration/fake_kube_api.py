"""A fake Kubernetes API server for the remediation tests (not a test itself:
ctest registers only test_*.py). No kube-apiserver is installable here, so
this HTTPS server keeps what the agent touches, with the real server's paths,
verbs, field names, status codes and Status bodies:

  - Nodes (v1): GET /api/v1/nodes/NAME; GET /api/v1/nodes with limit and
    continue (opaque tokens, metadata.remainingItemCount on every page but the
    last, the whole list in one answer when there is no limit, as the real
    server does); PATCH /api/v1/nodes/NAME/status (strategic merge of
    conditions, by type) and PATCH /api/v1/nodes/NAME (JSON patch: a failed
    `test` is 422, as in kube-apiserver).
  - Leases (coordination.k8s.io/v1) in a namespace: GET, POST (201; 409
    AlreadyExists), PUT (metadata.resourceVersion required: 422 without it,
    409 Conflict when it is not the current one; 404 when there is none).
  - Every write bumps one cluster-wide resourceVersion (etcd's revision).
  - ResourceSlices (resource.k8s.io/v1, GA in 1.34; read-only here, as DRA
    drivers write them): GET /apis/resource.k8s.io/v1/resourceslices with
    fieldSelector spec.nodeName=NODE or spec.driver=NAME (the two fields the
    real server indexes; any other is 400 as there), limit and continue. The
    objects are the shape of the API reference (kind ResourceSlice,
    spec.driver, spec.pool{name, generation, resourceSliceCount},
    spec.nodeName, spec.devices[]{name, attributes{NAME: {string|int|bool|
    version}}, capacity{NAME: {value}}}), as NVIDIA's DRA driver
    (gpu.nvidia.com) publishes them: add_gpu_slice(). forbid_slices answers
    403 as RBAC does for a service account without the grant. slice_versions
    are the versions served, as a 1.32 cluster serves only v1beta1 (whose
    devices nest attributes and capacity under "basic"); others answer 404.

It checks every request (the bearer token, the content types, the bodies) and
collects what the real server would refuse, or gpuscope should not send, in
`problems`. It records what the tests measure: every list request's limit and
continue, and the most nodes with a GpuHealthy=False of gpuscope's at once
(`unhealthy_max`), the circuit breaker's bound.
"""
import base64
import json
import os
import re
import ssl
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "sa-token-remediate-29"
NAMESPACE = "gpuscope"
COORDINATION = "/apis/coordination.k8s.io/v1/namespaces/"
RESOURCE_SLICES = re.compile(r"/apis/resource\.k8s\.io/([^/]+)/resourceslices")
OUR_TAINT = "gpuscope.io/gpu-unhealthy"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True)


def make_ca(d, name):
    key, crt = d + "/" + name + ".key", d + "/" + name + ".crt"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
            "-days", "2", "-subj", "/CN=" + name)
    return key, crt


def make_server_cert(d, ca_key, ca_crt):
    key, csr, crt = (d + "/server." + x for x in ("key", "csr", "crt"))
    ext = d + "/san.ext"
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
            "-subj", "/CN=kubernetes")
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
            "-out", crt, "-days", "2", "-extfile", ext)
    return key, crt


def start_api(test, d, nodes):
    """A FakeApiServer with a certificate from a CA made in d, stopped at the
    test's cleanup, and a service-account folder (token, namespace, ca.crt) as
    a pod would mount it. Returns (server, folder)."""
    ca_key, ca_crt = make_ca(d, "cluster-ca")
    key, crt = make_server_cert(d, ca_key, ca_crt)
    api = FakeApiServer(crt, key, nodes=nodes)
    test.addCleanup(api.stop)
    sa = os.path.join(d, "serviceaccount")
    os.makedirs(sa)
    for name, text in (("token", TOKEN + "\n"), ("namespace", NAMESPACE)):
        with open(os.path.join(sa, name), "w") as f:
            f.write(text)
    with open(ca_crt) as src, open(os.path.join(sa, "ca.crt"), "w") as dst:
        dst.write(src.read())
    return api, sa


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return code, body


def not_found(kind, group, name):
    what = "%s.%s" % (kind, group) if group else kind
    return status(404, "NotFound", '%s "%s" not found' % (what, name),
                  {"name": name, "group": group, "kind": kind})


def ours_unhealthy(node):
    return any(c.get("type") == "GpuHealthy" and c.get("status") == "False" and
               str(c.get("message", "")).startswith("gpuscope:")
               for c in node["status"].get("conditions", []))


class _ApiHttpServer(ThreadingHTTPServer):
    # A cluster's agents connect at once (20 in the breaker race); the default
    # listen backlog of 5 dropped their connections under load until curl's
    # 10 s connect timeout ("cannot read the cluster": a real API server's
    # backlog is in the thousands).
    request_queue_size = 128


class FakeApiServer:
    """`nodes` nodes named gpu-node-0.., each with `padding` bytes of node
    images (a real Node's status.images is most of its size)."""

    def __init__(self, cert, key, nodes=10, padding=0):
        self.lock = threading.Lock()
        self.revision = 100
        self.nodes = {}
        for i in range(nodes):
            self.add_node("gpu-node-%d" % i, padding)
        self.leases = {}  # (namespace, name) -> Lease
        self.requests, self.problems, self.lists = [], [], []
        self.forbid = False
        self.fail_taint = []  # HTTP codes the next taint PATCHes answer
        self.unhealthy_max = 0
        self.unhealthy_at = {}  # node -> when gpuscope's GpuHealthy=False was set
        self.slices = []  # ResourceSlice objects
        self.forbid_slices = False
        self.slice_lists = []  # the query of each ResourceSlice list
        self.slice_versions = ["v1", "v1beta2", "v1beta1"]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self):
                # The TLS handshake in this request's thread, not in the accepting
                # one: 20 agents at once would queue behind each other's handshakes.
                self.request.do_handshake()
                super().setup()

            def log_message(self, *args):
                pass

            def answer(self, code, body):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def serve(self):
                n = int(self.headers.get("Content-Length", "0") or "0")
                data = self.rfile.read(n) if n else b""
                code, body = outer.handle(self.command, self.path, self.headers, data)
                self.answer(code, body)

            do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = serve

        self.httpd = _ApiHttpServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True,
                                            do_handshake_on_connect=False)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_revision(self):
        self.revision += 1
        return str(self.revision)

    def add_node(self, name, padding=0):
        node = {"metadata": {"name": name, "uid": "uid-" + name,
                             "resourceVersion": self.next_revision(),
                             "labels": {"kubernetes.io/hostname": name}},
                "spec": {},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        if padding:
            digest = "sha256:" + "0" * 64
            node["status"]["images"] = [
                {"names": ["registry.example/ml/image-%d@%s" % (i, digest)], "sizeBytes": 1 << 30}
                for i in range(max(1, padding // 120))]
        self.nodes[name] = node

    # What a person does with kubectl.
    def cordon(self, name):
        with self.lock:
            node = self.nodes[name]
            node["spec"]["unschedulable"] = True
            # What the node lifecycle controller adds for spec.unschedulable.
            node["spec"].setdefault("taints", []).append(
                {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                 "timeAdded": "2026-12-04T08:00:00Z"})
            node["metadata"]["resourceVersion"] = self.next_revision()

    def taint(self, name, key, value, effect):
        with self.lock:
            node = self.nodes[name]
            node["spec"].setdefault("taints", []).append(
                {"key": key, "value": value, "effect": effect})
            node["metadata"]["resourceVersion"] = self.next_revision()

    def handle(self, method, raw_path, headers, data):
        url = urllib.parse.urlsplit(raw_path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        path = url.path
        with self.lock:
            self.requests.append((method, path, headers.get("Content-Type"), data))
            if headers.get("Authorization") != "Bearer " + TOKEN:
                self.problems.append("no bearer token on %s %s" % (method, raw_path))
                return status(401, "Unauthorized", "Unauthorized")
            if path.startswith(COORDINATION):
                return self.handle_lease(method, path, headers, data)
            if path.startswith("/apis/resource.k8s.io/"):
                return self.handle_slices(method, path, query)
            if method == "GET" and path == "/api/v1/nodes":
                return self.list_nodes(query)
            m = re.fullmatch(r"/api/v1/nodes/([^/]+)(/status)?", path)
            if not m:
                self.problems.append("unexpected %s %s" % (method, raw_path))
                return status(404, "NotFound", "the server could not find the requested resource")
            if m.group(1) not in self.nodes:
                return not_found("nodes", "", m.group(1))
            node = self.nodes[m.group(1)]
            if method == "GET" and not m.group(2):
                return 200, node
            if self.forbid:
                return status(403, "Forbidden",
                              'nodes "%s" is forbidden: User "system:serviceaccount:gpuscope:'
                              'gpuscope" cannot patch resource "nodes/status" in API group "" '
                              'at the cluster scope' % m.group(1))
            if method != "PATCH":
                self.problems.append("unexpected %s %s" % (method, raw_path))
                return status(405, "MethodNotAllowed", "method not allowed")
            if m.group(2):
                return self.patch_status(node, headers, data)
            return self.patch_node(node, headers, data)

    def add_gpu_slice(self, node, devices, generation=1, name_suffix="x7k2p"):
        """One slice of NVIDIA's driver for `node`, whose pool it names after
        the node, with `devices` as (name, type, uuid, parent uuid or None)."""
        listed = []
        for name, kind, uuid, parent in devices:
            attributes = {"type": {"string": kind}, "uuid": {"string": uuid},
                          "productName": {"string": "NVIDIA A100-SXM4-80GB"},
                          "driverVersion": {"version": "570.124.6"},
                          "cudaComputeCapability": {"version": "8.0.0"}}
            if parent:
                attributes["parentUUID"] = {"string": parent}
                attributes["profile"] = {"string": name.split("-mig-")[1].split("-")[0]}
            listed.append({"name": name, "attributes": attributes,
                           "capacity": {"memory": {"value": "80Gi" if not parent else "20Gi"}}})
        with self.lock:
            self.slices.append({
                "kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
                "metadata": {"name": "%s-gpu.nvidia.com-%s" % (node, name_suffix),
                             "generateName": "%s-gpu.nvidia.com-" % node,
                             "uid": "uid-slice-%s-%s" % (node, name_suffix),
                             "resourceVersion": self.next_revision(),
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                  "name": node, "uid": "uid-" + node,
                                                  "controller": True}]},
                "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                         "pool": {"name": node, "generation": generation,
                                  "resourceSliceCount": 1},
                         "devices": listed}})

    def add_other_slice(self, node, driver, device):
        """A slice of another driver, one device without attributes."""
        with self.lock:
            self.slices.append({
                "kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
                "metadata": {"name": "%s-%s-%s" % (node, driver, device),
                             "resourceVersion": self.next_revision()},
                "spec": {"driver": driver, "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": device}]}})

    def handle_slices(self, method, path, query):
        m = RESOURCE_SLICES.fullmatch(path)
        if not m or m.group(1) not in self.slice_versions:
            return status(404, "NotFound", "the server could not find the requested resource")
        version = m.group(1)
        if method != "GET":
            self.problems.append("a write to ResourceSlices: %s %s" % (method, path))
            return status(405, "MethodNotAllowed", "method not allowed")
        if self.forbid_slices:
            return status(403, "Forbidden",
                          'resourceslices.resource.k8s.io is forbidden: User "system:'
                          'serviceaccount:gpuscope:gpuscope" cannot list resource "resourceslices"'
                          ' in API group "resource.k8s.io" at the cluster scope')
        selector = query.get("fieldSelector", [""])[0]
        self.slice_lists.append(query)
        if not selector:
            self.problems.append("ResourceSlices listed without a field selector (the whole "
                                 "cluster's)")
        matches = []
        for term in filter(None, selector.split(",")):
            field, _, value = term.partition("=")
            if field not in ("spec.nodeName", "spec.driver"):
                return status(400, "BadRequest", 'unable to parse requirement: field label '
                              'not supported: %s' % field)
            matches.append((field.split(".")[1], value))
        items = [s for s in self.slices if all(s["spec"].get(k) == v for k, v in matches)]
        limit = int(query.get("limit", ["0"])[0] or "0")
        start = 0
        if query.get("continue", [""])[0]:
            start = int(json.loads(base64.b64decode(query["continue"][0]))["start"])
        page = items[start:start + limit] if limit else items[start:]
        if version == "v1beta1":
            page = [self.as_v1beta1(s) for s in page]
        metadata = {"resourceVersion": str(self.revision)}
        if limit and start + limit < len(items):
            metadata["continue"] = base64.b64encode(
                json.dumps({"start": start + limit}).encode()).decode()
            metadata["remainingItemCount"] = len(items) - start - limit
        return 200, {"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/" + version,
                     "metadata": metadata, "items": page}

    @staticmethod
    def as_v1beta1(s):
        s = json.loads(json.dumps(s))
        s["apiVersion"] = "resource.k8s.io/v1beta1"
        s["spec"]["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items()
                                                              if k != "name"}}
                                for d in s["spec"]["devices"]]
        return s

    def list_nodes(self, query):
        limit = int(query.get("limit", ["0"])[0] or "0")
        token = query.get("continue", [""])[0]
        self.lists.append((limit, token))
        names = list(self.nodes)
        start = 0
        if token:
            try:
                start = json.loads(base64.b64decode(token))["start"]
            except (ValueError, KeyError, TypeError):
                return status(400, "BadRequest", "continue key is not valid: %r" % token)
        end = len(names) if limit <= 0 else min(len(names), start + limit)
        meta = {"resourceVersion": str(self.revision)}
        if end < len(names):
            meta["continue"] = base64.b64encode(
                json.dumps({"v": "meta.k8s.io/v1", "rv": self.revision,
                            "start": end}).encode()).decode()
            meta["remainingItemCount"] = len(names) - end
        body = {"kind": "NodeList", "apiVersion": "v1", "metadata": meta,
                "items": [self.nodes[n] for n in names[start:end]]}
        return 200, json.dumps(body).encode()

    def patch_status(self, node, headers, data):
        if headers.get("Content-Type") != "application/strategic-merge-patch+json":
            self.problems.append("status patch content type %s" % headers.get("Content-Type"))
            return status(415, "UnsupportedMediaType", "unsupported media type")
        patch = json.loads(data)
        if list(patch) != ["status"] or list(patch["status"]) != ["conditions"]:
            self.problems.append("status patch touches more than conditions: %s" % patch)
        conditions = node["status"]["conditions"]
        for c in patch["status"]["conditions"]:
            for field in ("type", "status", "reason", "message", "lastTransitionTime"):
                if field not in c:
                    self.problems.append("condition without %s: %s" % (field, c))
            conditions[:] = [x for x in conditions if x["type"] != c["type"]] + [c]
        node["metadata"]["resourceVersion"] = self.next_revision()
        name = node["metadata"]["name"]
        if ours_unhealthy(node):
            self.unhealthy_at.setdefault(name, time.time())
        unhealthy = sum(1 for n in self.nodes.values() if ours_unhealthy(n))
        self.unhealthy_max = max(self.unhealthy_max, unhealthy)
        return 200, node

    def patch_node(self, node, headers, data):
        if headers.get("Content-Type") != "application/json-patch+json":
            self.problems.append("node patch content type %s" % headers.get("Content-Type"))
            return status(415, "UnsupportedMediaType", "unsupported media type")
        if self.fail_taint:
            code = self.fail_taint.pop(0)
            if code == 409:
                return status(409, "Conflict", 'Operation cannot be fulfilled on nodes "%s": the '
                              'object has been modified; please apply your changes to the latest '
                              'version and try again' % node["metadata"]["name"])
            return status(code, "InternalError", "Internal error occurred: etcdserver: "
                          "request timed out")
        ops = json.loads(data)
        taints = node["spec"].get("taints")
        for op in ops:
            if op["op"] == "test":
                if op["path"] != "/metadata/resourceVersion":
                    self.problems.append("test of %s" % op["path"])
                if op["value"] != node["metadata"]["resourceVersion"]:
                    return status(422, "Invalid", "the server rejected our request due to an "
                                  "error in our request")
            elif op["op"] == "add" and op["path"] == "/spec/taints":
                taints = op["value"]
            else:
                self.problems.append("unexpected op %s" % op)
        node["spec"]["taints"] = taints
        node["metadata"]["resourceVersion"] = self.next_revision()
        return 200, node

    def handle_lease(self, method, path, headers, data):
        m = re.fullmatch(re.escape(COORDINATION) + r"([^/]+)/leases(?:/([^/]+))?", path)
        if not m:
            self.problems.append("unexpected %s %s" % (method, path))
            return status(404, "NotFound", "the server could not find the requested resource")
        ns, name = m.group(1), m.group(2)
        if ns != NAMESPACE:
            self.problems.append("Lease outside the agent's namespace: %s" % path)
            return status(403, "Forbidden", 'leases.coordination.k8s.io is forbidden in '
                          'namespace "%s"' % ns)
        if method == "GET" and name:
            lease = self.leases.get((ns, name))
            return (200, lease) if lease else not_found("leases", "coordination.k8s.io", name)
        if method not in ("POST", "PUT") or (method == "POST") == bool(name):
            self.problems.append("unexpected %s %s" % (method, path))
            return status(405, "MethodNotAllowed", "method not allowed")
        if headers.get("Content-Type") != "application/json":
            self.problems.append("Lease %s content type %s" % (method, headers.get("Content-Type")))
            return status(415, "UnsupportedMediaType", "unsupported media type")
        lease = json.loads(data)
        meta = lease.get("metadata", {})
        if lease.get("apiVersion") != "coordination.k8s.io/v1" or lease.get("kind") != "Lease":
            self.problems.append("not a coordination.k8s.io/v1 Lease: %s" % lease)
            return status(400, "BadRequest", "not a Lease")
        annotations = meta.get("annotations", {})
        if not all(isinstance(v, str) for v in annotations.values()):
            self.problems.append("annotation values must be strings: %s" % annotations)
            return status(400, "BadRequest", "annotations: expected string")
        if meta.get("namespace", ns) != ns:
            return status(400, "BadRequest", "the namespace of the provided object does not "
                          "match the namespace sent on the request")
        if method == "POST":
            name = meta.get("name")
            if "resourceVersion" in meta:
                self.problems.append("create with a resourceVersion")
                return status(500, "InternalError",
                              "resourceVersion should not be set on objects to be created")
            if (ns, name) in self.leases:
                return status(409, "AlreadyExists",
                              'leases.coordination.k8s.io "%s" already exists' % name,
                              {"name": name, "group": "coordination.k8s.io", "kind": "leases"})
            meta.update({"namespace": ns, "uid": "uid-lease-" + name,
                         "creationTimestamp": "2026-12-04T08:00:00Z",
                         "resourceVersion": self.next_revision()})
            self.leases[(ns, name)] = lease
            return 201, lease
        if meta.get("name") != name:
            return status(400, "BadRequest", "the name of the object (%s) does not match the "
                          "name on the URL (%s)" % (meta.get("name"), name))
        current = self.leases.get((ns, name))
        if current is None:
            return not_found("leases", "coordination.k8s.io", name)
        if not meta.get("resourceVersion"):
            self.problems.append("Lease update without a resourceVersion")
            return status(422, "Invalid", 'Lease.coordination.k8s.io "%s" is invalid: '
                          'metadata.resourceVersion: Invalid value: 0x0: must be specified '
                          'for an update' % name)
        if meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
            return status(409, "Conflict", 'Operation cannot be fulfilled on '
                          'leases.coordination.k8s.io "%s": the object has been modified; '
                          'please apply your changes to the latest version and try again' % name,
                          {"name": name, "group": "coordination.k8s.io", "kind": "leases"})
        meta["resourceVersion"] = self.next_revision()
        self.leases[(ns, name)] = lease
        return 200, lease

    # What the tests read.
    def condition(self, name):
        with self.lock:
            for c in self.nodes[name]["status"]["conditions"]:
                if c["type"] == "GpuHealthy":
                    return dict(c)
        return None

    def taints(self, name):
        with self.lock:
            return [t["key"] for t in self.nodes[name]["spec"].get("taints", [])]

    def unschedulable(self, name):
        with self.lock:
            return bool(self.nodes[name]["spec"].get("unschedulable"))

    def holders(self, name="gpuscope-remediation"):
        """The nodes the breaker's Lease lists (None: no Lease)."""
        with self.lock:
            lease = self.leases.get((NAMESPACE, name))
            if lease is None:
                return None
            text = lease["metadata"].get("annotations", {}).get("gpuscope.io/drained-nodes",
                                                                  "{}")
            return sorted(json.loads(text))

    def unhealthy(self):
        with self.lock:
            return sorted(n for n, node in self.nodes.items() if ours_unhealthy(node))
