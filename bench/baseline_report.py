#!/usr/bin/env python3
"""Figures of docs/baselines.md: builds the 14-day simulator history in a real
Prometheus (tests/integration/baseline_history.py, the whole window group
backfilled), then

1. replays every alert over the history with range queries (the baseline
   alerts at their 5-minute resolution; the shipped fixed-threshold efficiency
   alerts and two typical fixed rules at 2 minutes, under the API's 11,000 points, their `for` applied) and
   counts true and false alerts against what the scenario did;
2. loads the baseline rules with 15 s group intervals and reads Prometheus's
   own rule-group metrics (prometheus_rule_group_last_duration_seconds,
   prometheus_rule_group_last_evaluation_samples), scaled to 1,000 GPUs.

    GPUSCOPE_BUILD_DIR=build/release python3 bench/baseline_report.py

Prints Markdown. Takes minutes (the generation is cached under build/)."""
import os
import re
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import baseline_history as bh  # noqa: E402
from gpuscope_testlib import http_get, wait_until  # noqa: E402

DAY = bh.DAY
# What the scenario did: (workload, model) -> (kind of problem, onset in scenario seconds).
PROBLEMS = {"vision-train": ("SM activity -25%", 13 * DAY),
            "speech-train": ("temperature +6 C", 12 * DAY)}
GPU_WORKLOAD = {0: "llm-train", 1: "llm-train", 2: "llm-train", 3: "chat-api", 4: "vision-train",
                5: "speech-train"}
TYPICAL = [
    ("utilization < 50% for 30m (typical, not shipped)",
     'rate(gpuscope_gpu_busy_seconds_total{workload!=""}[5m]) < 0.5', 1800),
    ("temperature > 85 C for 5m (typical, not shipped)",
     'gpuscope_gpu_temperature_celsius{workload!=""} > 85', 300),
]
NOT_IN_HISTORY = {
    "GpuOomPredicted": "reads the diagnosis's gpuscope_memory_oom_eta_seconds (serve computes it; "
                       "the generator does not run the diagnosis)",
    "GpuInterconnectSaturated": "reads the diagnosis's gpuscope_bottleneck",
    "GpuPcieLinkDowngraded": "reads PCIe generations, constant here (no PCIe fault)",
}


def parse_for(text):
    return bh.parse_duration(text) if text else 0


def incidents(h, expr, step, hold, start):
    """[(labels, first firing unix time)] of expr over the history: present
    for `hold` seconds in a row (a gap of more than one step resets it)."""
    out = []
    for s in h.range_query(expr, start, step):
        run_start = prev = None
        fired = False
        for t, _ in s["values"]:
            t = float(t)
            if prev is None or t - prev > step * 1.5:
                run_start, fired = t, False
            prev = t
            if not fired and t - run_start >= hold:
                out.append((s["metric"], t))
                fired = True
    return out


def workload_of(h, labels, t):
    if "workload" in labels:
        return labels["workload"]
    return GPU_WORKLOAD.get(int(labels.get("gpu", -1)), "?")


def judge(h, found):
    true_, false_ = [], []
    for labels, t in found:
        wl = workload_of(h, labels, t)
        problem = PROBLEMS.get(wl)
        scenario_t = t - h.start
        (true_ if problem and scenario_t >= problem[1] else false_).append(
            "%s (day %.1f)" % (wl, scenario_t / DAY))
    return true_, false_


def alert_table(h):
    rows = []
    with open(bh.BASELINE_RULES) as f:
        base = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]
    with open(bh.EFFICIENCY_RULES) as f:
        fixed = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]
    for r in base:
        rows.append(("baseline", r["alert"]) + judge(h, incidents(h, r["expr"], 300, 0,
                                                                  h.start + 300)))
    for r in fixed:
        if r["alert"] in NOT_IN_HISTORY:
            rows.append(("fixed", r["alert"], None, NOT_IN_HISTORY[r["alert"]]))
            continue
        rows.append(("fixed", r["alert"]) + judge(h, incidents(
            h, r["expr"], 120, parse_for(r.get("for")), h.start + 1800)))
    for name, expr, hold in TYPICAL:
        rows.append(("fixed", name) + judge(h, incidents(h, expr, 120, hold, h.start + 300)))
    return rows


def fast_rules(workdir):
    with open(bh.BASELINE_RULES) as f:
        doc = yaml.safe_load(f)
    for g in doc["groups"]:
        g["interval"] = "15s"
    path = os.path.join(workdir, "fast-baselines.yml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    return path


def own_metrics(h):
    """Prometheus's own rule-group metrics from its /metrics (it does not
    scrape itself here): {group: {metric: value}}."""
    _, _, body = http_get(h.prom.base + "/metrics", timeout=30)
    out = {}
    for m in re.finditer(r'^(prometheus_rule_group_[a-z_]+)\{rule_group="[^";]*;([^"]+)"\} (\S+)$',
                         body, re.M):
        if "baselines" in m.group(2):
            out.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3))
    return out


def rule_cost(h):
    h.restart((fast_rules(h.workdir),))

    def evaluated():
        groups = own_metrics(h)
        return len(groups) == 3 and all(
            g.get("prometheus_rule_group_iterations_total", 0) >= 3 for g in groups.values())
    wait_until(evaluated, "three evaluations of each baseline group", 300)
    cost = own_metrics(h)
    q = h.prom.query
    keys = len(q('count by (namespace, workload, hpc_job, model) '
                 '(gpuscope:workload_signal:avg5m)'))
    gpus = len(q("count by (instance, gpu) (gpuscope_gpu_info)"))
    return cost, keys, gpus


def main():
    workdir = tempfile.mkdtemp(dir=bh.BUILD_DIR, prefix="baseline-report-")
    t0 = time.time()
    # 15 minutes ahead: the live evaluation of the 5-minute group, minutes
    # after the backfill, still reads raw samples.
    h = bh.History(workdir, ahead=900)
    try:
        rows = alert_table(h)
        print_alerts(rows)
        cost, keys, gpus = rule_cost(h)
    finally:
        h.close()
    print_cost(cost, keys, gpus)
    print("\ntimings (s): %s; total %.0f s" % (
        {k: round(v, 1) for k, v in h.timings.items()}, time.time() - t0))
    return 0


def print_alerts(rows):
    print("## Alerts over the 14-day history\n")
    print("| rule | alert | true alerts | false alerts |\n|---|---|---|---|")
    for kind, name, true_, false_ in rows:
        if true_ is None:
            print("| %s | %s | not evaluated: %s | |" % (kind, name, false_))
        else:
            print("| %s | %s | %d %s | %d %s |" % (kind, name, len(true_), ", ".join(true_),
                                                  len(false_), ", ".join(false_[:6])))
    sys.stdout.flush()


def print_cost(cost, keys, gpus):
    print("\n## Rule cost (%d GPUs, %d workload keys)\n" % (gpus, keys))
    print("| group | rules | last evaluation | samples written |\n|---|---|---|---|")
    for group, c in sorted(cost.items()):
        print("| %s | %d | %.1f ms | %d |" % (
            group, c.get("prometheus_rule_group_rules", 0),
            1000 * c.get("prometheus_rule_group_last_duration_seconds", 0),
            c.get("prometheus_rule_group_last_evaluation_samples", 0)))


if __name__ == "__main__":
    sys.exit(main())
