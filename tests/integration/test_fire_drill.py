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
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_serve_common import SOURCE_DIR, Serve, check, free_port, http_get  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
RULES = os.path.join(SOURCE_DIR, "deploy", "prometheus", "rules", "gpu-health.yml")
OTHERS = ["0", "1", "2", "4", "5", "6", "7"]


class Daemon:
    """A child process with a temp dir; its log is shown when a check fails."""

    def __init__(self, name, argv, workdir):
        self.name = name
        self.port = None
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-3000:]

    def wait_ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            check(self.proc.poll() is None, "%s exited:\n%s" % (self.name, self.output()))
            try:
                if http_get("http://127.0.0.1:%d/-/ready" % self.port)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("%s not ready:\n%s" % (self.name, self.output()))

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def start_alertmanager(workdir):
    config = os.path.join(workdir, "alertmanager.yml")
    with open(config, "w") as f:
        f.write("route:\n  receiver: drop\n  group_wait: 0s\n  group_interval: 1s\n"
                "receivers:\n  - name: drop\n")
    port = free_port()
    am = Daemon("alertmanager", [
        ALERTMANAGER, "--config.file=" + config,
        "--storage.path=" + os.path.join(workdir, "am-data"),
        "--web.listen-address=127.0.0.1:%d" % port,
        "--cluster.listen-address="], workdir)
    am.port = port
    return am


def start_prometheus(workdir, target, alertmanager_port):
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "  evaluation_interval: 1s\n"
                "rule_files:\n  - '%s'\n"
                "alerting:\n  alertmanagers:\n    - static_configs:\n"
                "        - targets: ['127.0.0.1:%d']\n"
                "scrape_configs:\n  - job_name: gpuscope\n"
                "    static_configs:\n      - targets: ['%s']\n"
                % (RULES, alertmanager_port, target))
    port = free_port()
    prom = Daemon("prometheus", [
        PROMETHEUS, "--config.file=" + config,
        "--storage.tsdb.path=" + os.path.join(workdir, "prom-data"),
        "--web.listen-address=127.0.0.1:%d" % port], workdir)
    prom.port = port
    return prom


def query(prom, expr):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (prom.port,
                                                     urllib.parse.urlencode({"query": expr}))
    status, _, body = http_get(url)
    check(status == 200, "query %s: %s %s" % (expr, status, body))
    return {r["metric"].get("gpu", ""): float(r["value"][1])
            for r in json.loads(body)["data"]["result"]}


def fallen_off_bus(am):
    status, _, body = http_get("http://127.0.0.1:%d/api/v2/alerts" % am.port)
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
                         % (timeout, http_get("http://127.0.0.1:%d/api/v1/alerts" % prom.port)[2],
                            prom.output()))


def check_others_advance(prom, instance):
    expr = 'gpuscope_gpu_last_sample_timestamp_seconds{instance="%s"}' % instance
    first = query(prom, expr)
    time.sleep(4)
    second = query(prom, expr)
    check(sorted(first) == sorted(second) == sorted(OTHERS + ["3"]), (first, second))
    for gpu in OTHERS:
        check(second[gpu] > first[gpu], "GPU %s stopped: %s -> %s" % (gpu, first[gpu],
                                                                        second[gpu]))
    check(second["3"] == first["3"], "lost GPU 3 advanced: %s -> %s" % (first["3"], second["3"]))
    energy = query(prom, 'increase(gpuscope_energy_joules_total{instance="%s"}[5s])' % instance)
    for gpu in OTHERS:
        check(energy.get(gpu, 0) > 0, "GPU %s energy did not grow: %s" % (gpu, energy))
    check("3" not in energy or energy["3"] == 0, "lost GPU 3 energy grew: %s" % energy)


def main():
    for tool in (PROMETHEUS, ALERTMANAGER):
        if not os.access(tool, os.X_OK):
            print("skip: %s missing" % tool)
            return 0
    workdir = tempfile.mkdtemp(prefix="gpuscope-drill-")
    daemons = []
    try:
        with Serve(["--simulate", "fault-drill", "-c", "500"]) as serve:
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
            check(labels.get("severity") == "critical" and labels.get("instance") == instance and
                  labels.get("uuid", "").startswith("GPU-"), labels)
            check("runbook_url" in alerts[0]["annotations"], alerts[0]["annotations"])
            check_others_advance(prom, instance)
            lost = query(prom, 'gpuscope_gpu_lost{instance="%s"}' % instance)
            check(lost.get("3") == 1 and all(lost.get(g) == 0 for g in OTHERS), lost)
            xid = query(prom, 'gpuscope_xid_errors_total{instance="%s",xid="79"}' % instance)
            check(xid == {"3": 1.0}, "XID 79 counts %s" % xid)
            status, _, body = serve.get("/health")
            check(status == 200, "one lost GPU of 8 keeps /health at 200: %s %s" % (status, body))
    finally:
        for d in daemons:
            d.close()
        shutil.rmtree(workdir, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
