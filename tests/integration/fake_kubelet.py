"""A fake kubelet for the attribution tests: the pod-resources API v1
(`/v1.PodResourcesLister/List`) over a unix socket, served with Debian's
python3-grpcio. The answer is protobuf, encoded here by hand from the API's
field numbers (no generated code needed), and can be changed while serving;
stop() and start() behave like a kubelet restart (the socket goes away and
comes back as a new file).

Pods are given as (namespace, pod, container, resource, [device ids]). With
resource DRA, the list holds the container's DRA devices instead, as
(claim, driver, pool, device) tuples: ContainerResources.dynamic_resources,
what a kubelet with KubeletPodResourcesDynamicResources (beta, on by default
since 1.34) sends. Field numbers: k8s.io/kubelet pkg/apis/podresources/v1/
api.proto.
"""
import os
from concurrent import futures

import grpc


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


DRA = "dra"


def encode_claims(namespace, devices):
    """DynamicResource{claim_name=2, claim_namespace=3, claim_resources=4:
    ClaimResource{cdi_devices=1: CDIDevice{name=1}, driver_name=2,
    pool_name=3, device_name=4}}, one per claim, in ContainerResources
    field 5."""
    claims = {}
    for claim, driver, pool, device in devices:
        cdi = _field(1, _field(1, "k8s.%s/claim=%s-%s" % (driver, claim, device)))
        claims.setdefault(claim, []).append(
            cdi + _field(2, driver) + _field(3, pool) + _field(4, device))
    return b"".join(
        _field(5, _field(2, claim) + _field(3, namespace) +
               b"".join(_field(4, r) for r in resources))
        for claim, resources in claims.items())


def encode_pods(pods):
    """ListPodResourcesResponse{pod_resources=1: PodResources{name=1,
    namespace=2, containers=3: ContainerResources{name=1, devices=2:
    ContainerDevices{resource_name=1, device_ids=2}, dynamic_resources=5}}}"""
    body = b""
    for namespace, pod, container, resource, ids in pods:
        if resource == DRA:
            containers = _field(1, container) + encode_claims(namespace, ids)
        else:
            devices = _field(1, resource) + b"".join(_field(2, i) for i in ids)
            containers = _field(1, container) + _field(2, devices)
        body += _field(1, _field(1, pod) + _field(2, namespace) + _field(3, containers))
    return body


class UnaryUnixServer:
    """One unary gRPC method answering self.answer (bytes, encoded by hand)
    on a unix socket; stop() removes the socket file as a dying server does."""

    def __init__(self, socket_path, service, method, answer, options=()):
        self.socket_path = socket_path
        self.service, self.method, self.options = service, method, list(options)
        self.answer = answer
        self.calls = 0
        self.server = None

    def _answer(self, request, context):
        self.calls += 1
        return self.answer

    def start(self):
        handler = grpc.method_handlers_generic_handler(self.service, {
            self.method: grpc.unary_unary_rpc_method_handler(
                self._answer, request_deserializer=lambda b: b,
                response_serializer=lambda b: b)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2),
                                  options=self.options)
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + self.socket_path)
        self.server.start()

    def stop(self):
        if self.server:
            self.server.stop(0).wait()
            self.server = None
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)


class FakeKubelet(UnaryUnixServer):
    def __init__(self, socket_path, pods=()):
        super().__init__(socket_path, "v1.PodResourcesLister", "List", encode_pods(pods),
                         options=[("grpc.max_send_message_length", -1)])

    def set_pods(self, pods):
        self.answer = encode_pods(pods)
