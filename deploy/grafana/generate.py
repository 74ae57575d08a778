#!/usr/bin/env python3
"""Writes the gpuscope Grafana dashboards (deploy/grafana/dashboards/*.json).

The dashboards are data: this script holds their panels (title, PromQL, unit)
and writes the provisioned JSON, so every dashboard shares the same template
variables, datasource handling and layout. Edit the panels here, then run

    deploy/grafana/generate.py            # rewrite the JSON files
    deploy/grafana/generate.py --check    # exit 1 when a file is out of date

Variables on every dashboard: datasource, instance (agent), gpu (index) and
training_job (the grouping label of docs/scaling.md). "All" is the regex .*,
which also matches series without the label.
Health and efficiency panels never share a dashboard.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "dashboards")

DS = {"type": "prometheus", "uid": "${datasource}"}
# Selector of the three template variables, for any gpuscope series.
S = 'instance=~"$instance",gpu=~"$gpu",training_job=~"$training_job"'
# Whole GPUs only (MIG instance series carry gpu_instance).
SW = S + ',gpu_instance=""'
# GPUs that belong to a job.
J = S + ',training_job!=""'
GPU_LEGEND = "{{instance}} GPU {{gpu}}"
RI = "$__rate_interval"
# Application KPIs received over OTLP (docs/app-kpis.md) carry instance and gpu, not the job.
AS = 'instance=~"$instance",gpu=~"$gpu",gpu!=""'
KPI_LEGEND = "{{workload}} on {{instance}} GPU {{gpu}}"


def kpi_panels(kpi_title, rule, kpi):
    """A KPI's p50/p99 beside the clock and throttling of the same GPUs, and its regressions."""
    return [
        timeseries(f"{kpi_title} per GPU (application, OTLP)", [
            (f"gpu:{rule}:p50_5m{{{AS}}}", "p50 " + KPI_LEGEND),
            (f"gpu:{rule}:p99_5m{{{AS}}}", "p99 " + KPI_LEGEND)], "s",
                   "From the application's own histogram, attributed to the GPUs it runs on "
                   "(recording rules of app-kpis.yml). The panel to the right shows whether "
                   "those GPUs were throttled meanwhile."),
        timeseries("Clock and throttling of the GPUs with KPIs", [
            (f"DCGM_FI_DEV_SM_CLOCK{{instance=~\"$instance\",gpu=~\"$gpu\"}} and on (instance, gpu) "
             f"group by (instance, gpu) (gpu:{rule}:p50_5m{{{AS}}})", "SM MHz " + GPU_LEGEND),
            (f'1000 * (gpuscope_bottleneck_confidence{{instance=~"$instance",gpu=~"$gpu",'
             f'kind=~"thermal_throttle|power_cap"}} > bool 0) > 0', "{{kind}} " + GPU_LEGEND)],
                   "short",
                   "SM clock (MHz) of the GPUs that report the KPI, and 1000 while the "
                   "diagnosis finds thermal or power throttling there."),
        table("KPI regressions and their GPU cause", [
            (f'gpuscope_kpi_regression_active{{instance=~"$instance",gpu=~"$gpu",kpi="{kpi}"}} == 1',
             "")], "short", "kpi_regression: the KPI is 20% or more worse than its earlier "
              "level; cause lists the GPU findings on the same GPU, none when no GPU cause "
              "was found (look at the application)."),
    ]


def target(expr, legend="", instant=False, ref=None):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref or "A"}
    if instant:
        t.update({"instant": True, "range": False, "format": "table"})
    else:
        t.update({"instant": False, "range": True})
    return t


def _targets(queries, instant=False):
    out = []
    for i, q in enumerate(queries):
        expr, legend = (q, "") if isinstance(q, str) else q
        out.append(target(expr, legend, instant, chr(ord("A") + i)))
    return out


def _field(unit, lo=None, hi=None, mappings=None, thresholds=None):
    defaults = {"unit": unit}
    if lo is not None:
        defaults["min"] = lo
    if hi is not None:
        defaults["max"] = hi
    if mappings:
        defaults["mappings"] = mappings
    steps = [{"color": "green", "value": None}]
    for value, color in thresholds or []:
        steps.append({"color": color, "value": value})
    defaults["thresholds"] = {"mode": "absolute", "steps": steps}
    return {"defaults": defaults, "overrides": []}


def timeseries(title, queries, unit="short", desc="", w=12, h=8, lo=None, hi=None, stack=False):
    p = {"type": "timeseries", "title": title, "description": desc, "w": w, "h": h,
         "targets": _targets(queries), "fieldConfig": _field(unit, lo, hi)}
    custom = {"lineWidth": 1, "fillOpacity": 10, "showPoints": "never"}
    if stack:
        custom["stacking"] = {"mode": "normal", "group": "A"}
    p["fieldConfig"]["defaults"]["custom"] = custom
    p["options"] = {"legend": {"displayMode": "table", "placement": "right",
                               "calcs": ["mean", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}}
    return p


def stat(title, query, unit="short", desc="", w=4, h=4, thresholds=None, mappings=None):
    p = {"type": "stat", "title": title, "description": desc, "w": w, "h": h,
         "targets": _targets([query]),
         "fieldConfig": _field(unit, mappings=mappings, thresholds=thresholds)}
    p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value", "graphMode": "area", "textMode": "auto"}
    return p


def bars(title, queries, unit="short", desc="", w=12, h=8, lo=None, hi=None):
    p = {"type": "bargauge", "title": title, "description": desc, "w": w, "h": h,
         "targets": _targets(queries), "fieldConfig": _field(unit, lo, hi)}
    for t in p["targets"]:
        t.update({"instant": True, "range": False})
    p["options"] = {"orientation": "horizontal", "displayMode": "gradient",
                    "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
    return p


def table(title, queries, unit="short", desc="", w=12, h=8, mappings=None):
    p = {"type": "table", "title": title, "description": desc, "w": w, "h": h,
         "targets": _targets(queries, instant=True),
         "fieldConfig": _field(unit, mappings=mappings)}
    p["transformations"] = [{"id": "organize", "options": {
        "excludeByName": {"Time": True, "__name__": True, "job": True}}}]
    p["options"] = {"showHeader": True}
    return p


HEALTH_MAPPINGS = [{"type": "value", "options": {
    "0": {"text": "ok", "color": "green"},
    "1": {"text": "warn", "color": "orange"},
    "2": {"text": "fail", "color": "red"}}}]


def variables():
    def query_var(name, label, query):
        return {"name": name, "label": label, "type": "query", "datasource": DS,
                "query": {"query": query, "refId": name}, "definition": query,
                "refresh": 2, "sort": 3, "multi": True, "includeAll": True,
                "allValue": ".*", "current": {"selected": True, "text": ["All"],
                                                 "value": ["$__all"]}}
    return [
        {"name": "datasource", "label": "Data source", "type": "datasource",
         "query": "prometheus", "current": {}, "hide": 0},
        query_var("instance", "Node", "label_values(gpuscope_gpu_info, instance)"),
        query_var("gpu", "GPU", 'label_values(gpuscope_gpu_info{instance=~"$instance"}, gpu)'),
        query_var("training_job", "Job", "label_values(gpuscope_gpu_info, training_job)"),
    ]


def layout(panels):
    """Places panels left to right in rows of 24 units; assigns ids."""
    x = y = row_h = 0
    for i, p in enumerate(panels, start=1):
        w, h = p.pop("w"), p.pop("h")
        if x + w > 24:
            x, y, row_h = 0, y + row_h, 0
        p["gridPos"] = {"x": x, "y": y, "w": w, "h": h}
        p["id"] = i
        p["datasource"] = DS
        x += w
        row_h = max(row_h, h)
    return panels


def dashboard(uid, title, description, tags, panels):
    return {
        "uid": uid, "title": title, "description": description,
        "tags": ["gpuscope"] + tags, "timezone": "browser", "editable": False,
        "graphTooltip": 1, "schemaVersion": 39, "version": 1, "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "links": [{"type": "dashboards", "tags": ["gpuscope"], "asDropdown": True,
                   "title": "gpuscope", "includeVars": True, "keepTime": True}],
        "templating": {"list": variables()},
        "annotations": {"list": []},
        "panels": layout(panels),
    }


def fleet():
    busy = f"rate(gpuscope_gpu_busy_seconds_total{{{SW}}}[{RI}])"
    sm = f"rate(gpuscope_sm_active_seconds_total{{{SW}}}[{RI}])"
    idle = f"rate(gpuscope_gpu_idle_seconds_total{{{SW}}}[{RI}])"
    held = f"rate(gpuscope_gpu_idle_held_seconds_total{{{SW}}}[{RI}])"
    panels = [
        stat("GPUs", f'count(gpuscope_gpu_info{{{SW}}})', desc="Whole GPUs reporting."),
        stat("Utilization", f"avg({busy})", "percentunit",
             "Share of time a kernel ran, averaged over the selected GPUs."),
        stat("SM activity", f"avg({sm})", "percentunit",
             "Share of cycles SMs had work (GPM: Hopper and newer), averaged."),
        stat("Idle GPU-hours", f"sum(increase(gpuscope_gpu_idle_seconds_total{{{SW}}}[$__range])) / 3600",
             "h", "GPU-hours with no kernel at all, over the dashboard's time range."),
        stat("Idle-held GPU-hours",
             f"sum(increase(gpuscope_gpu_idle_held_seconds_total{{{SW}}}[$__range])) / 3600",
             "h", "GPU-hours idle while processes held memory: waste nobody else could use.",
             thresholds=[(1, "orange"), (10, "red")]),
        stat("Cost of waste", f"sum(increase(gpuscope_wasted_cost_total{{{S}}}[$__range]))",
             "currencyUSD",
             "Idle-held hours x the agents' --gpu-hour-price, over the time range "
             "(the currency is whatever the price is in).", thresholds=[(100, "orange")]),
        stat("Unhealthy GPUs", f"count(max by (instance, gpu) (gpuscope_gpu_health{{{S}}}) > 0) or vector(0)",
             desc="GPUs with at least one health check at warn or fail.",
             thresholds=[(1, "red")]),
        stat("Lost GPUs", f"sum(gpuscope_gpu_lost{{{S}}}) or vector(0)",
             desc="GPUs that fell off the bus or stopped answering.", thresholds=[(1, "red")]),
        stat("Stale collectors", f"sum(gpuscope_collector_stale{{{S}}}) or vector(0)",
             desc="GPUs whose values are stale (a hung or failing NVML call).",
             thresholds=[(1, "orange")]),
        stat("Fleet idle GPU-hours (1 h)", "gpuscope:fleet_idle_gpu_hours:increase1h", "h",
             "Whole fleet, last hour, from the recording rules (ignores the variables)."),
        stat("Fleet waste cost (1 h)", "gpuscope:fleet_wasted_cost:increase1h", "currencyUSD",
             "Whole fleet, last hour, from the recording rules (ignores the variables)."),
        stat("Fleet utilization (2 m)", "gpuscope:fleet_utilization:ratio", "percentunit",
             "Whole fleet, from the recording rules (ignores the variables)."),
        timeseries("Utilization and SM activity", [(f"avg({busy})", "utilization"),
                                                   (f"avg({sm})", "SM activity")],
                   "percentunit", "Averages over the selected GPUs.", lo=0, hi=1),
        timeseries("GPUs busy, idle and idle-held", [(f"sum({busy})", "busy"),
                                                     (f"sum({idle})", "idle"),
                                                     (f"sum({held})", "idle-held")],
                   "short", "In GPU equivalents: 3 means three GPUs' worth of time. "
                   "Idle-held is part of idle.", lo=0),
        bars("GPUs per state", [(f"count by (kind) (gpuscope_bottleneck_confidence{{{S}}} > 0)", "{{kind}}")],
             "short", "GPUs by diagnosis verdict (gpuscope_bottleneck_confidence > 0): compute-bound, "
             "memory-bound, throttled, starved, idle, idle-held...", lo=0),
        bars("Health checks not ok", [
            (f"sum by (check) (gpuscope_gpu_health{{{S}}} == bool 1)", "{{check}} warn"),
            (f"sum by (check) (gpuscope_gpu_health{{{S}}} == bool 2)", "{{check}} fail")],
             "short", "Number of GPUs per health check at warn and at fail "
             "(details: GPU health dashboard).", lo=0),
        timeseries("Utilization by node", [(f"avg by (instance) ({busy})", "{{instance}}")],
                   "percentunit", lo=0, hi=1),
        table("Idle GPU-hours by node", [
            (f"sort_desc(sum by (instance) (increase(gpuscope_gpu_idle_seconds_total{{{SW}}}[$__range])) / 3600)",
             "")], "h", "Over the dashboard's time range."),
        timeseries("Utilization by job", [(f'gpuscope:job_utilization:ratio{{training_job=~"$training_job"}}',
                                           "{{training_job}}")],
                   "percentunit", "From the recording rules (2 m rate).", lo=0, hi=1),
        timeseries("Idle and idle-held GPUs, whole fleet", [
            ("gpuscope:fleet_idle_gpus:sum", "idle"), ("gpuscope:fleet_idle_held_gpus:sum", "idle-held")],
                   "short", "GPU equivalents, from the recording rules.", lo=0),
    ]
    return dashboard("gpuscope-fleet", "gpuscope / Fleet overview",
                     "Utilization, waste and health of every GPU the agents report.",
                     ["fleet"], panels)


def health():
    thr = "gpuscope_temperature_threshold_celsius"
    panels = [
        stat("Worst health", f"max(gpuscope_gpu_health{{{S}}}) or vector(0)", mappings=HEALTH_MAPPINGS,
             thresholds=[(1, "orange"), (2, "red")],
             desc="Worst check of the selected GPUs: 0 ok, 1 warn, 2 fail (a check that never "
             "warned has no series in the lean profile)."),
        stat("Lost GPUs", f"sum(gpuscope_gpu_lost{{{S}}}) or vector(0)",
             thresholds=[(1, "red")]),
        stat("Stale collectors", f"sum(gpuscope_collector_stale{{{S}}}) or vector(0)",
             thresholds=[(1, "orange")]),
        stat("XIDs in range", f"sum(increase(gpuscope_xid_errors_total{{{S}}}[$__range])) or vector(0)",
             thresholds=[(1, "red")]),
        stat("Rows pending remap", f"sum(gpuscope_remapped_rows_pending{{{S}}}) or vector(0)",
             desc="GPUs waiting for a reset to remap a memory row.", thresholds=[(1, "orange")]),
        stat("Row remap failures", f"sum(gpuscope_remapped_rows_failure{{{S}}}) or vector(0)",
             desc="GPUs whose row remapping failed: they need service.", thresholds=[(1, "red")]),
        table("Health checks", [(f"max by (instance, gpu, check) (gpuscope_gpu_health{{{S}}})", "")],
              desc="0 ok, 1 warn, 2 fail, per GPU and check (memory, pcie, nvlink, thermal, "
              "power, xid, driver); the lean profile lists only checks that warned or failed.", w=24, h=8, mappings=HEALTH_MAPPINGS),
        timeseries("GPU temperature", [(f"gpuscope_gpu_temperature_celsius{{{S}}}", GPU_LEGEND),
                                       (f'min({thr}{{{S},threshold="slowdown"}})', "slowdown threshold"),
                                       (f'min({thr}{{{S},threshold="gpu_max_operating"}})',
                                        "max operating")],
                   "celsius", "Die temperature against the lowest thresholds of the selection."),
        timeseries("Headroom to slowdown", [
            (f'min by (instance, gpu) ({thr}{{{S},threshold="slowdown"}}) - on (instance, gpu) '
             f"max by (instance, gpu) (gpuscope_gpu_temperature_celsius{{{S}}})", GPU_LEGEND)],
                   "celsius", "Degrees left before the GPU slows its clocks; near 0 means "
                   "thermal throttling."),
        timeseries("Memory (HBM) temperature", [
            (f"gpuscope_memory_temperature_celsius{{{S}}}", GPU_LEGEND),
            (f'min({thr}{{{S},threshold="memory_max_operating"}})', "max operating")], "celsius"),
        timeseries("Throttle reasons (share of time)", [
            (f'sum by (instance, gpu, reason) (rate(gpuscope_clock_throttle_seconds_total{{{S},reason!="gpu_idle"}}[{RI}]))',
             "{{instance}} GPU {{gpu}} {{reason}}")],
                   "percentunit", "Share of time the clocks were held down, per reason "
                   "(the benign gpu_idle reason left out).", lo=0, hi=1),
        timeseries("XID errors", [
            (f"sum by (instance, gpu, xid) (increase(gpuscope_xid_errors_total{{{S}}}[{RI}]))",
             "{{instance}} GPU {{gpu}} XID {{xid}}")], "short",
                   "XIDs per interval, by code (see gpuscope's XID catalog for each code's action)."),
        table("XIDs since agent start", [
            (f"sum by (instance, gpu, xid) (gpuscope_xid_errors_total{{{S}}})", "")]),
        timeseries("ECC errors (volatile)", [
            (f'sum by (instance, gpu, error) (increase(gpuscope_ecc_errors_total{{{S},scope="volatile"}}[{RI}]))',
             "{{instance}} GPU {{gpu}} {{error}}")], "short", "Corrected and uncorrected ECC "
                   "errors per interval."),
        table("ECC errors and remapped rows", [
            (f"topk(20, sum by (instance, gpu, error, scope) (gpuscope_ecc_errors_total{{{S}}}))", ""),
            (f"topk(20, sum by (instance, gpu, cause) (gpuscope_remapped_rows_total{{{S}}}))", "")],
              desc="Worst GPUs first: ECC counts by error and scope, remapped rows by cause."),
        timeseries("Remapped rows", [
            (f"sum by (instance, gpu, cause) (gpuscope_remapped_rows_total{{{S}}})",
             "{{instance}} GPU {{gpu}} {{cause}}")], "short"),
        timeseries("PCIe replays", [
            (f"sum by (instance, gpu) (rate(gpuscope_pcie_replays_total{{{S}}}[{RI}]))", GPU_LEGEND)],
                   "short", "Link retries per second; a steady rate means a marginal link."),
        timeseries("PCIe link width against maximum", [
            (f"gpuscope_pcie_link_width{{{S}}} / gpuscope_pcie_link_width_max{{{S}}}", GPU_LEGEND)],
                   "percentunit", "Below 100%: the link trained narrower than it can.", lo=0, hi=1),
        timeseries("NVLink errors", [
            (f"sum by (instance, gpu, type) (rate(gpuscope_nvlink_errors_total{{{S}}}[{RI}]))",
             "{{instance}} GPU {{gpu}} {{type}}")], "short", "CRC, replay and recovery errors "
                   "per second, all links."),
    ]
    return dashboard("gpuscope-health", "gpuscope / GPU health",
                     "Temperatures, XIDs, ECC, remapped rows, PCIe and NVLink errors, "
                     "throttling. Efficiency lives on its own dashboard.", ["health"], panels)


def efficiency():
    panels = [
        timeseries("GPU utilization (kernel time)", [
            (f"rate(gpuscope_gpu_busy_seconds_total{{{S}}}[{RI}])", GPU_LEGEND)],
                   "percentunit", "Share of time a kernel ran: says nothing of how many SMs "
                   "it used (see SM activity).", lo=0, hi=1),
        timeseries("SM activity", [
            (f"rate(gpuscope_sm_active_seconds_total{{{S}}}[{RI}])", GPU_LEGEND)],
                   "percentunit", "Share of cycles SMs had a warp (GPM).", lo=0, hi=1),
        timeseries("SM occupancy", [(f"gpuscope_sm_occupancy_ratio{{{S}}}", GPU_LEGEND)],
                   "percentunit", "Resident warps against the SM maximum (GPM).", lo=0, hi=1),
        timeseries("Tensor pipe activity", [
            (f'gpuscope_pipe_active_ratio{{{S},pipe="tensor"}}', GPU_LEGEND)],
                   "percentunit", "Share of cycles the tensor cores were busy (GPM).", lo=0, hi=1),
        timeseries("DRAM activity", [(f"gpuscope_dram_active_ratio{{{S}}}", GPU_LEGEND)],
                   "percentunit", "Share of cycles device memory was moving data (GPM).",
                   lo=0, hi=1),
        timeseries("Memory used and peak", [
            (f"gpuscope_memory_used_bytes{{{S}}}", "{{instance}} GPU {{gpu}} used"),
            (f"gpuscope_memory_used_peak_bytes{{{S}}}", "{{instance}} GPU {{gpu}} peak")],
                   "bytes", "Peak: highest use over the agent's trailing window."),
        timeseries("Memory used against total", [
            (f"gpuscope_memory_used_bytes{{{S}}} / gpuscope_memory_total_bytes{{{S}}}", GPU_LEGEND),
            (f"gpuscope_memory_used_peak_bytes{{{S}}} / gpuscope_memory_total_bytes{{{S}}}",
             "{{instance}} GPU {{gpu}} peak")], "percentunit", lo=0, hi=1),
        timeseries("Power against limit", [
            (f"gpuscope_power_usage_watts{{{S}}} / gpuscope_power_limit_watts{{{S}}}", GPU_LEGEND)],
                   "percentunit", "Near 100%: the GPU is (or is about to be) power capped.",
                   lo=0, hi=1),
        timeseries("Power", [(f"gpuscope_power_usage_watts{{{S}}}", GPU_LEGEND),
                             (f"sum(rate(gpuscope_energy_joules_total{{{S}}}[{RI}]))",
                              "selection total (from energy)")], "watt"),
        timeseries("SM clock against maximum", [
            (f"gpuscope_sm_clock_hertz{{{S}}} / gpuscope_sm_clock_max_hertz{{{S}}}", GPU_LEGEND)],
                   "percentunit", "Below 100% under load: clocks held down (health dashboard "
                   "shows why).", lo=0, hi=1),
        table("Bottleneck verdicts", [
            (f"max by (instance, gpu, kind) (gpuscope_bottleneck_confidence{{{S}}} > 0)", "")],
              "percentunit", "What limits each GPU now, with the diagnosis' confidence "
              "(gpuscope diagnose explains the evidence).", w=12),
        bars("GPUs per verdict", [(f"count by (kind) (gpuscope_bottleneck_confidence{{{S}}} > 0)", "{{kind}}")],
             lo=0),
        timeseries("PCIe throughput", [
            (f"sum by (instance, gpu, direction) (rate(gpuscope_pcie_bytes_total{{{S}}}[{RI}]))",
             "{{instance}} GPU {{gpu}} {{direction}}")], "Bps"),
        timeseries("NVLink throughput", [
            (f"sum by (instance, gpu, direction) (rate(gpuscope_nvlink_bytes_total{{{S}}}[{RI}]))",
             "{{instance}} GPU {{gpu}} {{direction}}")], "Bps"),
        table("Energy by node", [
            (f"sum by (instance) (increase(gpuscope_energy_joules_total{{{S}}}[$__range])) / 3.6e6",
             "")], "kwatth", "Energy over the dashboard's time range."),
    ]
    return dashboard("gpuscope-efficiency", "gpuscope / GPU efficiency",
                     "How much of each GPU does useful work, and what limits it. Health lives "
                     "on its own dashboard.", ["efficiency"], panels)


def training():
    jv = 'training_job=~"$training_job"'
    panels = [
        stat("Jobs", f"count(gpuscope:job_gpus:count{{{jv}}})", desc="Jobs with GPUs reporting."),
        stat("GPUs in jobs", f"sum(gpuscope:job_gpus:count{{{jv}}})"),
        stat("Job utilization", f"avg(gpuscope:job_utilization:ratio{{{jv}}})", "percentunit"),
        stat("Stragglers", f'count(ALERTS{{alertname="GpuStraggler",alertstate="firing",{jv}}}) or vector(0)',
             desc="GPUs for which the GpuStraggler alert fires.", thresholds=[(1, "red")]),
        stat("Idle GPUs in jobs", f"sum(gpuscope:job_idle_gpus:sum{{{jv}}})",
             desc="GPU equivalents with no kernel running, in the selected jobs.",
             thresholds=[(0.5, "orange")]),
        stat("Job waste cost (1 h)", f"sum(gpuscope:job_wasted_cost:increase1h{{{jv}}}) or vector(0)",
             "currencyUSD"),
        timeseries("Sustained utilization per job", [
            (f"gpuscope:job_utilization:ratio{{{jv}}}", "{{training_job}}"),
            (f"avg_over_time(gpuscope:job_utilization:ratio{{{jv}}}[1h])", "{{training_job}} 1 h mean")],
                   "percentunit", "Mean over the job's GPUs of the 2 m utilization, and its "
                   "1 h average.", lo=0, hi=1),
        timeseries("SM activity per job", [
            (f"gpuscope:job_sm_active:ratio{{{jv}}}", "{{training_job}} mean"),
            (f"gpuscope:job_activity:median{{{jv}}}", "{{training_job}} median")],
                   "percentunit", lo=0, hi=1),
        bars("GPUs of the job side by side", [
            (f"sort(gpuscope:gpu_activity:ratio_rate2m{{{J}}})",
             "{{training_job}} {{instance}} GPU {{gpu}}")],
             "percentunit", "Activity of every GPU of the selected jobs (SM activity, or "
             "utilization without GPM); a short bar is a straggler.", w=12, h=12, lo=0, hi=1),
        timeseries("Activity of the job's GPUs", [
            (f"gpuscope:gpu_activity:ratio_rate2m{{{J}}}", "{{training_job}} {{instance}} GPU {{gpu}}")],
                   "percentunit", lo=0, hi=1, h=12),
        *kpi_panels("Step time", "gpuscope_app_step_duration_seconds", "step_duration"),
        timeseries("Samples per second (application, OTLP)", [
            (f"rate(gpuscope_app_samples_total{{{AS}}}[{RI}])", KPI_LEGEND)], "short"),
        table("Stragglers: activity against the job median", [
            (f"bottomk(10, gpuscope:gpu_activity_vs_job_median:ratio{{{J}}})", "")],
              "percentunit", "The 10 lowest GPUs of the selected jobs; under 70% for 10 "
              "minutes fires GpuStraggler (docs/scaling.md)."),
        timeseries("Straggler alerts", [
            (f'ALERTS{{alertname="GpuStraggler",{jv}}}',
             "{{alertstate}} {{training_job}} {{instance}} GPU {{gpu}}")], "short"),
        timeseries("Tensor pipe activity per job", [
            (f'avg by (training_job) (gpuscope_pipe_active_ratio{{{J},pipe="tensor"}})',
             "{{training_job}}")], "percentunit", lo=0, hi=1),
        timeseries("Memory per job", [
            (f"sum by (training_job) (gpuscope_memory_used_bytes{{{J}}})", "{{training_job}} used"),
            (f"max by (training_job) (gpuscope_memory_used_peak_bytes{{{J}}} / gpuscope_memory_total_bytes{{{J}}})",
             "{{training_job}} fullest GPU (peak share)")], "bytes"),
        timeseries("Power per job", [
            (f"sum by (training_job) (gpuscope_power_usage_watts{{{J}}})", "{{training_job}}")],
                   "watt"),
    ]
    return dashboard("gpuscope-training", "gpuscope / Training",
                     "Training jobs (the training_job label): sustained utilization, the GPUs "
                     "of a job side by side, stragglers.", ["training"], panels)


def inference():
    # gpu_info as a map from the application's gpu_uuid label to instance and
    # gpu, restricted to the selected GPUs (docs/dashboards.md).
    gpumap = ('max by (gpu_uuid, instance, gpu) (label_replace(gpuscope_gpu_info{%s}, '
              '"gpu_uuid", "$1", "uuid", "(.+)"))' % S)
    serving = ('label_replace(group by (gpu_uuid) (inference_request_duration_seconds_count), '
               '"uuid", "$1", "gpu_uuid", "(.+)")')

    def per_gpu(expr):
        return f"({expr}) * on (gpu_uuid) group_left (instance, gpu) {gpumap}"

    def quantile(q):
        return per_gpu(f"histogram_quantile({q}, sum by (le, gpu_uuid) "
                       f"(rate(inference_request_duration_seconds_bucket[{RI}])))")

    mean = ("sum by (gpu_uuid) (rate(inference_request_duration_seconds_sum[{ri}])) / "
            "sum by (gpu_uuid) (rate(inference_request_duration_seconds_count[{ri}]))")
    panels = [
        timeseries("p95 latency", [(quantile(0.95), GPU_LEGEND)], "s",
                   "From the application's inference_request_duration_seconds histogram, "
                   "per GPU that served (docs/dashboards.md)."),
        timeseries("p99 latency", [(quantile(0.99), GPU_LEGEND)], "s"),
        *kpi_panels("Request duration", "gpuscope_app_request_duration_seconds",
                    "request_duration"),
        timeseries("Time to first token per GPU (application, OTLP)", [
            (f"gpu:gpuscope_app_time_to_first_token_seconds:p95_5m{{{AS}}}", "p95 " + KPI_LEGEND),
            (f"gpu:gpuscope_app_time_to_first_token_seconds:p99_5m{{{AS}}}", "p99 " + KPI_LEGEND)],
                   "s"),
        timeseries("Utilization of serving GPUs", [
            (f"rate(gpuscope_gpu_busy_seconds_total{{{S}}}[{RI}]) and on (uuid) {serving}",
             GPU_LEGEND)], "percentunit", "GPUs the application reports latency for.",
                   lo=0, hi=1),
        timeseries("Memory of serving GPUs", [
            (f"gpuscope_memory_used_bytes{{{S}}} and on (uuid) {serving}", GPU_LEGEND)], "bytes"),
        timeseries("Requests per second", [
            (per_gpu(f"sum by (gpu_uuid) (rate(inference_request_duration_seconds_count[{RI}]))"),
             GPU_LEGEND)], "reqps"),
        timeseries("Mean latency", [(per_gpu(mean.format(ri=RI)), GPU_LEGEND)], "s"),
        timeseries("Latency variance: tail spread (p99 / p50)", [
            (per_gpu(f"histogram_quantile(0.99, sum by (le, gpu_uuid) (rate(inference_request_duration_seconds_bucket[{RI}]))) / "
                     f"histogram_quantile(0.5, sum by (le, gpu_uuid) (rate(inference_request_duration_seconds_bucket[{RI}])))"),
             GPU_LEGEND)], "short", "How much slower the slowest 1% are than the typical "
                   "request; a growing spread with flat utilization points at queueing."),
        timeseries("Latency variance: standard deviation of the mean over 10 m", [
            (per_gpu(f"stddev_over_time(({mean.format(ri='1m')})[10m:$__interval])"), GPU_LEGEND)], "s",
                   "How much the per-GPU mean latency moves around (1 m means over 10 m)."),
        timeseries("GPU utilization (all selected GPUs)", [
            (f"rate(gpuscope_gpu_busy_seconds_total{{{S}}}[{RI}])", GPU_LEGEND)], "percentunit",
                   "Also for serving stacks that export no latency.", lo=0, hi=1),
        timeseries("Memory used against total (all selected GPUs)", [
            (f"gpuscope_memory_used_bytes{{{S}}} / gpuscope_memory_total_bytes{{{S}}}", GPU_LEGEND)],
                   "percentunit", lo=0, hi=1),
    ]
    return dashboard("gpuscope-inference", "gpuscope / Inference",
                     "GPU utilization and memory next to the serving application's own "
                     "latency histograms (convention: docs/dashboards.md).", ["inference"], panels)


def tenants():
    who = "{{namespace}}{{hpc_job}} / {{workload}}"
    by = "namespace, workload, hpc_job"
    panels = [
        stat("Tenants", "count(gpuscope:tenant_gpus:sum)",
             desc="Workloads holding GPUs (pods with -k, Slurm jobs)."),
        stat("GPUs attributed", "sum(gpuscope:tenant_gpus:sum)",
             desc="A shared GPU counts once, split between its holders."),
        stat("GPUs busy (tenants)", "sum(gpuscope:tenant_gpu_busy:rate5m)", "short",
             "GPUs' worth of kernel time of all tenants."),
        stat("Idle-held GPUs", "sum(gpuscope:tenant_gpu_idle_held:rate5m)", "short",
             "GPUs' worth of time idle while a tenant held memory on them.",
             thresholds=[(0.5, "orange"), (2, "red")]),
        stat("Cost of waste, last hour", "sum(gpuscope:tenant_wasted_cost:increase1h)",
             "currencyUSD", "Idle-held GPU-hours x --gpu-hour-price.", w=8),
        timeseries("GPUs held per namespace", [
            ("sum by (namespace) (gpuscope:tenant_gpus:sum)", "{{namespace}}")], "short",
                   "Empty namespace: Slurm jobs.", lo=0, stack=True),
        timeseries("Utilization per workload", [
            ("gpuscope:tenant_utilization:ratio", who)], "percentunit",
                   "Kernel time of the GPUs each workload holds (5-minute rate).", lo=0, hi=1),
        table("GPU-hours per workload", [
            (f"sum by ({by}) (avg_over_time(gpuscope:tenant_gpus:sum[$__range])) "
             "* $__range_s / 3600", "")], "short",
              "GPUs held over the dashboard's time range, in GPU-hours (for chargeback)."),
        table("Cost of waste per workload, last hour", [
            (f"sum by ({by}) (gpuscope:tenant_wasted_cost:increase1h)", "")], "currencyUSD"),
        timeseries("Idle-held GPUs per workload", [
            ("gpuscope:tenant_gpu_idle_held:rate5m", who)], "short",
                   "Held but idle: release the GPU or give it work.", lo=0),
        timeseries("Power per namespace", [
            ("sum by (namespace) (gpuscope:tenant_power_watts:rate5m)", "{{namespace}}")],
                   "watt", "From the energy counters, shared GPUs split between holders.",
                   lo=0, stack=True),
    ]
    return dashboard("gpuscope-tenants", "gpuscope / Tenants",
                     "GPU-hours, utilization, idle-held GPUs and the cost of waste per namespace, "
                     "workload and Slurm job (docs/attribution.md). Efficiency only: health "
                     "lives on its own dashboard.", ["efficiency", "tenants"], panels)


def row(title):
    """A row header; the panels after it, up to the next row, belong to it."""
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "w": 24, "h": 1}


# Per-workload baselines (deploy/prometheus/rules/gpu-baselines.yml, docs/baselines.md).
BK = 'namespace=~"$namespace",workload=~"$workload",model=~"$model"'
BWHO = "{{namespace}}/{{workload}} {{hpc_job}} {{model}}"


def band(title, signal, unit, desc, lo=None, hi=None):
    """The current 5-minute value of each workload against its p5-p95 band."""
    sel = 'signal="%s",%s' % (signal, BK)
    p = timeseries(title, [
        ("gpuscope:workload_signal:avg5m{%s}" % sel, BWHO + " current"),
        ("last_over_time(gpuscope:workload_signal:p5_14d{%s}[2h])" % sel, BWHO + " p5"),
        ("last_over_time(gpuscope:workload_signal:p95_14d{%s}[2h])" % sel, BWHO + " p95"),
    ], unit, desc + " Dashed: the 14-day p5 and p95 of the workload on that GPU model.",
        lo=lo, hi=hi)
    p["fieldConfig"]["overrides"] = [{
        "matcher": {"id": "byRegexp", "options": ".* p(5|95)$"},
        "properties": [{"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [6, 4]}},
                       {"id": "custom.fillOpacity", "value": 0}]}]
    return p


def baselines():
    warm = "last_over_time(gpuscope:workload_baseline:warming_up_14d{%s}[2h])" % BK
    panels = [
        row("Baselines"),
        stat("Baselines warming up", 'count(%s == 1) or vector(0)' % warm,
             desc="Workload keys (namespace, workload, job, GPU model) with under 7 days of "
                  "history: no baseline alert fires for them yet.",
             thresholds=[(1, "blue")]),
        stat("Baseline alerts firing",
             'count(ALERTS{alertstate="firing",alertname=~"GpuWorkload.*Baseline"}) or vector(0)',
             thresholds=[(1, "orange")]),
        table("History per workload and model", [
            ("max by (namespace, workload, hpc_job, model) (last_over_time("
             "gpuscope:workload_baseline:history_days_14d{%s}[2h]))" % BK, "")], "d",
              "Days of 5-minute aggregates in the 14-day window; under 7: warming up.", w=16),
        row("Efficiency"),
        band("SM activity (utilization without GPM)", "sm_active", "percentunit",
             "Falling below the band alerts (GpuWorkloadSmActivityBelowBaseline).", 0, 1),
        band("Tensor activity", "tensor_active", "percentunit", "GPM GPUs only.", 0, 1),
        band("DRAM activity", "dram_active", "percentunit", "", 0, 1),
        band("Memory used", "memory_used_ratio", "percentunit", "Fraction of the framebuffer.",
             0, 1),
        band("Power", "power_watts", "watt", "From the energy counters.", 0),
        band("Idle share", "idle_ratio", "percentunit",
             "Rising above the band alerts (GpuWorkloadIdleAboveBaseline).", 0, 1),
        row("Health"),
        band("GPU temperature", "temperature_celsius", "celsius",
             "Rising above the band alerts (GpuWorkloadTemperatureAboveBaseline), even far "
             "below the fixed thresholds."),
        band("Throttle share (power and thermal reasons)", "throttle_ratio", "percentunit",
             "Rising above the band alerts (GpuWorkloadThrottleAboveBaseline).", 0, 1),
    ]
    d = dashboard("gpuscope-baselines", "gpuscope / Baselines",
                  "Each workload on each GPU model against its own 14-day band "
                  "(docs/baselines.md). Efficiency and health on separate rows.",
                  ["baselines"], panels)

    def var(name, label, query):
        return {"name": name, "label": label, "type": "query", "datasource": DS,
                "query": {"query": query, "refId": name}, "definition": query,
                "refresh": 2, "sort": 1, "multi": True, "includeAll": True, "allValue": ".*",
                "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}
    d["templating"]["list"] += [
        var("namespace", "Namespace",
            "label_values(gpuscope:workload_signal:avg5m, namespace)"),
        var("workload", "Workload",
            'label_values(gpuscope:workload_signal:avg5m{namespace=~"$namespace"}, workload)'),
        var("model", "GPU model", "label_values(gpuscope:workload_signal:avg5m, model)"),
    ]
    return d


DASHBOARDS = {
    "fleet-overview.json": fleet,
    "gpu-health.json": health,
    "gpu-efficiency.json": efficiency,
    "training.json": training,
    "inference.json": inference,
    "tenants.json": tenants,
    "baselines.json": baselines,
}


def render(build):
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="report files that differ from what this script writes")
    parser.add_argument("--out", default=OUT_DIR, help="output folder")
    args = parser.parse_args()
    stale = []
    for name, build in DASHBOARDS.items():
        path = os.path.join(args.out, name)
        text = render(build)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
            continue
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    if stale:
        print("out of date (run deploy/grafana/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
