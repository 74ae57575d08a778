#!/usr/bin/env python3
"""Fire drill, end to end: a GPU falls off the bus and the page goes out.

`gpuscope serve --simulate fault-drill` (8 x H100; GPU 3 lost with XID 79 five
seconds in), a real Prometheus (1 s scrape and rule evaluation, the shipped
rules of deploy/prometheus/rules/gpu-health.yml) and a real Alertmanager, all
started here on free loopback ports. The test waits until Alertmanager's
/api/v2/alerts holds GpuFallenOffBus for gpu="3" (and for no other GPU), and
checks through Prometheus that the other seven GPUs' series keep advancing
while GPU 3's stops.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~20-40 s.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (ALERTMANAGER, PROMETHEUS, RULES_DIR, Prometheus,  # noqa: E402
                              Serve, check, http_get, need_tool, main, scrape_config,
                              start_alertmanager)

RULES = os.path.join(RULES_DIR, "gpu-health.yml")
OTHERS = ["0", "1", "2", "4", "5", "6", "7"]


def start_prometheus(workdir, target, alertmanager_port):
    return Prometheus(workdir, scrape_config(target, [RULES], alertmanager_port))


def fallen_off_bus(am):
    status, _, body = http_get(am.base + "/api/v2/alerts")
    check(status == 200, "alertmanager alerts: %s %s" % (status, body))
    return [a for a in json.loads(body) if a["labels"].get("alertname") == "GpuFallenOffBus"]


def wait_for_page(am, prom, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        alerts = fallen_off_bus(am)
        if alerts:
            return alerts
        time.sleep(0.5)
    raise AssertionError("no GpuFallenOffBus in Alertmanager after %ss; prometheus alerts: %s\n%s"
                         % (timeout, http_get(prom.base + "/api/v1/alerts")[2],
                            prom.output()))


def check_others_advance(prom, instance):
    expr = 'gpuscope_gpu_last_sample_timestamp_seconds{instance="%s"}' % instance
    first = prom.by_gpu(expr)
    time.sleep(4)
    second = prom.by_gpu(expr)
    check(sorted(first) == sorted(second) == sorted(OTHERS + ["3"]), (first, second))
    for gpu in OTHERS:
        check(second[gpu] > first[gpu], "GPU %s stopped: %s -> %s" % (gpu, first[gpu],
                                                                        second[gpu]))
    check(second["3"] == first["3"], "lost GPU 3 advanced: %s -> %s" % (first["3"], second["3"]))
    energy = prom.by_gpu('increase(gpuscope_energy_joules_total{instance="%s"}[5s])' % instance)
    for gpu in OTHERS:
        check(energy.get(gpu, 0) > 0, "GPU %s energy did not grow: %s" % (gpu, energy))
    check("3" not in energy or energy["3"] == 0, "lost GPU 3 energy grew: %s" % energy)


class FireDrillTest(unittest.TestCase):
    def test_gpu_fallen_off_the_bus_pages(self):
        need_tool(PROMETHEUS, "prometheus")
        need_tool(ALERTMANAGER, "prometheus-alertmanager")
        workdir = tempfile.mkdtemp(prefix="gpuscope-drill-")
        daemons = []
        try:
            # The full profile: the drill reads last-sample timestamps (full only).
            with Serve(["--simulate", "fault-drill", "-c", "500", "--profile", "full"]) as serve:
                instance = "127.0.0.1:%d" % serve.port
                am = start_alertmanager(workdir)
                daemons.append(am)
                prom = start_prometheus(workdir, instance, am.port)
                daemons.append(prom)
                am.wait_ready()
                prom.wait_ready()
                started = time.time()
                alerts = wait_for_page(am, prom)
                print("page after %.1f s" % (time.time() - started))
                gpus = sorted(a["labels"].get("gpu") for a in alerts)
                check(gpus == ["3"], "GpuFallenOffBus for %s" % gpus)
                labels = alerts[0]["labels"]
                check(labels.get("severity") == "critical" and
                      labels.get("instance") == instance and
                      labels.get("uuid", "").startswith("GPU-"), labels)
                check("runbook_url" in alerts[0]["annotations"], alerts[0]["annotations"])
                check_others_advance(prom, instance)
                lost = prom.by_gpu('gpuscope_gpu_lost{instance="%s"}' % instance)
                check(lost.get("3") == 1 and all(lost.get(g) == 0 for g in OTHERS), lost)
                xid = prom.by_gpu('gpuscope_xid_errors_total{instance="%s",xid="79"}' % instance)
                check(xid == {"3": 1.0}, "XID 79 counts %s" % xid)
                status, _, body = serve.get("/health")
                check(status == 200,
                      "one lost GPU of 8 keeps /health at 200: %s %s" % (status, body))
        finally:
            for d in daemons:
                d.close()
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
