#!/usr/bin/env python3
"""A simulated 64-GPU fleet behind a real Prometheus, without Docker.

Eight `gpuscope serve --simulate` agents on loopback ports, one per scenario of
sim/scenarios/fleet/ (a training job over 4 nodes with one slow GPU, an
inference node, an idle-held node, a mixed node, a faulty node), a fake
serving application exporting inference_request_duration_seconds per GPU
(docs/dashboards.md), and Debian's prometheus (1 s scrape and evaluation,
storage in a temp dir) loading every rule file of deploy/prometheus/rules and
finding the agents through file_sd. Checked:

- every rule evaluates without error, every recording rule of every rule file
  produces series, and the fleet recording rules fleet, node and job series
  with the expected GPU counts;
- every series selector of every rule expression (recording and alerting)
  returns data, under the agents' default (lean) profile: the inputs of every
  rule are on the wire. An alert's condition need not hold; what it reads must
  exist. A family the lean profile exports only once non-zero (docs/scaling.md)
  may lack data: every shipped rule compares it with a positive threshold
  (== 1, > 0, rates), so absent reads as 0 does, and the test lists each such
  selector; e.g. no GPU here has an uncorrected ECC error, so that selector is
  empty in lean and 0 in full, and its rule reads the same either way;
- GpuStraggler fires for the slow GPU (node 3, GPU 5) and for no other;
- every panel query of every provisioned dashboard, with Grafana's variables
  substituted, returns data, and every template variable has values.

Honesty note: the shipped straggler alert waits `for: 10m`. This test loads a
copy of the rule files in which only GpuStraggler's `for` is 5s; everything
else (expressions, thresholds, rate windows) is the shipped text. The 10-minute
behaviour itself is proven by promtool (deploy/prometheus/tests/gpu-fleet-test.yml).
The rules' 2-minute rate windows are kept too: while the agents are younger
than 2 minutes every rate reads low by the same factor, so the test asserts
shares and counts, never absolute rates.
"""
import glob
import http.server
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse

import unittest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from fake_kubelet import FakeKubelet
except ImportError:  # python3-grpcio, installed by scripts/setup.sh
    FakeKubelet = None
from gpuscope_testlib import (GPUSCOPE as BINARY, PROMETHEUS, RULES_DIR as RULES,  # noqa: E402
                              SOURCE_DIR as SRC, check, check_exit, free_port, http_get,
                              main, need, need_tool)

SCENARIOS = os.path.join(SRC, "sim", "scenarios", "fleet")
DASHBOARDS = os.path.join(SRC, "deploy", "grafana", "dashboards")

# node name -> (scenario file, file_sd labels)
NODES = [
    ("node-01", "train-node1.yaml", {"training_job": "llm-pretrain"}),
    ("node-02", "train-node2.yaml", {"training_job": "llm-pretrain"}),
    ("node-03", "train-node3-straggler.yaml", {"training_job": "llm-pretrain"}),
    ("node-04", "train-node4.yaml", {"training_job": "llm-pretrain"}),
    ("node-05", "inference-node.yaml", {}),
    ("node-06", "idle-held-node.yaml", {}),
    ("node-07", "mixed-node.yaml", {}),  # GPUs 0-3: finetune-7b by metric relabelling
    ("node-08", "faulty-node.yaml", {}),
]
STRAGGLER = ("node-03", "5")
STRAGGLER_FOR = "5s"
GPU_HOUR_PRICE = "3"

# Grafana's variables as the test substitutes them ("All" is .*).
GRAFANA_VARS = {
    "$__rate_interval": "30s", "$__interval": "5s", "$__range": "10m", "$__range_s": "600",
    "$instance": ".*", "$gpu": ".*", "$training_job": ".*",
}

# Attribution for the Tenants dashboard: the training nodes and the idle-held
# node run Slurm jobs (mapping directories; the idle-held node's agent writes
# them as gpuscope_gpu_holder_info, --attribution-labels info); the inference node is a
# Kubernetes node whose GPU 0 is time-sliced between two pods.
SLURM_JOBS = {"node-01": "9001", "node-02": "9001", "node-03": "9001", "node-04": "9001",
              "node-06": "9002"}
INFERENCE_PODS = [("serving", "llm-serve-7d9f8c6b4-x2kq9", "vllm", "nvidia.com/gpu",
                   ["nvidia%d" % i for i in range(4)] + ["nvidia0::1"]),
                  ("serving", "embed-b2c4d", "srv", "nvidia.com/gpu",
                   ["nvidia0::0", "nvidia4", "nvidia5"])]

DEADLINE_S = 150  # for everything to converge, well inside ctest's 300 s


def log(msg):
    print(f"[fleet {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def substitute(expr):
    for name in sorted(GRAFANA_VARS, key=len, reverse=True):
        expr = expr.replace(name, GRAFANA_VARS[name])
    return expr


# --- the fake serving application ------------------------------------------

BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]


def app_metrics(uuids, started):
    """A histogram per GPU growing with time: 20 req/s, latency by GPU."""
    elapsed = time.time() - started
    lines = ["# HELP inference_request_duration_seconds Time from request to response.",
             "# TYPE inference_request_duration_seconds histogram"]
    for i, uuid in enumerate(uuids):
        count = int(20 * elapsed)
        mean = 0.04 + 0.01 * i
        labels = f'gpu_uuid="{uuid}",model="llama-70b"'
        for le in BUCKETS:  # exponential latency: P(x <= le) = 1 - exp(-le/mean)
            n = int(count * (1 - math.exp(-le / mean)))
            lines.append(f'inference_request_duration_seconds_bucket{{{labels},le="{le}"}} {n}')
        lines.append(f'inference_request_duration_seconds_bucket{{{labels},le="+Inf"}} {count}')
        lines.append(f"inference_request_duration_seconds_sum{{{labels}}} {count * mean:.3f}")
        lines.append(f"inference_request_duration_seconds_count{{{labels}}} {count}")
    return "\n".join(lines) + "\n"


def start_app(uuids):
    started = time.time()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = app_metrics(uuids, started).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# --- the fleet ---------------------------------------------------------------

class Fleet:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.ports = {}
        self.app = None
        self.prom_url = None
        self.kubelet = None

    def start_agents(self):
        for node, scenario, _ in NODES:
            port = free_port()
            self.ports[node] = port
            out = open(os.path.join(self.tmp, f"{node}.log"), "w")
            cmd = [BINARY, "serve", "--simulate", os.path.join(SCENARIOS, scenario),
                   "--address", f"127.0.0.1:{port}", "--collect-interval", "500",
                   "--slow-interval", "2s", "--gpu-hour-price", GPU_HOUR_PRICE,
                   "--attribution-refresh", "1s"] + self.attribution_args(node)
            self.procs.append((node, subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)))
        for node, port in self.ports.items():
            self.wait_http(f"http://127.0.0.1:{port}/metrics", node)

    def attribution_args(self, node):
        if node in SLURM_JOBS:
            jobs = os.path.join(self.tmp, f"{node}-jobs")
            os.makedirs(jobs)
            for gpu in range(8):
                with open(os.path.join(jobs, str(gpu)), "w") as f:
                    f.write(SLURM_JOBS[node] + "\n")
            # node-06 in --attribution-labels info, the rest in series mode:
            # every rule reads a mixed fleet (docs/fleet.md).
            info = ["--attribution-labels", "info"] if node == "node-06" else []
            return ["--hpc-job-mapping-dir", jobs] + info
        if node == "node-05":
            socket_path = os.path.join(self.tmp, "kubelet.sock")
            self.kubelet = FakeKubelet(socket_path, INFERENCE_PODS)
            self.kubelet.start()
            return ["-k", "--pod-resources-kubelet-socket", socket_path]
        return []

    def wait_http(self, url, what, timeout=40):
        end = time.time() + timeout
        while time.time() < end:
            for node, p in self.procs:
                if p.poll() is not None:
                    raise AssertionError(f"{node} exited with {p.returncode}: {self.tail(node)}")
            try:
                if http_get(url)[0] == 200:
                    return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        raise AssertionError(f"{what} did not answer {url} within {timeout}s: {self.tail(what)}")

    def tail(self, name, chars=3000):
        path = os.path.join(self.tmp, f"{name}.log")
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()[-chars:]

    def inference_uuids(self):
        _, _, body = http_get(f"http://127.0.0.1:{self.ports['node-05']}/metrics")
        uuids = set()
        for line in body.splitlines():
            if line.startswith("gpuscope_gpu_info{"):
                for part in line[line.index("{") + 1:line.rindex("}")].split('",'):
                    key, _, value = part.partition('="')
                    if key.strip() == "uuid":
                        uuids.add(value.rstrip('"'))
        assert len(uuids) == 8, f"expected 8 GPU UUIDs from the inference node, got {uuids}"
        return sorted(uuids)

    def write_rules(self):
        """Copies of the shipped rule files; only GpuStraggler's `for` shortened."""
        out_dir = os.path.join(self.tmp, "rules")
        os.makedirs(out_dir)
        shortened = 0
        for path in sorted(glob.glob(os.path.join(RULES, "*.yml"))):
            with open(path) as f:
                doc = yaml.safe_load(f)
            for group in doc.get("groups", []):
                for rule in group.get("rules", []):
                    if rule.get("alert") == "GpuStraggler":
                        assert rule["for"] == "10m", rule["for"]
                        rule["for"] = STRAGGLER_FOR
                        shortened += 1
            with open(os.path.join(out_dir, os.path.basename(path)), "w") as f:
                yaml.safe_dump(doc, f, sort_keys=False)
        assert shortened == 1, "GpuStraggler not found exactly once in the rule files"
        return out_dir

    def start_prometheus(self, app_port):
        rules_dir = self.write_rules()
        targets = [{"targets": [f"127.0.0.1:{self.ports[n]}"], "labels": dict(labels, node=n)}
                   for n, _, labels in NODES]
        sd = os.path.join(self.tmp, "targets.json")
        with open(sd, "w") as f:
            json.dump(targets, f)
        mixed = f"127.0.0.1:{self.ports['node-07']}"
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                       "scrape_timeout": "1s"},
            "rule_files": [os.path.join(rules_dir, "*.yml")],
            "scrape_configs": [
                {"job_name": "gpuscope", "file_sd_configs": [{"files": [sd]}],
                 # One job on some GPUs of a node: labelled per GPU.
                 "metric_relabel_configs": [{
                     "source_labels": ["instance", "gpu"], "regex": f"{mixed};[0-3]",
                     "target_label": "training_job", "replacement": "finetune-7b"}]},
                {"job_name": "inference-app",
                 "static_configs": [{"targets": [f"127.0.0.1:{app_port}"]}]},
            ],
        }
        path = os.path.join(self.tmp, "prometheus.yml")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        port = free_port()
        self.prom_url = f"http://127.0.0.1:{port}"
        out = open(os.path.join(self.tmp, "prometheus.log"), "w")
        cmd = [PROMETHEUS, f"--config.file={path}",
               f"--storage.tsdb.path={os.path.join(self.tmp, 'data')}",
               f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]
        self.procs.append(("prometheus", subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)))
        self.wait_http(self.prom_url + "/-/ready", "prometheus")

    def api(self, path, **params):
        url = self.prom_url + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")
        status, _, body = http_get(url)
        assert status == 200, (url, status, body)
        doc = json.loads(body)
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, expr):
        return self.api("/api/v1/query", query=expr)["result"]

    def stop(self):
        """Stops everything; the agents' exit problems (a non-zero status or a
        sanitizer report), as failure messages."""
        failures = []
        if self.app:
            self.app.shutdown()
        if self.kubelet:
            self.kubelet.stop()
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if name != "prometheus":
                try:
                    check_exit(f"agent {name}", p.returncode, self.tail(name, 1 << 20))
                except AssertionError as e:
                    failures.append(str(e))
        return failures


def wait_for(what, check, deadline):
    last = None
    while time.time() < deadline:
        try:
            ok, last = check()
            if ok:
                return last
        except (AssertionError, urllib.error.URLError, OSError, KeyError) as e:
            last = repr(e)
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


# Families whose series exist only once non-zero in the lean profile (the
# catalog's "when non-zero" rows and the sparse families; docs/metrics.md).
SPARSE = {"gpuscope_ecc_errors_total", "gpuscope_collector_stale",
          "gpuscope_gpu_idle_held_seconds_total", "gpuscope_retired_pages_pending",
          "gpuscope_remapped_rows_total", "gpuscope_remapped_rows_pending",
          "gpuscope_remapped_rows_failure", "gpuscope_gpu_recovery_action",
          "gpuscope_clock_throttle_seconds_total", "gpuscope_pcie_replays_total",
          "gpuscope_gpu_health", "gpuscope_bottleneck", "gpuscope_bottleneck_confidence",
          "gpuscope_nvlink_link_errors_total", "gpuscope_nvlink_link_active",
          "gpuscope_xid_errors_total", "gpuscope_memory_oom_eta_seconds",
          # only for NVLink links that are not up (training or down; issue 42)
          "gpuscope_nvlink_link_failure", "gpuscope_gpu_up_since_seconds",
          # only with --remediate (no agent of this fleet remediates; test_remediate_slurm)
          "gpuscope_remediation_actions_total",
          # only where a holder's processes are known and NVML gives per-process samples
          # (test_attribution_share)
          "gpuscope_gpu_holder_sm_share_ratio",
          # only on GPUs in an NVLink fabric (GB200; test_fabric_gb200) and in vGPU guests or
          # on vGPU hosts (test_vgpu, test_vgpu_diagnosis): this fleet has neither
          "gpuscope_fabric_state", "gpuscope_fabric_registration_failure",
          "gpuscope_fabric_issue_active", "gpuscope_fabric_configuration_state",
          "gpuscope_fabric_info", "gpuscope_vgpu_license_state",
          "gpuscope_vgpu_scheduler_wait_ratio", "gpuscope_vgpu_scheduler_runlists_active"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                "offset", "and", "or", "unless", "vector", "scalar", "time", "inf", "nan"}
SELECTOR = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?')


def selectors(expr):
    """The series selectors of a PromQL expression: (name, matchers text)."""
    out = []
    for m in SELECTOR.finditer(expr):
        name, matchers = m.group(1), m.group(2) or ""
        rest = expr[m.end():].lstrip()
        if name in PROMQL_WORDS or rest.startswith("("):  # a keyword or a function call
            continue
        before = expr[:m.start()].rstrip()
        if before.endswith(("by", "without", "on", "ignoring", "group_left", "group_right")) \
                or before.endswith(("by (", "without (", "on (", "ignoring (")):
            continue
        if not (name.startswith(("gpuscope", "DCGM_", "inference_", "ALERTS", "up"))):
            continue  # label names inside by (...) lists
        out.append((name, matchers))
    return out


def rule_expressions():
    for path in sorted(glob.glob(os.path.join(RULES, "*.yml"))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        for group in doc.get("groups", []):
            for rule in group.get("rules", []):
                yield os.path.basename(path), rule.get("record") or rule.get("alert"), rule


def check_rule_inputs(fleet):
    """Every selector of every rule expression returns data (sparse: see SPARSE).
    A selector of a recorded series that has none yet (its group evaluates less
    often than this test runs, e.g. the 14-day baselines) is checked through
    the recording rule's own expression, down to the agents' families."""
    failures, sparse, checked = [], set(), [0]
    records = {rule["record"]: rule["expr"] for _, _, rule in rule_expressions() if "record" in rule}

    def expr_ok(expr, where, depth=0):
        ok = True
        for metric, matchers in selectors(expr):
            sel = metric + matchers
            checked[0] += 1
            if fleet.query(f"count({sel})"):
                continue
            # A sparse family, or a recording of one (XIDs by code): absent reads as 0.
            if metric in SPARSE or metric.startswith("gpuscope:xid"):
                sparse.add(sel)
                continue
            if metric in records and depth < 5 and expr_ok(records[metric], where, depth + 1):
                continue
            failures.append(f"{where}: selector {sel} returns no data")
            ok = False
        return ok

    for path, name, rule in rule_expressions():
        if path != KPI_RULES:
            expr_ok(rule["expr"], f"{path}: {name}")
    checked = checked[0]
    log(f"{checked} rule selectors checked; sparse and empty here: {sorted(sparse)}")
    return failures


# Application KPIs (OTLP): the fleet's agents receive none, so the KPI rules
# and the panels that read them are run by test_otlp_apps, where real
# OpenTelemetry apps send them (and a KPI regresses).
KPI_RULES = "app-kpis.yml"


def is_kpi_panel(panel):
    return any(re.search(r"gpuscope_app_|gpuscope_kpi_", t.get("expr", ""))
               for t in panel.get("targets", []))


# Dashboards whose queries need more history than this test makes, and the
# test that runs every one of their queries instead.
CHECKED_ELSEWHERE = {
    "baselines.json": "14-day baselines: test_baseline_history runs its queries on 14 days",
}


def dashboard_queries():
    for path in sorted(glob.glob(os.path.join(DASHBOARDS, "*.json"))):
        if os.path.basename(path) in CHECKED_ELSEWHERE:
            log(f"{os.path.basename(path)}: {CHECKED_ELSEWHERE[os.path.basename(path)]}")
            continue
        with open(path) as f:
            dash = json.load(f)
        variables = [v for v in dash["templating"]["list"] if v["type"] == "query"]
        panels = []
        for p in dash["panels"]:
            panels.append(p)
            panels.extend(p.get("panels", []))
        yield os.path.basename(path), variables, panels


def check_fleet(fleet, deadline):
    failures = []

    # 1. All agents and the application are up.
    def targets_up():
        active = fleet.api("/api/v1/targets")["activeTargets"]
        up = [t for t in active if t["health"] == "up"]
        return len(up) == len(NODES) + 1, f"{len(up)}/{len(active)} up"
    wait_for("all targets up", targets_up, deadline)
    log("all 9 targets up")

    # 2. The straggler alert fires for the slow GPU only.
    straggler_instance = f"127.0.0.1:{fleet.ports[STRAGGLER[0]]}"

    def straggler_firing():
        res = fleet.query('ALERTS{alertname="GpuStraggler",alertstate="firing"}')
        return len(res) >= 1, [r["metric"] for r in res]
    wait_for("GpuStraggler firing", straggler_firing, deadline)
    time.sleep(3)  # a few more evaluations: nothing else may join
    alerts = fleet.query('ALERTS{alertname="GpuStraggler"}')
    got = sorted((a["metric"]["instance"], a["metric"]["gpu"], a["metric"]["alertstate"])
                 for a in alerts)
    want = [(straggler_instance, STRAGGLER[1], "firing")]
    if got != want:
        failures.append(f"GpuStraggler: want exactly {want}, got {got}")
    else:
        log(f"GpuStraggler fires for {STRAGGLER[0]} GPU {STRAGGLER[1]} only")
    labels = alerts[0]["metric"] if alerts else {}
    if labels.get("training_job") != "llm-pretrain" or labels.get("node") != STRAGGLER[0]:
        failures.append(f"GpuStraggler labels: {labels}")

    # 3. Every rule evaluates cleanly; the fleet rules produce their series.
    for group in fleet.api("/api/v1/rules")["groups"]:
        for rule in group["rules"]:
            if rule.get("health") == "err":
                failures.append(f"rule {rule['name']} ({group['file']}): {rule.get('lastError')}")
    failures += check_rule_inputs(fleet)
    expect = {
        "gpuscope:fleet_gpus:count": {(): 64},
        "gpuscope:job_gpus:count": {("llm-pretrain",): 32, ("finetune-7b",): 4},
    }
    for record, values in expect.items():
        got = {tuple(v for k, v in sorted(r["metric"].items()) if k != "__name__"):
               float(r["value"][1]) for r in fleet.query(record)}
        if got != values:
            failures.append(f"{record}: want {values}, got {got}")
    nodes = fleet.query("gpuscope:node_utilization:ratio")
    if len(nodes) != len(NODES):
        failures.append(f"gpuscope:node_utilization:ratio: {len(nodes)} nodes, want {len(NODES)}")
    # The agents are younger than the rules' 2 m rate windows, so rates read
    # low (Prometheus divides by the whole window); compare shares instead.
    # Idle-held: 6 of the idle-held node's 8 idle GPUs, and nowhere else.
    share = fleet.query('sum(gpuscope:gpu_idle_held:ratio_rate2m{node="node-06"}) / '
                        'sum(gpuscope:gpu_idle:ratio_rate2m{node="node-06"})')
    if not share or not 0.7 < float(share[0]["value"][1]) < 0.8:
        failures.append(f"idle-held node: want 6 of 8 idle GPUs idle-held, got {share}")
    held_gpus = {r["metric"].get("node"): float(r["value"][1]) for r in fleet.query(
        "count by (node) (gpuscope:gpu_idle_held:ratio_rate2m > 0)")}
    if held_gpus != {"node-06": 6.0}:
        failures.append(f"idle-held GPUs per node: want {{'node-06': 6}}, got {held_gpus}")
    # The fleet total (another rule group, maybe one evaluation behind).
    ratio = fleet.query('gpuscope:fleet_idle_held_gpus:sum / '
                        'sum(gpuscope:gpu_idle_held:ratio_rate2m{node="node-06"})')
    if not ratio or not 0.85 < float(ratio[0]["value"][1]) < 1.15:
        failures.append(f"gpuscope:fleet_idle_held_gpus:sum against node-06: {ratio}")
    log("recording rules checked")

    # 4. Every dashboard variable has values; every panel query returns data.
    total, kpi_panels = 0, 0
    for name, variables, panels in dashboard_queries():
        for var in variables:
            q = substitute(var["query"]["query"])
            metric, label = q[len("label_values("):-1].rsplit(",", 1)
            values = fleet.api(f"/api/v1/label/{label.strip()}/values", **{"match[]": metric})
            if not values:
                failures.append(f"{name}: variable {var['name']} ({q}) has no values")
        for panel in panels:
            if is_kpi_panel(panel):
                kpi_panels += 1
                continue
            for target in panel.get("targets", []):
                expr = substitute(target["expr"])
                total += 1
                try:
                    if not fleet.query(expr):
                        failures.append(f"{name}: '{panel['title']}' returned no data: {expr}")
                except AssertionError as e:
                    failures.append(f"{name}: '{panel['title']}' failed: {e}: {expr}")
    log(f"{total} dashboard queries run; {kpi_panels} KPI panels left to test_otlp_apps")
    return failures


class FleetTest(unittest.TestCase):
    def test_fleet_of_eight_agents(self):
        check(os.access(BINARY, os.X_OK), f"{BINARY} not built (set GPUSCOPE_BUILD_DIR)")
        need_tool(PROMETHEUS, "prometheus")
        need(FakeKubelet is not None,
             "python3-grpcio not installed (Debian package python3-grpcio)")
        tmp = tempfile.mkdtemp(prefix="gpuscope-fleet-")
        fleet = Fleet(tmp)
        started = time.time()
        ok = False
        try:
            fleet.start_agents()
            log(f"8 agents serving on {sorted(fleet.ports.values())}")
            fleet.app = start_app(fleet.inference_uuids())
            fleet.start_prometheus(fleet.app.server_address[1])
            log(f"prometheus on {fleet.prom_url}")
            failures = check_fleet(fleet, started + DEADLINE_S)
            for f in failures:
                print("FAIL:", f)
            ok = not failures
        except AssertionError as e:
            print("FAIL:", e)
        finally:
            for f in fleet.stop():
                print("FAIL:", f)
                ok = False
            if not ok:
                for name in ["prometheus"] + [n for n, _, _ in NODES]:
                    text = fleet.tail(name)
                    if text.strip():
                        print(f"--- {name} log (tail) ---\n{text}")
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"{'PASS' if ok else 'FAIL'} in {time.time() - started:.0f}s")
        check(ok, "the fleet failed: see the FAIL lines above")


if __name__ == "__main__":
    main()
