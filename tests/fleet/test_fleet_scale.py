#!/usr/bin/env python3
"""The fleet at scale, measured: `make fleet` (not in `make test`: minutes, not seconds).

    tests/fleet/test_fleet_scale.py [--nodes 200] [--out build/fleet-results.json]

N simulated 8 x H100 nodes (one `gpuscope serve --simulate` per node, distinct
--hostname and instance label), half in --attribution-labels series and half
in info, every GPU held by a Slurm job (mapping directories); scraped by the
reference pipeline of deploy/fleet/run-local.sh: two sharded vmagents
remote-writing to single-node VictoriaMetrics, vmalert evaluating
deploy/prometheus/rules with Alertmanager. Among the nodes:

- a 4-node training job (training_job="llm-pretrain", file_sd label) whose
  node-002 GPU 5 is slow (sim/scenarios/fleet/train-node3-straggler.yaml);
- faulty nodes: ECC DBE on GPU 2 and NVLink errors on GPU 4 (fleet/faulty-node),
  GPU 3 fallen off the bus (health/xid-79-lost), a failed row remap on GPU 1
  (health/row-remap-failure);
- node-012 scraped by Prometheus in agent mode (deploy/fleet/prometheus-agent.yml)
  remote-writing to the same VictoriaMetrics;
- bad input: an agent killed (SIGKILL) while the fleet is scraped, a target
  that cuts every response in the middle of the body, a target answering
  garbage, and a clock-skewed node (a real agent's body with sample
  timestamps 2 h ahead).

Checked: every rule of every group evaluates without error; each injected
fault's alert fires on its node and GPU only (and reaches Alertmanager);
GpuStraggler names node-002 GPU 5 and nothing else; every dashboard query
answers without error; every healthy node's GPUs are all in the engine and
the bad targets did not add, remove or corrupt any other node's series.

Measured (written to --out and printed): agents' total CPU and RSS,
samples/s ingested, active series, vmalert evaluation time per group, and new
series per job turnover per node in each attribution mode (every job on every
node replaced at once), from which new series per day for 4-hour jobs.

Honesty: as in tests/integration/test_fleet.py, GpuStraggler's `for` is 5s in
the copy of the rules vmalert loads (10m is proven by promtool); everything
else is the shipped text.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from gpuscope_testlib import GPUSCOPE, SOURCE_DIR, free_port  # noqa: E402
from test_fleet import dashboard_queries, is_kpi_panel, substitute  # noqa: E402

SIM = os.path.join(SOURCE_DIR, "sim", "scenarios")
RULES = os.path.join(SOURCE_DIR, "deploy", "prometheus", "rules")
RUN_LOCAL = os.path.join(SOURCE_DIR, "deploy", "fleet", "run-local.sh")
SCRAPE_S = 15
TRAINING = {"node-000": "fleet/train-node1.yaml", "node-001": "fleet/train-node2.yaml",
            "node-002": "fleet/train-node3-straggler.yaml", "node-003": "fleet/train-node4.yaml"}
FAULTY = {"node-004": "fleet/faulty-node.yaml", "node-005": "health/xid-79-lost.yaml",
          "node-006": "health/row-remap-failure.yaml", "node-007": "fleet/idle-held-node.yaml"}
# alert -> the (instance, gpu) it must fire for, and for nothing else.
EXPECTED_ALERTS = {
    "GpuDoubleBitEccError": {("node-004", "2")},
    "GpuNvlinkErrors": {("node-004", "4")},
    "GpuFallenOffBus": {("node-005", "3")},
    "GpuRowRemapFailure": {("node-006", "1")},
    "GpuStraggler": {("node-002", "5")},
}
KILLED = "node-010"  # a healthy node whose agent dies while scraped
SKEWED = "node-011"  # its samples reach the engine 2 h in the future
AGENT_MODE = "node-012"  # scraped by Prometheus in agent mode (deploy/fleet/prometheus-agent.yml)
CUT, GARBAGE = "node-cut", "node-garbage"


def log(msg):
    print(f"[fleet-scale {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def get_json(url, timeout=30):
    return json.loads(get(url, timeout))


class BadTargets:
    """HTTP targets that misbehave: one cuts the body mid-way, one answers
    garbage, one forwards a real agent's body with timestamps 2 h ahead."""

    def __init__(self, skewed_upstream):
        self.upstream = skewed_upstream
        self.ports = {}
        self.socks = []

    def start(self):
        for name, handler in ((CUT, self.cut), (GARBAGE, self.garbage), (SKEWED, self.skewed)):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(16)
            self.ports[name] = s.getsockname()[1]
            self.socks.append(s)
            threading.Thread(target=self.serve, args=(s, handler), daemon=True).start()

    def serve(self, s, handler):
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            try:
                conn.settimeout(5)
                conn.recv(65536)
                handler(conn)
            except OSError:
                pass
            finally:
                conn.close()

    def body(self):
        return get(f"http://127.0.0.1:{self.upstream}/metrics")

    def cut(self, conn):
        body = self.body()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2])

    def garbage(self, conn):
        body = b'\x00\xff{{{ not="metrics" 1 2 3\nDCGM_FI_DEV_GPU_UTIL{gpu="0" 1e999x\n' * 50
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                     % len(body) + body)

    def skewed(self, conn):
        ahead_ms = int((time.time() + 7200) * 1000)
        lines = []
        for line in self.body().decode().splitlines():
            lines.append(line if not line or line.startswith("#") else f"{line} {ahead_ms}")
        body = ("\n".join(lines) + "\n").encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def stop(self):
        for s in self.socks:
            s.close()


class Fleet:
    def __init__(self, tmp, nodes):
        self.tmp = tmp
        self.names = [f"node-{i:03d}" for i in range(nodes)]
        self.agents = {}  # name -> (Popen, port)
        self.jobs_dirs = {}
        self.mode = {n: ("series" if i % 2 == 0 else "info") for i, n in enumerate(self.names)}
        self.ports, self.vm, self.vmalert, self.env = {}, None, None, None
        self.bad = None
        self.prom_agent = None

    def pick_pipeline_ports(self):
        """After the agents bound theirs: a port picked earlier could be taken
        by an agent before the pipeline binds it."""
        taken = {port for _, port in self.agents.values()}
        while True:
            self.ports = {p: free_port() for p in ("vm", "vmagent", "vmalert", "am")}
            ports = list(self.ports.values()) + [self.ports["vmagent"] + 1]
            if len(set(ports)) == len(ports) and not taken & set(ports):
                break
        self.vm = f"http://127.0.0.1:{self.ports['vm']}"
        self.vmalert = f"http://127.0.0.1:{self.ports['vmalert']}"
        tmp = self.tmp
        self.env = dict(os.environ, FLEET_DIR=os.path.join(tmp, "pipeline"),
                        TARGETS=os.path.join(tmp, "targets"), RULES=os.path.join(tmp, "rules", "*.yml"),
                        VMAGENTS="2", SCRAPE=f"{SCRAPE_S}s", VM_PORT=str(self.ports["vm"]),
                        VMAGENT_PORT=str(self.ports["vmagent"]),
                        VMALERT_PORT=str(self.ports["vmalert"]), AM_PORT=str(self.ports["am"]))

    def scenario(self, name):
        rel = TRAINING.get(name) or FAULTY.get(name) or "training-8xh100.yaml"
        return os.path.join(SIM, rel)

    def write_jobs(self, name, generation):
        d = self.jobs_dirs.setdefault(name, os.path.join(self.tmp, "jobs", name))
        os.makedirs(d, exist_ok=True)
        job = "9001" if name in TRAINING else f"{int(name[5:]) * 100 + generation}"
        for gpu in range(8):
            with open(os.path.join(d, str(gpu)), "w") as f:
                f.write(job + "\n")

    def start_agents(self):
        for name in self.names:
            self.write_jobs(name, 0)
            port = free_port()
            cmd = [GPUSCOPE, "serve", "--simulate", self.scenario(name), "-a", f"127.0.0.1:{port}",
                   "--hostname", name, "--otlp-listen-address=", "--log-level", "warn",
                   "--gpu-hour-price", "3", "--attribution-refresh", "2s",
                   "--hpc-job-mapping-dir", self.jobs_dirs[name],
                   "--attribution-labels", self.mode[name]]
            out = open(os.path.join(self.tmp, "agents", f"{name}.log"), "w")
            self.agents[name] = (subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT), port)
        for name, (proc, port) in self.agents.items():
            wait_for(f"{name} answers", lambda: ok(f"http://127.0.0.1:{port}/metrics"), 120)

    def write_targets(self):
        targets = []
        for name, (_, port) in self.agents.items():
            if name in (SKEWED, AGENT_MODE):
                continue
            labels = {"instance": name, "node": name, "attribution_mode": self.mode[name]}
            if name in TRAINING:
                labels["training_job"] = "llm-pretrain"
            targets.append({"targets": [f"127.0.0.1:{port}"], "labels": labels})
        for name, port in self.bad.ports.items():
            targets.append({"targets": [f"127.0.0.1:{port}"],
                            "labels": {"instance": name, "node": name,
                                       "attribution_mode": self.mode.get(name, "series")}})
        d = self.env["TARGETS"]
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "fleet.json.tmp"), "w") as f:
            json.dump(targets, f)
        os.rename(os.path.join(d, "fleet.json.tmp"), os.path.join(d, "fleet.json"))

    def start_prometheus_agent(self):
        """deploy/fleet/prometheus-agent.yml, its paths and URL pointed at this run."""
        with open(os.path.join(SOURCE_DIR, "deploy", "fleet", "prometheus-agent.yml")) as f:
            config = yaml.safe_load(f)
        targets = os.path.join(self.tmp, "prom-targets")
        os.makedirs(targets)
        _, port = self.agents[AGENT_MODE]
        with open(os.path.join(targets, "agent.json"), "w") as f:
            json.dump([{"targets": [f"127.0.0.1:{port}"],
                        "labels": {"instance": AGENT_MODE, "node": AGENT_MODE,
                                   "attribution_mode": self.mode[AGENT_MODE]}}], f)
        config["global"]["scrape_interval"] = f"{SCRAPE_S}s"
        config["scrape_configs"][0]["file_sd_configs"][0]["files"] = [targets + "/*.json"]
        config["remote_write"][0]["url"] = self.vm + "/api/v1/write"
        path = os.path.join(self.tmp, "prometheus-agent.yml")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        log_file = open(os.path.join(self.tmp, "prometheus-agent.log"), "w")
        self.prom_agent = subprocess.Popen(
            ["prometheus", "--enable-feature=agent", f"--config.file={path}",
             f"--storage.agent.path={self.tmp}/prom-agent",
             f"--web.listen-address=127.0.0.1:{free_port()}"],
            stdout=log_file, stderr=subprocess.STDOUT)

    def write_rules(self):
        out = os.path.join(self.tmp, "rules")
        os.makedirs(out)
        shortened = 0
        for path in sorted(os.listdir(RULES)):
            with open(os.path.join(RULES, path)) as f:
                doc = yaml.safe_load(f)
            for group in doc["groups"]:
                for rule in group["rules"]:
                    if rule.get("alert") == "GpuStraggler":
                        rule["for"] = "5s"
                        shortened += 1
            with open(os.path.join(out, path), "w") as f:
                yaml.safe_dump(doc, f, sort_keys=False)
        assert shortened == 1, "GpuStraggler not found exactly once"

    def start(self):
        for d in ("agents", "jobs"):
            os.makedirs(os.path.join(self.tmp, d))
        self.write_rules()
        log(f"starting {len(self.names)} agents")
        self.start_agents()
        self.pick_pipeline_ports()
        self.bad = BadTargets(self.agents[SKEWED][1])
        self.bad.start()
        self.write_targets()
        subprocess.run([RUN_LOCAL, "start"], env=self.env, check=True)
        wait_for("VictoriaMetrics", lambda: ok(self.vm + "/health"), 60)
        self.start_prometheus_agent()
        wait_for("vmalert", lambda: ok(self.vmalert + "/health"), 60)

    def stop(self):
        if self.env:
            subprocess.run([RUN_LOCAL, "stop"], env=self.env)
        if self.prom_agent and self.prom_agent.poll() is None:
            self.prom_agent.terminate()
            self.prom_agent.wait(10)
        for proc, _ in self.agents.values():
            if proc.poll() is None:
                proc.terminate()
        for proc, _ in self.agents.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self.bad:
            self.bad.stop()

    def query(self, expr, at=None):
        params = {"query": expr}
        if at:
            params["time"] = str(at)
        r = get_json(self.vm + "/api/v1/query?" + urllib.parse.urlencode(params))
        if r.get("status") != "success":
            raise AssertionError(f"{expr}: {r}")
        return r["data"]["result"]

    def scalar(self, expr):
        r = self.query(expr)
        return float(r[0]["value"][1]) if r else 0.0

    def vm_metric(self, base, name):
        total = 0.0
        for line in get(base + "/metrics").decode().splitlines():
            if line.startswith(name):
                total += float(line.rsplit(" ", 1)[1])
        return total


def ok(url):
    try:
        get(url, timeout=5)
        return True
    except OSError:
        return False


def wait_for(what, predicate, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(1)
    raise AssertionError(f"{what}: not within {timeout} s")


def proc_cpu_rss(pids):
    ticks, rss = 0, 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
            with open(f"/proc/{pid}/status") as f:
                rss += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return ticks, rss


def measure_load(fleet, seconds=60):
    pids = [p.pid for p, _ in fleet.agents.values() if p.poll() is None]
    hz = os.sysconf("SC_CLK_TCK")
    t0, r0 = time.time(), fleet.vm_metric(fleet.vm, 'vm_rows_inserted_total{type="promremotewrite"}')
    c0, _ = proc_cpu_rss(pids)
    time.sleep(seconds)
    c1, rss = proc_cpu_rss(pids)
    t1, r1 = time.time(), fleet.vm_metric(fleet.vm, 'vm_rows_inserted_total{type="promremotewrite"}')
    return {"agents": len(pids), "agents_cpu_cores": round((c1 - c0) / hz / (t1 - t0), 3),
            "agents_rss_mib": round(rss / 1024, 1),
            "samples_per_s_ingested": round((r1 - r0) / (t1 - t0), 1),
            "loadavg": open("/proc/loadavg").read().split()[:3]}


def rule_failures(fleet):
    failures, groups, rules = [], 0, 0
    data = get_json(fleet.vmalert + "/api/v1/rules")["data"]["groups"] or []
    for group in data:
        groups += 1
        for rule in group.get("rules", []):
            rules += 1
            err = rule.get("lastError") or rule.get("last_error") or ""
            if err:
                failures.append(f"rule {rule.get('name')} ({group.get('name')}): {err}")
    return failures, groups, rules


def rule_eval_seconds(fleet):
    """Mean evaluation time per group from vmalert's own metrics."""
    sums, counts = {}, {}
    for line in get(fleet.vmalert + "/metrics").decode().splitlines():
        for suffix, into in (("_sum{", sums), ("_count{", counts)):
            if line.startswith("vmalert_iteration_duration_seconds" + suffix):
                group = line.split('group="', 1)[1].split('"', 1)[0]
                into[group] = into.get(group, 0) + float(line.rsplit(" ", 1)[1])
    return {g: round(sums[g] / counts[g], 4) for g in sums if counts.get(g)}


def firing(fleet):
    alerts = get_json(fleet.vmalert + "/api/v1/alerts")["data"]["alerts"] or []
    return [a for a in alerts if a.get("state") == "firing"]


def check_alerts(fleet):
    failures = []
    fired = {}
    for a in firing(fleet):
        labels = a["labels"]
        fired.setdefault(labels.get("alertname"), set()).add(
            (labels.get("instance"), labels.get("gpu")))
    for name, want in EXPECTED_ALERTS.items():
        got = fired.get(name, set())
        if got != want:
            failures.append(f"{name}: fired for {sorted(got)}, want exactly {sorted(want)}")
    return failures, {k: sorted(v) for k, v in fired.items()}


def check_engine_view(fleet):
    """Every live healthy node has all its GPUs; the bad targets added nothing."""
    failures = []
    per_node = {r["metric"].get("instance"): float(r["value"][1]) for r in fleet.query(
        'count by (instance) (max by (instance, uuid) (gpuscope_gpu_info{gpu_instance=""}))')}
    for name in fleet.names:
        if name in (KILLED, SKEWED) or name in TRAINING or name in FAULTY:
            continue
        if per_node.get(name) != 8.0:
            failures.append(f"{name}: {per_node.get(name)} GPUs in the engine, want 8")
    via_agent = fleet.scalar(f'count(gpuscope_gpu_info{{instance="{AGENT_MODE}",'
                             f'collector="prometheus-agent-0"}})')
    if via_agent != 8:
        failures.append(f"{AGENT_MODE} through Prometheus agent mode: {via_agent} GPUs, want 8")
    for name in (CUT, GARBAGE):
        if name in per_node:
            failures.append(f"{name}: series from a broken target: {per_node[name]}")
    up = {r["metric"]["instance"]: r["value"][1] for r in fleet.query("up")}
    # vmagent skips the lines it cannot parse (and may call the scrape up):
    # what matters is that nothing of the garbage reached the engine.
    junk = fleet.scalar(f'count({{instance="{GARBAGE}",__name__!~"up|scrape_.*"}})')
    if junk:
        failures.append(f"{GARBAGE}: {junk} series from garbage")
    for name in (KILLED, CUT):
        if up.get(name) != "0":
            failures.append(f"up{{instance={name}}} = {up.get(name)}, want 0")
    down = [n for n in fleet.names if n not in (KILLED, SKEWED) and up.get(n) != "1"]
    if down:
        failures.append(f"healthy nodes not up: {down}")
    return failures, per_node


def check_dashboards(fleet):
    failures, total, empty = [], 0, []
    for name, _, panels in dashboard_queries():
        for panel in panels:
            if is_kpi_panel(panel):
                continue
            for target in panel.get("targets", []):
                expr = substitute(target["expr"])
                total += 1
                try:
                    if not fleet.query(expr):
                        empty.append(f"{name}: {panel['title']}")
                except (AssertionError, OSError) as e:
                    failures.append(f"{name}: '{panel['title']}' failed: {e}")
    return failures, total, empty


def measure_churn(fleet):
    """Replaces every node's job at once (the training job aside) and counts
    the series that appear, per node, in each attribution mode."""
    def by_name(expr):
        return {r["metric"].get("__name__", ""): float(r["value"][1])
                for r in fleet.query(f"count by (__name__) ({expr})")}
    sel = '{{attribution_mode="{}",__name__=~".+"}}'
    before = {m: by_name(sel.format(m)) for m in ("series", "info")}
    t0 = time.time()
    for name in fleet.names:
        if name not in TRAINING:
            fleet.write_jobs(name, 1)
    time.sleep(4 * SCRAPE_S)  # attribution refresh (2 s), then scrapes of both shards
    window = int(time.time() - t0) + 300
    after = {m: by_name(f"last_over_time({sel.format(m)}[{window}s])") for m in ("series", "info")}
    nodes = {m: sum(1 for n in fleet.names if fleet.mode[n] == m and n not in TRAINING
                    and n not in (KILLED, SKEWED)) for m in ("series", "info")}
    out = {}
    for m in ("series", "info"):
        new = {k: after[m][k] - before[m].get(k, 0) for k in after[m]}
        per_node = sum(new.values()) / max(nodes[m], 1)
        top = sorted(((v, k) for k, v in new.items() if v > 0), reverse=True)[:6]
        out[m] = {"series_before": sum(before[m].values()),
                  "series_after_turnover": sum(after[m].values()),
                  "new_series_by_family_top": {k: v for v, k in top},
                  "nodes": nodes[m], "new_series_per_turnover_per_node": round(per_node, 1),
                  "new_series_per_day_per_node_4h_jobs": round(6 * per_node, 1)}
    out["churn_ratio_series_over_info"] = round(
        out["series"]["new_series_per_turnover_per_node"]
        / max(out["info"]["new_series_per_turnover_per_node"], 1e-9), 1)
    return out


def run(nodes, out_path):
    tmp = tempfile.mkdtemp(prefix="gpuscope-fleet-scale-")
    fleet = Fleet(tmp, nodes)
    results, failures = {"nodes": nodes, "gpus_per_node": 8, "scrape_interval_s": SCRAPE_S}, []
    try:
        fleet.start()
        log("pipeline up; waiting for two rule evaluations over rates")
        wait_for("fleet GPUs recorded",
                 lambda: fleet.scalar("gpuscope:fleet_gpus:count") > 8 * (nodes - 10), 300)
        log("waiting for every injected fault's alert")
        wait_for("the expected alerts", lambda: not check_alerts(fleet)[0], 420)
        log(f"killing {KILLED}'s agent while it is scraped")
        fleet.agents[KILLED][0].send_signal(signal.SIGKILL)
        time.sleep(3 * SCRAPE_S)
        results["load"] = measure_load(fleet)
        log(f"load: {results['load']}")
        results["active_series"] = fleet.scalar('count({__name__=~".+"})')
        results["vm_rss_mib"] = round(proc_cpu_rss([int(open(os.path.join(
            fleet.env["FLEET_DIR"], "vm.pid")).read())])[1] / 1024, 1)
        # On-disk bytes per stored sample so far (a short run compresses worse
        # than a day: VictoriaMetrics merges parts over hours).
        rows = fleet.vm_metric(fleet.vm, "vm_rows{")
        results["vm_bytes_per_sample"] = round(
            fleet.vm_metric(fleet.vm, "vm_data_size_bytes{") / max(rows, 1), 2)
        f, groups, rules = rule_failures(fleet)
        failures += f
        results["rule_groups"], results["rules"] = groups, rules
        results["rule_eval_seconds_mean_by_group"] = rule_eval_seconds(fleet)
        f, results["firing"] = check_alerts(fleet)
        failures += f
        am = get_json(f"http://127.0.0.1:{fleet.ports['am']}/api/v2/alerts")
        am_names = {a["labels"].get("alertname") for a in am}
        for name in EXPECTED_ALERTS:
            if name not in am_names:
                failures.append(f"{name} did not reach Alertmanager")
        f, results["gpus_per_instance_sample"] = check_engine_view(fleet)
        results["gpus_per_instance_sample"] = {k: v for k, v in list(
            sorted(results["gpus_per_instance_sample"].items()))[:3]}
        failures += f
        f, total, empty = check_dashboards(fleet)
        failures += f
        results["dashboard_queries"], results["dashboard_queries_empty"] = total, empty
        results["skewed_node_series"] = fleet.scalar(f'count({{instance="{SKEWED}"}})')
        log("measuring series churn of a job turnover")
        results["churn"] = measure_churn(fleet)
        if results["churn"]["churn_ratio_series_over_info"] < 10:
            failures.append(f"info mode cuts churn {results['churn']['churn_ratio_series_over_info']}x"
                            ", want >= 10x")
        f, _, _ = rule_failures(fleet)  # still clean after the turnover
        failures += f
    finally:
        fleet.stop()
        results["failures"] = failures
        print(json.dumps(results, indent=2), flush=True)
        if out_path:
            with open(out_path, "w") as fh:
                json.dump(results, fh, indent=2)
        if failures:
            log(f"logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, True)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.nodes < 13:
        ap.error("--nodes: at least 13 (training, faulty, bad-input and agent-mode nodes)")
    for tool in ("victoria-metrics", "vmagent", "vmalert", "prometheus-alertmanager",
                 "prometheus"):
        if not shutil.which(tool):
            print(f"missing {tool} (scripts/setup.sh installs it)", file=sys.stderr)
            return 2
    return run(args.nodes, args.out)


if __name__ == "__main__":
    sys.exit(main())
