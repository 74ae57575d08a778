"""A fake container runtime for the attribution tests: the CRI's
`/runtime.v1.RuntimeService/ListContainers` over a unix socket, served with
Debian's python3-grpcio. The answer is protobuf encoded here by hand from the
API's field numbers, like fake_kubelet.py.

Containers are given as (id, namespace, pod, container); the kubelet's labels
(io.kubernetes.pod.*) are added as a kubelet-created container has them.
"""
from fake_kubelet import UnaryUnixServer, _field


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


class FakeCri(UnaryUnixServer):
    def __init__(self, socket_path, containers=()):
        super().__init__(socket_path, "runtime.v1.RuntimeService", "ListContainers",
                         encode_containers(containers))
