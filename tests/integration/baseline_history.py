"""The 14-day simulator history of the per-workload baselines, end to end:
generate it (gpuscope_baseline_history: the simulator stepped at 1-minute
resolution, the agent's sampler and renderer), backfill it into a TSDB
(promtool tsdb create-blocks-from openmetrics), backfill the recording rules
over it (promtool tsdb create-blocks-from rules: the 5-minute aggregates first,
then, once a restarted Prometheus sees them, the 14-day baselines), and start
a real Prometheus on that TSDB with the rules loaded. Used by
test_baseline_history.py and by bench/baseline_report.py (docs/baselines.md).
"""
import glob
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.parse

import yaml

from gpuscope_testlib import (BUILD_DIR, RULES_DIR, SOURCE_DIR, Prometheus, check,
                              http_get, stop_process)

DAY = 86400
DAYS = 14
STEP = 60
GENERATOR = os.path.join(BUILD_DIR, "gpuscope_baseline_history")
SIM = os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1")
SCENARIO = os.path.join(SOURCE_DIR, "tests", "integration", "baselines", "history.yaml")
BASELINE_RULES = os.path.join(RULES_DIR, "gpu-baselines.yml")
EFFICIENCY_RULES = os.path.join(RULES_DIR, "gpu-efficiency.yml")
INSTANCE = "sim-node:9400"

# Who holds which GPU when (scenario seconds), as the attribution would say.
HOLDERS = [
    (0, 0, DAYS * DAY + 1, "ml/llm-train"),    # (a)
    (1, 0, 10 * DAY, "ml/llm-train"),          # (d) on H100 ...
    (2, 10 * DAY, DAYS * DAY + 1, "ml/llm-train"),  # ... then on A100
    (3, 0, DAYS * DAY + 1, "serve/chat-api"),  # (b)
    (4, 0, DAYS * DAY + 1, "ml/vision-train"),  # (c)
    (5, 0, DAYS * DAY + 1, "ml/speech-train"),  # (e)
]

# The native families the baseline and the fixed efficiency rules read.
FAMILIES = [
    "gpuscope_gpu_info", "gpuscope_sm_active_seconds_total", "gpuscope_gpu_busy_seconds_total",
    "gpuscope_gpu_idle_seconds_total", "gpuscope_gpu_idle_held_seconds_total",
    "gpuscope_pipe_active_ratio", "gpuscope_dram_active_ratio",
    "gpuscope_memory_copy_utilization_ratio", "gpuscope_memory_used_bytes",
    "gpuscope_memory_total_bytes", "gpuscope_energy_joules_total",
    "gpuscope_gpu_temperature_celsius", "gpuscope_clock_throttle_seconds_total",
]
# Only the series the rules read (throttle reasons that cost throughput, the tensor pipe).
MATCHES = [
    # (hw_thermal_slowdown and hw_power_brake_slowdown stay 0 without those faults.)
    "gpuscope_clock_throttle_seconds_total:reason:sw_power_cap|hw_slowdown|sw_thermal_slowdown",
    "gpuscope_pipe_active_ratio:pipe:tensor",
]


def timed(label, timings, fn, *args):
    t0 = time.time()
    out = fn(*args)
    timings[label] = time.time() - t0
    print("baseline history: %s %.1f s" % (label, timings[label]), file=sys.stderr, flush=True)
    return out


# The simulator steps its physics in 0.1 s, so 14 days cost real time: two
# generators share the GPUs (the simulator advances only the GPUs read).
SHARDS = ("0,1,2", "3,4,5")


def generate(path, end, days=DAYS):
    procs = []
    for i, gpus in enumerate(SHARDS):
        cmd = [GENERATOR, "--nvml-lib", SIM, "--scenario", SCENARIO, "--end", str(end),
               "--days", str(days), "--step", str(STEP), "--instance", INSTANCE, "--gpus", gpus]
        for f in FAMILIES:
            cmd += ["--family", f]
        for m in MATCHES:
            cmd += ["--match", m]
        for gpu, start, stop, who in HOLDERS:
            cmd += ["--holder", "%d:%d:%d:%s" % (gpu, start, stop, who)]
        out = open("%s.%d" % (path, i), "w")
        procs.append((subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True), out))
    for p, out in procs:
        _, err = p.communicate(timeout=600)
        out.close()
        check(p.returncode == 0, "generator failed: %s" % err)
    # One file: the shards' samples, one EOF at the end.
    with open(path, "w") as dst:
        for i in range(len(SHARDS)):
            with open("%s.%d" % (path, i)) as src:
                for line in src:
                    if line != "# EOF\n":
                        dst.write(line)
            os.unlink("%s.%d" % (path, i))
        dst.write("# EOF\n")


# The generated history is cached beside the build folders (build/), in
# scenario seconds, keyed by everything that shapes it: the simulator, the
# agent code the generator runs, the scenario and the generator's arguments.
# The release and sanitizer suites then share one generation; each run only
# shifts the timestamps to end now.
CACHE_DIR = os.path.join(os.path.dirname(BUILD_DIR), "baseline-history-cache")
KEYED_SOURCES = ("sim/*.cc", "sim/*.h", "src/nvml/*", "src/collect/*", "src/export/*",
                 "include/gpuscope/*", "tests/tools/baseline_history.cc")


def cache_key():
    h = hashlib.sha256()
    paths = [SCENARIO] + [p for pat in KEYED_SOURCES
                          for p in sorted(glob.glob(os.path.join(SOURCE_DIR, pat)))]
    for path in paths:
        h.update(os.path.relpath(path, SOURCE_DIR).encode())
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(repr((HOLDERS, FAMILIES, MATCHES, DAYS, STEP, INSTANCE, SHARDS)).encode())
    return h.hexdigest()[:20]


def history(path, end, timings):
    """Writes the history ending at `end` (Unix seconds) to path; True when
    it came from the cache."""
    cached = os.path.join(CACHE_DIR, cache_key() + ".om")
    hit = os.path.exists(cached)
    if not hit:
        os.makedirs(CACHE_DIR, exist_ok=True)
        for old in glob.glob(os.path.join(CACHE_DIR, "*.om")):
            os.unlink(old)
        timed("generate", timings, generate, cached + ".tmp", DAYS * DAY)
        os.rename(cached + ".tmp", cached)
    timed("shift", timings, shift, cached, path, end - DAYS * DAY)
    return hit


def shift(src, dst, offset):
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            if line[0] == "#":
                out.write(line)
            else:
                head, _, ts = line.rpartition(" ")
                out.write("%s %d\n" % (head, int(ts) + offset))


def promtool(args, timeout=300):
    p = subprocess.run(["promtool"] + args, capture_output=True, text=True, timeout=timeout)
    check(p.returncode == 0, "promtool %s: %s%s" % (" ".join(args[:3]), p.stdout, p.stderr))
    return p.stdout


def rule_groups():
    with open(BASELINE_RULES) as f:
        return {g["name"]: g for g in yaml.safe_load(f)["groups"]}


def parse_duration(text):
    units = {"s": 1, "m": 60, "h": 3600, "d": DAY}
    return int(text[:-1]) * units[text[-1]]


def config(rule_files=(), evaluation_interval="5s"):
    text = "global:\n  evaluation_interval: %s\n" % evaluation_interval
    if rule_files:
        text += "rule_files:\n" + "".join("  - '%s'\n" % r for r in rule_files)
    return text


class History:
    """The backfilled TSDB and a Prometheus on it; close() stops it."""

    def __init__(self, workdir, rule_files=(BASELINE_RULES,), baseline_hours=None, ahead=0):
        """baseline_hours: backfill the window group only over that many
        last hours (the alerts read its last 2 hours); None: the whole history.
        ahead: seconds the history runs past now (so that rules evaluated
        live still find raw samples minutes later)."""
        self.workdir = workdir
        self.timings = {}
        self.end = int(time.time()) - 30 + ahead
        self.start = self.end - DAYS * DAY
        tsdb = os.path.join(workdir, "prom-data")
        om = os.path.join(workdir, "history.om")
        self.cache_hit = history(om, self.end, self.timings)
        self.om_bytes = os.path.getsize(om)
        timed("backfill_raw", self.timings, promtool,
              ["tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=500h", "-q",
               om, tsdb])
        os.unlink(om)
        groups = rule_groups()
        self.prom = None
        for name, hours in (("gpuscope-baselines-5m", None),
                            ("gpuscope-baselines-%dd" % DAYS, baseline_hours)):
            self.restart(())
            start = self.start if hours is None else self.end - hours * 3600
            timed("backfill_" + name, self.timings, self.backfill, groups[name], tsdb, start)
        self.restart(rule_files)

    def restart(self, rule_files):
        if self.prom:
            self.prom.close()
        self.prom = Prometheus(self.workdir, config(rule_files),
                               ["--storage.tsdb.retention.time=60d",
                                "--query.lookback-delta=5m"])
        self.prom.wait_ready(60)

    def backfill(self, group, tsdb, start):
        """Each recording rule of the group evaluated over the history at the
        group's interval, as `promtool tsdb create-blocks-from rules` does, but
        in one range query per rule (promtool asks once per 2-hour block and
        writes a block each: minutes on a loaded machine), then written as
        OpenMetrics and backfilled into one block."""
        step = parse_duration(group.get("interval", "1m"))
        om = os.path.join(self.workdir, group["name"] + ".om")
        with open(om, "w") as out:
            for rule in group["rules"]:
                series = self.range_query(rule["expr"], start + step, step)
                for s in series:
                    labels = dict(s["metric"])
                    labels.update(rule.get("labels") or {})
                    labels.pop("__name__", None)
                    text = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
                                    for k, v in sorted(labels.items()))
                    prefix = "%s{%s} " % (rule["record"], text)
                    out.writelines("%s%s %s\n" % (prefix, v, t) for t, v in s["values"])
            out.write("# EOF\n")
        promtool(["tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=500h", "-q",
                  om, tsdb])
        os.unlink(om)

    def range_query(self, expr, start, step):
        params = urllib.parse.urlencode({"query": expr, "start": start,
                                         "end": self.end, "step": step})
        status, _, body = http_get(self.prom.base + "/api/v1/query_range?" + params,
                                   timeout=600)
        check(status == 200, "query_range %s: %s %s" % (expr, status, body[:300]))
        return json.loads(body)["data"]["result"]

    def close(self):
        if self.prom:
            stop_process(self.prom.proc)
            self.prom.close()
