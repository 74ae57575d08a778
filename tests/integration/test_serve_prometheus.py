#!/usr/bin/env python3
"""A real Prometheus scrapes `gpuscope serve --simulate training-8xh100`.

Checks that the target is up; that every metric NVIDIA's Grafana dashboard
12239 uses is there for all 8 GPUs with the labels gpu, UUID, modelName and
Hostname; that every panel query of the dashboard JSON (with $instance and
$gpu substituted) returns data; and that the energy counter agrees with the power gauge.

Energy vs power: rate(gpuscope_energy_joules_total[20s]) and
avg_over_time(DCGM_FI_DEV_POWER_USAGE[20s]) both measure the average power
over the same 20 s. Prometheus scrapes every second and gpuscope samples
every 250 ms. A scrape sees the counter as of the last cycle (up to a cycle
old, seconds on a heavily loaded machine), which shifts the rate by
(lag at the last scrape - lag at the first) / 20 s: 20 s rather than 10 s
halves that; the rate must agree within 7.5% (a 1.5 s lag swing). The
lag-free form, increase(energy) over the increase of
gpuscope_last_collect_timestamp_seconds on the same scrapes (the exact
sampler time the energy was integrated over), must agree within 2%. The test waits ~22 s of data after the target is up and finishes
in well under two minutes.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (Prometheus, Serve, check, need_shared_data,  # noqa: E402
                              main, scrape_config)

DASHBOARD_METRICS = ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
                     "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
                     "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"]


def panel_queries():
    with open(need_shared_data("grafana-12239-dcgm-exporter.json")) as f:
        dashboard = json.load(f)
    queries = []

    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    queries.append((panel.get("title"), target["expr"]))
            walk(panel.get("panels", []))
    walk(dashboard.get("panels", []))
    check(len(queries) >= 8, "dashboard has %d queries" % len(queries))
    return queries


def check_dashboard_metrics(prom, instance):
    for name in DASHBOARD_METRICS:
        series = prom.wait_for('%s{instance="%s"}' % (name, instance), 8)
        gpus = sorted(int(s["metric"]["gpu"]) for s in series)
        check(gpus == list(range(8)), "%s gpus %s" % (name, gpus))
        for s in series:
            labels = s["metric"]
            for label in ("gpu", "UUID", "modelName", "Hostname"):
                check(labels.get(label), "%s lacks %s: %s" % (name, label, labels))
            check(labels["UUID"].startswith("GPU-"), labels)
            check("H100" in labels["modelName"], labels)


def check_panels(prom, instance):
    for title, expr in panel_queries():
        for gpu in (".*", "3"):
            q = expr.replace("$instance", instance.replace(".", "\\\\.")).replace("$gpu", gpu)
            result = prom.query(q)
            check(result, "panel %r returned nothing for %s" % (title, q))
            if gpu == "3" and "avg(" not in q and "sum(" not in q:
                check(len(result) == 1 and result[0]["metric"]["gpu"] == "3", (q, result))


def check_energy(prom, instance):
    sel = '{instance="%s"}' % instance
    rates = prom.by_gpu("rate(gpuscope_energy_joules_total%s[20s])" % sel)
    power = prom.by_gpu("avg_over_time(DCGM_FI_DEV_POWER_USAGE%s[20s])" % sel)
    exact = prom.by_gpu("increase(gpuscope_energy_joules_total%s[20s]) / ignoring(gpu, uuid) "
                   "group_left increase(gpuscope_last_collect_timestamp_seconds%s[20s])"
                   % (sel, sel))
    check(len(rates) == 8 and sorted(rates) == sorted(power) == sorted(exact),
          (rates, power, exact))
    for gpu, watts in power.items():
        check(watts > 100, "GPU %s draws %s W" % (gpu, watts))
        for name, value, limit in (("rate", rates[gpu], 0.075), ("lag-free", exact[gpu], 0.02)):
            error = abs(value - watts) / watts
            check(error < limit, "GPU %s: energy %s %.1f W vs power %.1f W (%.1f%%)" %
                  (gpu, name, value, watts, 100 * error))


class ServePrometheusTest(unittest.TestCase):
    def test_dashboards_and_energy_through_prometheus(self):
        panel_queries()  # skips before starting anything without the reference data
        with Serve(["--simulate", "training-8xh100", "-c", "250"]) as serve:
            serve.wait_healthy()
            instance = "127.0.0.1:%d" % serve.port
            workdir = tempfile.mkdtemp(prefix="gpuscope-prom-")
            prom = Prometheus(workdir, scrape_config(instance))
            try:
                prom.wait_ready()
                up = prom.wait_for('up{job="gpuscope"} == 1', 1)
                check(up[0]["metric"]["instance"] == instance, up)
                check_dashboard_metrics(prom, instance)
                check_panels(prom, instance)
                started = time.time()
                prom.wait_for('count_over_time(DCGM_FI_DEV_POWER_USAGE{gpu="0"}[20s]) >= 19', 1, 45)
                time.sleep(max(0.0, 2 - (time.time() - started)))
                check_energy(prom, instance)
            finally:
                prom.close()
                shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
