#!/usr/bin/env python3
"""OTLP soak under attack (issue 31): `gpuscope serve` on the simulated 64-GPU node with
its OTLP receiver, for --seconds (default 600), beside

- a well-behaved sender: the training step histogram of 8 ranks, every second, from this
  node's host name (so attributed to every GPU that runs work); every answer must accept
  every point;
- a hostile sender cycling through the issue's attacks, one every --attack-interval seconds:
  3,000 series from the node (the KPI join flood), 64 KiB attribute values, a gzip bomb of
  2M empty data points, name squatting and values that would make /metrics invalid, and a new
  sender identity each time;
- a scraper: /metrics and /health every second.

It prints, as Markdown for docs/security.md: /health answers that were not 200, the
scrapes whose newest cycle was late (gpuscope_last_collect_timestamp_seconds older than two
fast intervals when the scrape was answered), peak and final RSS, the largest /metrics
body, and the well-behaved points refused. Exit 1 when a target is missed: /health always
200, no late cycle, RSS under 64 MB, no well-behaved point refused.

Usage: bench/otlp_soak.py BUILD_DIR [--seconds 600] [--gpus 64] [--attack-interval 2]
"""
import argparse
import gzip
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otlp_ingest import field, free_port, keyvalue, string, varint  # noqa: E402

BOUNDS = [0.1, 0.2, 0.5, 1.0]


def now_ns():
    return struct.pack("<Q", int(time.time() * 1e9))


def resource(service, host):
    return (field(1, 2, keyvalue("service.name", service)) +
            field(1, 2, keyvalue("host.name", host)))


def histogram(name, points, temporality=2):
    metric = string(1, name) + string(3, "s")
    return metric + field(9, 2, b"".join(points) + field(2, 0, varint(temporality)))


def histogram_point(attrs, counts, bounds=BOUNDS, count=None):
    body = b"".join(field(9, 2, keyvalue(k, v)) for k, v in attrs)
    total = sum(counts) if count is None else count
    body += field(3, 1, now_ns()) + field(4, 1, struct.pack("<Q", total))
    body += field(5, 1, struct.pack("<d", 0.3 * sum(counts)))
    body += field(6, 2, b"".join(struct.pack("<Q", c) for c in counts))
    body += field(7, 2, b"".join(struct.pack("<d", b) for b in bounds))
    return field(1, 2, body)


def gauge(name, value, attrs=()):
    point = b"".join(field(7, 2, keyvalue(k, v)) for k, v in attrs)
    point += field(3, 1, now_ns()) + field(4, 1, struct.pack("<d", value))
    return string(1, name) + field(5, 2, field(1, 2, point))


def counter(name, value):
    point = field(3, 1, now_ns()) + field(4, 1, struct.pack("<d", value))
    body = field(1, 2, point) + field(2, 0, varint(2)) + field(3, 0, varint(1))
    return string(1, name) + field(7, 2, body)


def request(res, metrics):
    scope = b"".join(field(2, 2, m) for m in metrics)
    return field(1, 2, field(1, 2, res) + field(2, 2, scope))


def rejected(body):
    """rejected_data_points of an ExportMetricsServiceResponse (0 without partial_success)."""
    if not body or body[0] != 0x0A:
        return 0
    inner = body[2:]
    if inner and inner[0] == 0x08:
        value, shift, i = 0, 0, 1
        while i < len(inner):
            value |= (inner[i] & 0x7F) << shift
            if not inner[i] & 0x80:
                return value
            shift, i = shift + 7, i + 1
    return 0


def post(url, body, encoding=None):
    headers = {"Content-Type": "application/x-protobuf"}
    if encoding:
        headers["Content-Encoding"] = encoding
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return 0, b""


class Attacks:
    """The issue's hostile inputs, one per call, each from a new sender identity."""

    def __init__(self, host):
        self.host = host
        self.n = 0
        self.flood = None
        self.bomb = None

    def next(self):
        self.n += 1
        sender = "attacker-%d" % self.n
        kind = self.n % 5
        if kind == 0:  # 3,000 series on every GPU: the KPI join flood
            if self.flood is None:
                points = [histogram_point([("rank", str(i))], [1, 2, 1, 0, 0])
                          for i in range(3000)]
                self.flood = histogram("training.step.duration", points)
            return "flood", request(resource("flood", self.host), [self.flood]), None
        if kind == 1:  # 64 KiB attribute values
            points = [gauge("huge.value", 1.0, [("blob", "%06d" % i + "x" * 65536)])
                      for i in range(20)]
            return "huge labels", request(resource(sender, self.host), points), None
        if kind == 2:  # 4 KiB of gzip inflating to 2M empty data points
            if self.bomb is None:
                empty = field(1, 2, b"")
                metric = string(1, "bomb") + field(5, 2, empty * 2_000_000)
                self.bomb = gzip.compress(request(resource(sender, self.host), [metric]), 9)
            return "gzip bomb", self.bomb, "gzip"
        if kind == 3:  # squatting and name clashes
            metrics = [gauge("step.duration.seconds", 1.0), gauge("clash.count", 1.0),
                       histogram("clash", [histogram_point([], [1, 1, 1, 1, 1])])]
            return "squatting", request(resource(sender, self.host), metrics), None
        # values /metrics cannot carry: +Inf bound, NaN and negative counters, bad count
        metrics = [histogram("inf.bound", [histogram_point([], [1, 1], [float("inf")])]),
                   counter("nan.total", float("nan")), counter("negative.total", -5.0),
                   histogram("bad.count", [histogram_point([], [1, 1, 1, 1, 9], count=99)])]
        return "invalid values", request(resource(sender, self.host), metrics), None


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--attack-interval", type=float, default=2.0)
    args = ap.parse_args()
    scenario = os.path.join(args.build, "sim", "scenarios", "bench", "%dxh100.yaml" % args.gpus)
    host = socket.gethostname()
    port, otlp_port = free_port(), free_port()
    agent = subprocess.Popen(
        [os.path.join(args.build, "gpuscope"), "serve", "--simulate", scenario,
         "-a", "127.0.0.1:%d" % port, "--otlp-listen-address", "127.0.0.1:%d" % otlp_port,
         "--kpi-regression-window", "5s", "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base, otlp = "http://127.0.0.1:%d" % port, "http://127.0.0.1:%d/v1/metrics" % otlp_port
    stop = threading.Event()
    stats = {"health_bad": 0, "health": 0, "late": 0, "scrapes": 0, "max_body": 0,
             "max_rss": 0, "good_sent": 0, "good_refused": 0, "good_failed": 0,
             "attacks": {}, "max_age": 0.0}

    def scraper():
        while not stop.is_set():
            t = time.time()
            try:
                with urllib.request.urlopen(base + "/health", timeout=10) as r:
                    ok = r.status == 200
            except (urllib.error.HTTPError, OSError):
                ok = False
            stats["health"] += 1
            stats["health_bad"] += 0 if ok else 1
            try:
                with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
                    body = r.read().decode()
                answered = time.time()
                m = re.search(r"^gpuscope_last_collect_timestamp_seconds (\S+)", body, re.M)
                age = answered - float(m.group(1)) if m else float("inf")
                stats["max_age"] = max(stats["max_age"], age)
                stats["late"] += 1 if age > 2.0 else 0
                stats["scrapes"] += 1
                stats["max_body"] = max(stats["max_body"], len(body))
            except (urllib.error.HTTPError, OSError):
                stats["late"] += 1
            stats["max_rss"] = max(stats["max_rss"], rss_kib(agent.pid))
            stop.wait(max(0, 1 - (time.time() - t)))

    def good_sender():
        step = 0
        while not stop.is_set():
            step += 1
            points = [histogram_point([("rank", str(r))], [step, step, 0, 0, 0])
                      for r in range(8)]
            status, body = post(otlp, request(resource("train", host),
                                              [histogram("training.step.duration", points)]))
            stats["good_sent"] += 8
            if status != 200:
                stats["good_failed"] += 8
            else:
                stats["good_refused"] += rejected(body)
            stop.wait(1)

    def attacker():
        attacks = Attacks(host)
        while not stop.is_set():
            name, body, encoding = attacks.next()
            status, _ = post(otlp, body, encoding)
            stats["attacks"].setdefault(name, {}).setdefault(status, 0)
            stats["attacks"][name][status] += 1
            stop.wait(args.attack_interval)

    time.sleep(3)
    threads = [threading.Thread(target=f) for f in (scraper, good_sender, attacker)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    final_rss = rss_kib(agent.pid)
    agent.terminate()
    code = agent.wait(30)
    print("| figure (%d GPUs, %.0f s, an attack every %.0f s) | value | target |" %
          (args.gpus, args.seconds, args.attack_interval))
    print("|---|---|---|")
    print("| /health not 200 | %d of %d | 0 |" % (stats["health_bad"], stats["health"]))
    print("| scrapes whose newest cycle was late (> 2 s) | %d of %d (oldest %.2f s) | 0 |" %
          (stats["late"], stats["scrapes"], stats["max_age"]))
    print("| peak RSS / final RSS | %.1f MB / %.1f MB | < 64 MB |" %
          (stats["max_rss"] / 1024, final_rss / 1024))
    print("| largest /metrics body | %.1f MB | |" % (stats["max_body"] / 1e6))
    print("| well-behaved points refused or failed | %d + %d of %d | 0 |" %
          (stats["good_refused"], stats["good_failed"], stats["good_sent"]))
    for name, statuses in sorted(stats["attacks"].items()):
        print("| attack: %s | %s | |" % (name, ", ".join("%d x %s" % (n, s)
                                                        for s, n in sorted(statuses.items()))))
    print("| agent exit code | %d | 0 |" % code)
    ok = (stats["health_bad"] == 0 and stats["late"] == 0 and stats["max_rss"] < 64 * 1024 and
          stats["good_refused"] + stats["good_failed"] == 0 and code == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
