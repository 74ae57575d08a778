#!/usr/bin/env python3
"""Web page figures for docs/performance.md (bench/performance-notes.md):

1. page weight (bytes of the page's own files: HTML, JS, CSS, uPlot) and the
   first data (the API replies of the first cycle), and time to first draw in
   headless Chromium (navigation start to every card and sparkline drawn,
   window.gpuscopePage.firstDrawMs) with 8 GPUs and 600 points each: the
   default 10-minute window at 1 s, filled in 60 s with -c 100ms --window 60s;
2. the agent's CPU (utime + stime from /proc) at the default 1 s cadence on
   8 GPUs, with no page open and with one page open (polling every second).

Usage: web_bench.py BUILD_DIR [--cpu-seconds 30]; prints one JSON object.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))


def page(mode_cfg):
    p = subprocess.run(["node", os.path.join(ROOT, "web", "test", "page.js"), "bench",
                        json.dumps(mode_cfg)], capture_output=True, text=True,
                       cwd=os.path.join(ROOT, "web"), timeout=600)
    if p.returncode != 0:
        sys.exit("web_bench: page.js failed: " + p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pid, seconds, during=None):
    start_cpu, start = cpu_seconds(pid), time.time()
    if during:
        during()
    else:
        time.sleep(seconds)
    return (cpu_seconds(pid) - start_cpu) / (time.time() - start)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cpu-seconds", type=float, default=30)
    args = ap.parse_args()
    os.environ["GPUSCOPE_BUILD_DIR"] = os.path.abspath(args.build)
    from gpuscope_testlib import Serve  # noqa: E402
    chromium = shutil.which("chromium")
    out = {}
    with Serve(["--simulate", "training-8xh100", "-c", "100ms", "--window", "60s"]) as s:
        time.sleep(62)  # 600 points per GPU
        runs = [page({"url": s.base, "chromium": chromium}) for _ in range(3)]
    out["first_draw_ms"] = statistics.median(r["first_draw_ms"] for r in runs)
    out["first_draw_runs_ms"] = [round(r["first_draw_ms"]) for r in runs]
    out["first_data_ms"] = statistics.median(r["first_data_ms"] for r in runs)
    out["load_average"] = os.getloadavg()[0]
    for key in ("page_weight_bytes", "page_wire_bytes", "first_data_bytes",
                "first_data_wire_bytes", "cards", "points_per_gpu", "assets"):
        out[key] = runs[0][key]
    with Serve(["--simulate", "training-8xh100"]) as s:
        s.wait_healthy()
        time.sleep(3)
        out["cpu_no_page"] = cpu_share(s.proc.pid, args.cpu_seconds)
        cfg = {"url": s.base, "chromium": chromium, "hold_seconds": args.cpu_seconds + 5}
        browser = subprocess.Popen(["node", os.path.join(ROOT, "web", "test", "page.js"),
                                    "bench", json.dumps(cfg)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, cwd=os.path.join(ROOT, "web"))
        if browser.stderr.readline().strip() != "HOLD":
            sys.exit("web_bench: the page did not load")
        out["cpu_one_page"] = cpu_share(s.proc.pid, args.cpu_seconds)
        browser.wait(timeout=120)
        out["cpu_one_page_seconds"] = args.cpu_seconds
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
