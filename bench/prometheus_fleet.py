#!/usr/bin/env python3
"""What a fleet of gpuscope agents costs Prometheus, measured (not a CI test).

    bench/prometheus_fleet.py build/release [--agents 16] [--minutes 3] [--scrape 15s]

Starts N simulated 8 x H100 agents (training-8xh100) in the given profile and
a real Prometheus (Debian's) scraping them, waits, then reads Prometheus's own
figures: head series, samples appended per second, scrape bytes (from the
agents' bodies, gzip as served), and Prometheus's RSS. RSS is taken with 0
agents first, so the per-series figure is (RSS with agents - RSS without) /
head series. Runs once per profile (lean, full) and prints a JSON line each,
plus the docs/scaling.md table extrapolated to 100, 1,000 and 10,000 nodes.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def own_metric(prom, name):
    """A value from Prometheus's own /metrics (it does not scrape itself here)."""
    total = 0.0
    for line in get(f"{prom}/metrics").decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wait(url, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            get(url)
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer")


def run(build, profile, agents, minutes, scrape, work):
    procs, targets = [], []
    gpuscope = os.path.join(build, "gpuscope")
    for i in range(agents):
        port = free_port()
        procs.append(subprocess.Popen(
            [gpuscope, "serve", "--simulate", "training-8xh100", "-a", f"127.0.0.1:{port}",
             "--profile", profile, "--log-level", "warn", "--hostname", f"node-{i:03d}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        targets.append(f"127.0.0.1:{port}")
    for t in targets:
        wait(f"http://{t}/metrics")
    plain = len(get(f"http://{targets[0]}/metrics"))
    gz = len(get(f"http://{targets[0]}/metrics", {"Accept-Encoding": "gzip"}))
    data = os.path.join(work, f"data-{profile}")
    config = os.path.join(work, f"prometheus-{profile}.yml")
    with open(config, "w") as f:
        f.write(f"global:\n  scrape_interval: {scrape}\n  scrape_timeout: 10s\n"
                "scrape_configs:\n  - job_name: gpuscope\n    static_configs:\n"
                f"      - targets: {json.dumps(targets)}\n")
    port = free_port()
    prom = subprocess.Popen(["prometheus", f"--config.file={config}",
                             f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{port}",
                             "--log.level=warn"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait(url + "/-/ready")
        time.sleep(max(0.0, minutes * 60 - 60))
        appended0, t0 = own_metric(url, "prometheus_tsdb_head_samples_appended_total"), time.time()
        time.sleep(60)
        rate = (own_metric(url, "prometheus_tsdb_head_samples_appended_total") - appended0) / (
            time.time() - t0)
        head = own_metric(url, "prometheus_tsdb_head_series")
        rss = rss_kib(prom.pid)
    finally:
        prom.terminate()
        prom.wait()
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
    return {"profile": profile, "agents": agents, "minutes": minutes, "scrape": scrape,
            "head_series": head, "samples_per_s": rate, "prometheus_rss_kib": rss,
            "body_plain_bytes": plain, "body_gzip_bytes": gz}


def baseline_rss(work):
    config = os.path.join(work, "empty.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 15s\nscrape_configs: []\n")
    port = free_port()
    prom = subprocess.Popen(["prometheus", f"--config.file={config}",
                             f"--storage.tsdb.path={os.path.join(work, 'data-empty')}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(f"http://127.0.0.1:{port}/-/ready")
        time.sleep(5)
        return rss_kib(prom.pid)
    finally:
        prom.terminate()
        prom.wait()


def table(results, empty_kib, interval_s=15):
    """Extrapolation: memory per series is the marginal cost between the two
    profiles' runs (same agents, so per-target costs cancel); what remains of
    the lean run is a fixed cost per target."""
    lean, full = results
    per_series = ((full["prometheus_rss_kib"] - lean["prometheus_rss_kib"]) * 1024 /
                  (full["head_series"] - lean["head_series"]))
    per_target = ((lean["prometheus_rss_kib"] - empty_kib) * 1024 -
                  per_series * lean["head_series"]) / lean["agents"]
    lines = [f"Measured: {per_series:,.0f} B of Prometheus RSS per head series, "
             f"{per_target / 1e3:,.0f} kB per target, {empty_kib / 1024:,.0f} MiB empty.", "",
             "| nodes (8 GPUs) | profile | active series | samples/s | scrape bytes/s (gzip) | "
             "Prometheus memory |", "|---|---|---|---|---|---|"]
    for nodes in (100, 1000, 10000):
        for r in results:
            series = r["head_series"] / r["agents"] * nodes
            memory = empty_kib * 1024 + nodes * per_target + series * per_series
            lines.append(f"| {nodes:,} | {r['profile']} | {series:,.0f} | "
                         f"{series / interval_s:,.0f} | "
                         f"{r['body_gzip_bytes'] * nodes / interval_s / 1e6:,.2f} MB/s | "
                         f"{memory / 1e9:,.1f} GB |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--scrape", default="15s")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gpuscope-promfleet-")
    try:
        empty = baseline_rss(work)
        results = [run(args.build, p, args.agents, args.minutes, args.scrape, work)
                   for p in ("lean", "full")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"empty_prometheus_rss_kib": empty, "runs": results}))
    print(table(results, empty))
    return 0


if __name__ == "__main__":
    sys.exit(main())
