#!/usr/bin/env python3
"""The cost of an XID storm (issue 42) for docs/performance.md.

Runs `gpuscope serve --simulate sim/scenarios/health/xid-storm.yaml` (GPU 0 of
two repeats four XIDs 1,000 times a second from t = 5 s to 65 s) and, for
comparison, the same scenario without its faults. For each run, over
--seconds: the agent's CPU (utime + stime from /proc, whole process, the
simulated driver's event queue included), its RSS (VmRSS, and VmHWM at the
end), and the latency of /metrics scraped back to back every 0.1 s (p50,
p99, max, failures). After the storm it checks the counters on /metrics
(gpuscope_xid_errors_total exact) and counts the XID log lines.

Usage: xid_storm_bench.py BUILD_DIR [--seconds 70]; prints one JSON object.
Python stdlib only (+ the integration tests' helpers).
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.dont_write_bytecode = True
SCENARIO = os.path.join(ROOT, "sim", "scenarios", "health", "xid-storm.yaml")
EXPECTED = {"13": 30000, "31": 18000, "43": 11700, "95": 300}


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kib(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    return out


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def xid_totals(body):
    out = {}
    for m in re.finditer(r'^gpuscope_xid_errors_total\{([^}]*)\} (\S+)$', body, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("gpu") == "0":
            out[labels["xid"]] = int(float(m.group(2)))
    return out


def measure(Serve, scenario, seconds):
    with Serve(["--simulate", scenario]) as s:
        s.wait_healthy()
        pid = s.proc.pid
        start_cpu, start = cpu_seconds(pid), time.monotonic()
        latencies, failures, rss = [], 0, []
        next_rss = start
        while time.monotonic() - start < seconds:
            t0 = time.monotonic()
            status, _, body = s.get("/metrics")
            latencies.append((time.monotonic() - t0) * 1000)
            failures += status != 200
            if time.monotonic() >= next_rss:
                rss.append(memory_kib(pid)["VmRSS"])
                next_rss += 1
            time.sleep(0.1)
        elapsed = time.monotonic() - start
        cpu = cpu_seconds(pid) - start_cpu
        mem = memory_kib(pid)
        _, _, body = s.get("/metrics")
        log = s.output()
        s.stop()
    xid_lines = [l for l in log.splitlines() if "events: XID " in l]
    return {
        "seconds": round(elapsed, 1),
        "cpu_percent": round(100 * cpu / elapsed, 2),
        "rss_mib_median": round(statistics.median(rss) / 1024, 1),
        "rss_mib_max": round(max(rss) / 1024, 1),
        "hwm_mib": round(mem["VmHWM"] / 1024, 1),
        "scrapes": len(latencies),
        "scrape_failures": failures,
        "metrics_ms_p50": round(percentile(latencies, 50), 2),
        "metrics_ms_p99": round(percentile(latencies, 99), 2),
        "metrics_ms_max": round(max(latencies), 2),
        "xid_totals_gpu0": xid_totals(body),
        "xid_log_lines": len(xid_lines),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=70)
    args = ap.parse_args()
    os.environ["GPUSCOPE_BUILD_DIR"] = os.path.abspath(args.build)
    from gpuscope_testlib import Serve  # noqa: E402
    with open(SCENARIO) as f:
        text = f.read()
    quiet = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    quiet.write(text[:text.index("\nfaults:")] + "\n")
    quiet.close()
    try:
        out = {"quiet": measure(Serve, quiet.name, args.seconds),
               "storm": measure(Serve, SCENARIO, args.seconds)}
    finally:
        os.unlink(quiet.name)
    out["storm"]["xid_totals_exact"] = out["storm"]["xid_totals_gpu0"] == EXPECTED
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
