#!/usr/bin/env python3
"""Issue 39, item 4, in Kubernetes: the circuit breaker holds under
concurrency. 20 `gpuscope serve --remediate kubernetes` agents, one per node
of a 24-node fake API server (fake_kube_api.py), fault at once with a breaker
limit of 1, then 2: exactly that many drain, the others answer breaker_open,
the fake never sees more nodes with gpuscope's GpuHealthy=False at any
moment, and the coordination.k8s.io/v1 Lease lists the drained nodes. Before
the Lease, 7 of 20 drained with either limit. Runs alone (20 agents).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import check, main, wait_until  # noqa: E402
from remediate_common import XID79_ON_GPU1, actions, inject  # noqa: E402
from test_remediate_kubernetes import KubernetesCase  # noqa: E402


class BreakerUnderConcurrencyTest(KubernetesCase):
    """Issue 39, item 4: 20 agents fault at once; the Lease lets at most the
    limit drain, and no more nodes are ever GpuHealthy=False at once."""
    nodes = 24

    def race(self, limit):
        agents = [self.serve("--remediate-breaker-fraction", "0",
                             "--remediate-breaker-min-nodes", str(limit),
                             node="gpu-node-%d" % i, wait=False) for i in range(20)]
        for s in agents:
            s.wait_healthy()
        for s in agents:
            inject(s.control, XID79_ON_GPU1)
        started = time.time()

        def results():
            return [[r for a, r in actions(s) if a == "drain"] for s in agents]
        wait_until(lambda: all(results()), "every agent decided: %s" % results(), timeout=60)
        print("limit %d: 20 agents decided within %.1f s" % (limit, time.time() - started),
              file=sys.stderr)
        firsts = [r[0] for r in results()]
        check(firsts.count("ok") == limit and firsts.count("breaker_open") == 20 - limit,
              "first decisions: %s" % firsts)
        check(self.api.unhealthy_max == limit,
              "at most %d drained at any time, saw %d" % (limit, self.api.unhealthy_max))
        check(len(self.api.unhealthy()) == limit, self.api.unhealthy())
        check(self.api.holders() == self.api.unhealthy(),
              "the Lease lists the drained: %s %s" % (self.api.holders(), self.api.unhealthy()))
        check(self.api.problems == [], "problems: %s" % self.api.problems)

    def test_limit_1(self):
        self.race(1)

    def test_limit_2(self):
        self.race(2)


if __name__ == "__main__":
    main()
