#!/usr/bin/env python3
"""OTLP ingestion benchmark: `gpuscope serve --simulate training-8xh100` with its OTLP
receiver, fed a sustained stream of protobuf ExportMetricsServiceRequests (histogram points of
the training step KPI, 1,000 series attributed to the 8 GPUs by process.pid), while one client
scrapes /metrics every 50 ms. Prints the agent's CPU (user + system, from /proc/<pid>/stat)
without and with the load, the points per second accepted and the /metrics latency percentiles
before the load (small body), during it, and after it (the 1,000 series still on /metrics, no
ingestion: the body's size alone), as Markdown for bench/performance-notes.md.

Usage: bench/otlp_ingest.py BUILD_DIR [--points-per-second 10000] [--seconds 30]
                            [--scrape-interval 0.05]
"""
import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def string(number, text):
    return field(number, 2, text.encode())


def keyvalue(key, value):
    return string(1, key) + field(2, 2, string(1, value))


BOUNDS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0]


def histogram_point(series, step):
    counts = [0] * (len(BOUNDS) + 1)
    counts[3] = step
    counts[4] = step // 2
    body = field(9, 2, keyvalue("rank", str(series)))
    body += field(3, 1, struct.pack("<Q", int(time.time() * 1e9)))
    body += field(4, 1, struct.pack("<Q", sum(counts)))
    body += field(5, 1, struct.pack("<d", 0.2 * sum(counts)))
    body += field(6, 2, b"".join(struct.pack("<Q", c) for c in counts))
    body += field(7, 2, b"".join(struct.pack("<d", b) for b in BOUNDS))
    return field(1, 2, body)


def request(pid, first_series, points, step):
    """One resource (a process) with `points` histogram points of training.step.duration."""
    dps = b"".join(histogram_point(first_series + i, step) for i in range(points))
    metric = string(1, "training.step.duration") + string(3, "s")
    metric += field(9, 2, dps + field(2, 0, varint(2)))
    scope = field(2, 2, metric)
    resource = (field(1, 2, keyvalue("process.pid", str(pid))) +
                field(1, 2, keyvalue("service.name", "train")))
    return field(1, 2, field(1, 2, resource) + field(2, 2, scope))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCRAPE_INTERVAL = [0.05]


def scrape_latencies(url, stop, out):
    while not stop.is_set():
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=10) as r:
            r.read()
        out.append(time.perf_counter() - t)
        stop.wait(SCRAPE_INTERVAL[0])


def scrape_for(url, seconds):
    stop, out = threading.Event(), []
    t = threading.Thread(target=scrape_latencies, args=(url, stop, out))
    t.start()
    time.sleep(seconds)
    stop.set()
    t.join()
    return out


def feed(url, rate, seconds, pids, sent):
    per_request = 100
    requests_per_second = rate / per_request
    series = 1000
    # The bodies are built once (the generator, not the agent, would be the bottleneck); each
    # round sends every series once with counts that grow from round to round.
    bodies = {}
    deadline = time.time() + seconds
    next_at = time.time()
    step = 0
    while time.time() < deadline:
        step += 1
        first = (step * per_request) % series
        round_ = step * per_request // series % 8
        if (first, round_) not in bodies:
            bodies[first, round_] = request(pids[(first // per_request) % len(pids)], first,
                                            per_request, 1 + round_)
        body = bodies[first, round_]
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/x-protobuf"})
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()
            if r.status == 200:
                sent[0] += per_request
        next_at += 1 / requests_per_second
        time.sleep(max(0, next_at - time.time()))


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--points-per-second", type=int, default=10000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--scrape-interval", type=float, default=0.05,
                    help="seconds between /metrics scrapes (Prometheus: 15-30)")
    args = ap.parse_args()
    SCRAPE_INTERVAL[0] = args.scrape_interval
    otlp_port = free_port()
    agent = subprocess.Popen(
        [os.path.join(args.build, "gpuscope"), "serve", "--simulate", "training-8xh100",
         "-a", "127.0.0.1:0", "--otlp-listen-address", "127.0.0.1:%d" % otlp_port],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = None
    for line in agent.stderr:
        m = re.search(r"\(port (\d+)", line)
        if m:
            port = int(m.group(1))
            break
    threading.Thread(target=lambda: [None for _ in agent.stderr], daemon=True).start()
    metrics = "http://127.0.0.1:%d/metrics" % port
    try:
        time.sleep(3)
        idle_start = cpu_seconds(agent.pid)
        time.sleep(10)
        idle = (cpu_seconds(agent.pid) - idle_start) / 10
        before = scrape_for(metrics, 10)
        pids = [41200 + i for i in range(8)]  # the training-8xh100 processes, one per GPU
        stop, latencies, sent = threading.Event(), [], [0]
        scraper = threading.Thread(target=scrape_latencies, args=(metrics, stop, latencies))
        scraper.start()
        busy_start, t0 = cpu_seconds(agent.pid), time.time()
        feed("http://127.0.0.1:%d/v1/metrics" % otlp_port, args.points_per_second, args.seconds,
             pids, sent)
        elapsed = time.time() - t0
        busy = (cpu_seconds(agent.pid) - busy_start) / elapsed
        stop.set()
        scraper.join()
        after = scrape_for(metrics, 10)
        with urllib.request.urlopen(metrics) as r:
            body = r.read().decode()
        app_series = len(re.findall(r"^gpuscope_app_step_duration_seconds_count", body, re.M))
        print("| figure | value |\n|---|---|")
        print("| points accepted per second | %.0f |" % (sent[0] / elapsed))
        print("| agent CPU without OTLP load | %.2f %% of a core |" % (idle * 100))
        print("| agent CPU at that load | %.2f %% of a core |" % (busy * 100))
        print("| CPU per 10,000 points/s | %.2f %% of a core |"
              % ((busy - idle) * 100 * 10000 / max(1, sent[0] / elapsed)))
        for what, values in (("before the load (no application series)", before),
                             ("during it", latencies),
                             ("after it (1,000 series kept, no ingestion)", after)):
            print("| /metrics p50 / p99 %s | %.1f ms / %.1f ms (%d scrapes) |"
                  % (what, percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000,
                     len(values)))
        print("| application series on /metrics | %d (body %d KiB) |"
              % (app_series, len(body) // 1024))
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    sys.exit(main())
