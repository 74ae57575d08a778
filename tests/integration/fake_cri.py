"""A fake container runtime for the attribution tests: the CRI's
`/runtime.v1.RuntimeService/ListContainers` over a unix socket, served with
Debian's python3-grpcio. The answer is protobuf encoded here by hand from the
API's field numbers, like fake_kubelet.py.

Containers are given as (id, namespace, pod, container); the kubelet's labels
(io.kubernetes.pod.*) are added as a kubelet-created container has them.
"""
import os
from concurrent import futures

import grpc

from fake_kubelet import _field


def encode_containers(containers):
    """ListContainersResponse{containers=1: Container{id=1, pod_sandbox_id=2,
    metadata=3: ContainerMetadata{name=1}, labels=8: map<string,string>}}"""
    body = b""
    for cid, namespace, pod, container in containers:
        labels = {"io.kubernetes.pod.namespace": namespace, "io.kubernetes.pod.name": pod,
                  "io.kubernetes.pod.uid": "uid-" + pod, "io.kubernetes.container.name": container}
        msg = _field(1, cid) + _field(2, "sandbox-" + pod) + _field(3, _field(1, container))
        msg += b"".join(_field(8, _field(1, k) + _field(2, v)) for k, v in labels.items())
        body += _field(1, msg)
    return body


class FakeCri:
    def __init__(self, socket_path, containers=()):
        self.socket_path = socket_path
        self.answer = encode_containers(containers)
        self.calls = 0
        self.server = None

    def _list(self, request, context):
        self.calls += 1
        return self.answer

    def start(self):
        handler = grpc.method_handlers_generic_handler("runtime.v1.RuntimeService", {
            "ListContainers": grpc.unary_unary_rpc_method_handler(
                self._list, request_deserializer=lambda b: b,
                response_serializer=lambda b: b)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + self.socket_path)
        self.server.start()

    def stop(self):
        if self.server:
            self.server.stop(0).wait()
            self.server = None
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
