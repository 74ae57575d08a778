#!/usr/bin/env python3
"""`gpuscope query` end to end on the simulator: golden CSV outputs (frozen
scenario time), nvidia-smi's flags and aliases, the -l/-lms loop until
SIGINT, -f, the default summary table, and the error paths (unknown field,
missing library, driver not loaded, malformed scenario).

Env: GPUSCOPE_BUILD_DIR (with gpuscope and sim/), GPUSCOPE_SOURCE_DIR.
GPUSCOPE_UPDATE_GOLDEN=1 rewrites tests/golden/query/ from the current binary.
stdlib only.
"""
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE, SOURCE_DIR, check, main, sanitizer_report  # noqa: E402

GOLDEN_DIR = os.path.join(SOURCE_DIR, "tests", "golden", "query")
UPDATE = os.environ.get("GPUSCOPE_UPDATE_GOLDEN") == "1"
FROZEN = {"GPUSCOPE_SIM_FROZEN_TIME": "120"}


def check_golden(name, got):
    """`got` is GOLDEN_DIR/name byte for byte; with GPUSCOPE_UPDATE_GOLDEN=1 it is written there."""
    path = os.path.join(GOLDEN_DIR, name)
    if UPDATE:
        with open(path, "w") as f:
            f.write(got)
        return
    with open(path) as f:
        want = f.read()
    check(got == want, "%s differs from the golden file:\n--- got\n%s--- want\n%s"
          % (name, got, want))


def env_with(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSCOPE_")}
    env["TZ"] = "UTC"
    env.update(extra or {})
    return env


def run(args, extra_env=None, timeout=60):
    p = subprocess.run([GPUSCOPE] + args, capture_output=True, text=True, timeout=timeout,
                       env=env_with(extra_env))
    report = sanitizer_report(p.stderr)
    check(report is None, "%s: sanitizer report:\n%s" % (args, report))
    return p.returncode, p.stdout, p.stderr


# Every canonical field but timestamp (which follows the wall clock).
ALL_FIELDS = (
    "driver_version,count,name,serial,uuid,pci.bus_id,pci.domain,pci.bus,pci.device,"
    "pci.device_id,pci.sub_device_id,pcie.link.gen.current,pcie.link.gen.gpucurrent,"
    "pcie.link.gen.max,pcie.link.gen.gpumax,pcie.link.width.current,pcie.link.width.max,index,"
    "display_mode,persistence_mode,vbios_version,gpu_recovery_action,fan.speed,pstate,"
    "clocks_event_reasons.supported,clocks_event_reasons.active,clocks_event_reasons.gpu_idle,"
    "clocks_event_reasons.applications_clocks_setting,clocks_event_reasons.sw_power_cap,"
    "clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,"
    "clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown,"
    "clocks_event_reasons.sync_boost,clocks_event_reasons_counters.sw_power_cap,"
    "clocks_event_reasons_counters.sync_boost,clocks_event_reasons_counters.sw_thermal_slowdown,"
    "clocks_event_reasons_counters.hw_thermal_slowdown,"
    "clocks_event_reasons_counters.hw_power_brake_slowdown,memory.total,memory.reserved,"
    "memory.used,memory.free,compute_mode,compute_cap,utilization.gpu,utilization.memory,"
    "utilization.encoder,utilization.decoder,ecc.mode.current,ecc.mode.pending,"
    "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,"
    "ecc.errors.corrected.volatile.dram,retired_pages.single_bit_ecc.count,"
    "retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,"
    "remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,temperature.gpu,"
    "temperature.gpu.tlimit,temperature.memory,power.management,power.draw,power.draw.average,"
    "power.draw.instant,power.limit,enforced.power.limit,power.default_limit,power.min_limit,"
    "power.max_limit,clocks.current.graphics,clocks.current.sm,clocks.current.memory,"
    "clocks.current.video,clocks.max.graphics,clocks.max.sm,clocks.max.memory,mig.mode.current,"
    "mig.mode.pending")

COUNTERS = ("--query-gpu=index,clocks_event_reasons.active,clocks_event_reasons_counters.sw_power_cap,"
            "clocks_event_reasons_counters.sync_boost,"
            "clocks_event_reasons_counters.sw_thermal_slowdown,"
            "clocks_event_reasons_counters.hw_thermal_slowdown,"
            "clocks_event_reasons_counters.hw_power_brake_slowdown")
POWER_CAP = os.path.join(SOURCE_DIR, "sim", "scenarios", "diagnosis", "power-cap.yaml")
THERMAL = os.path.join(SOURCE_DIR, "sim", "scenarios", "health", "thermal-slowdown.yaml")

GOLDEN_CASES = [
    ("training_runbook.csv", "training-8xh100",
     ["--query-gpu=utilization.gpu,memory.used,temperature.gpu,power.draw", "--format=csv"]),
    ("training_identity_noheader.csv", "training-8xh100",
     ["--query-gpu=index,name,uuid,serial,pci.bus_id,pci.domain,pci.bus,pci.device,"
      "pci.device_id,pci.sub_device_id,compute_cap,driver_version,count,vbios_version",
      "--format=csv,noheader"]),
    ("training_aliases_ids.csv", "training-8xh100",
     ["--query-gpu=gpu_name,gpu_bus_id,gpu_uuid,gpu_serial,clocks.gr,clocks.sm,clocks.mem,"
      "clocks.video,clocks.max.gr,clocks.max.mem,clocks_throttle_reasons.active,"
      "clocks_throttle_reasons.sw_power_cap", "--format=csv", "-i", "0,3"]),
    ("training_all_nounits.csv", "training-8xh100", ["--query-gpu=" + ALL_FIELDS,
                                                     "--format=csv,nounits"]),
    ("mixed_all.csv", "mixed-node", ["--query-gpu=" + ALL_FIELDS, "--format=csv"]),
    # The driver's own cumulative counters, read once (issue 13: a one-shot
    # query printed 0 us while the board throttled).
    ("power_cap_counters.csv", POWER_CAP, [COUNTERS, "--format=csv"]),
    ("thermal_counters.csv", THERMAL, [COUNTERS, "--format=csv,nounits"]),
    ("training_apps.csv", "training-8xh100",
     ["--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid,gpu_name,gpu_bus_id,"
      "gpu_serial", "--format=csv"]),
]


def read_lines(p, count, timeout=60):
    """Up to count stdout lines of p as (monotonic arrival time, line), waiting
    for them (not for a fixed time: a loaded machine only makes it slower)."""
    lines = queue.Queue()

    def reader():
        for line in p.stdout:
            lines.put((time.monotonic(), line.rstrip("\n")))
        lines.put(None)
    threading.Thread(target=reader, daemon=True).start()
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        try:
            item = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if item is None:
            break
        got.append(item)
    return got, lines


def check_loop(args, interval_s, blocks):
    """Runs a -l/-lms loop until it has printed `blocks` blocks of 8 rows, then
    SIGINT: exit 0, whole blocks, and blocks no closer than the interval."""
    p = subprocess.Popen([GPUSCOPE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env_with())
    got, rest = read_lines(p, 1 + blocks * 8)
    p.send_signal(signal.SIGINT)
    try:
        err = p.communicate(timeout=10)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        err = p.communicate()[1]
    while True:  # the rows printed before SIGINT took effect
        item = rest.get(timeout=10)
        if item is None:
            break
        got.append(item)
    check(p.returncode == 0, "loop %s: exit %s after SIGINT: %s" % (args, p.returncode, err))
    check(sanitizer_report(err) is None, "loop %s: %s" % (args, sanitizer_report(err)))
    check(len(got) >= 1 + blocks * 8, "loop %s: %d lines, want %d blocks of 8 after the header"
          % (args, len(got), blocks))
    header, rows = got[0][1], [line for _, line in got[1:]]
    check(header == "utilization.gpu [%], memory.used [MiB], temperature.gpu, power.draw [W]",
          "loop header: %r" % header)
    check(len(rows) % 8 == 0, "loop %s: %d rows, not whole blocks of 8" % (args, len(rows)))
    ends = [t for t, _ in got[8::8]]  # when each block's last row arrived
    if len(ends) >= blocks:
        # Sleeps can only be longer than asked; allow for the first block's
        # start-up and for output arriving late (pipes), not early.
        span = ends[blocks - 1] - ends[0]
        check(span >= (blocks - 1) * interval_s * 0.7, "loop %s: %d blocks within %.2f s, "
              "interval %.2f s" % (args, blocks, span, interval_s))
    pattern = re.compile(r"^(\d+) %, (\d+) MiB, (\d+), (\d+\.\d\d) W$")
    for row in rows:
        m = pattern.match(row)
        check(m is not None, "loop row: %r" % row)
        if m:
            util, mem, temp, power = int(m[1]), int(m[2]), int(m[3]), float(m[4])
            check(0 <= util <= 100 and 0 < mem <= 81559 and 25 <= temp <= 95 and
                  60 <= power <= 700, "loop row out of H100 range: %r" % row)
    return rows


class QueryTest(unittest.TestCase):
    def test_goldens(self):
        os.makedirs(GOLDEN_DIR, exist_ok=True)
        for name, scenario, args in GOLDEN_CASES:
            with self.subTest(name):  # every case is checked, whichever fails first
                rc, out, err = run(["query", "--simulate", scenario] + args, FROZEN)
                check(rc == 0, "%s: exit %d: %s" % (name, rc, err))
                check_golden(name, out)

    def test_one_shot_counters_are_cumulative(self):
        # 120 s into the power-cap scenario: GPUs 0, 1 and 3 have been capped since
        # t = 0 and GPU 2 braked since 60 s, so one read shows time, not 0 us.
        rc, out, err = run(["query", "--simulate", POWER_CAP, COUNTERS,
                            "--format=csv,noheader,nounits"], FROZEN)
        check(rc == 0, "exit %d: %s" % (rc, err))
        rows = [[c.strip() for c in line.split(",")] for line in out.splitlines()]
        check(len(rows) == 4, "4 GPUs: %r" % rows)
        if len(rows) == 4:
            for gpu in (0, 1, 3):
                check(int(rows[gpu][2]) > 60 * 1000 * 1000,
                      "GPU %d sw_power_cap: %r" % (gpu, rows[gpu]))
            check(int(rows[2][6]) > 30 * 1000 * 1000, "GPU 2 hw_power_brake_slowdown: %r" % rows[2])
        rc, out, err = run(["query", "--simulate", THERMAL, COUNTERS,
                            "--format=csv,noheader,nounits", "-i", "0"], FROZEN)
        check(rc == 0, "exit %d: %s" % (rc, err))
        cells = [c.strip() for c in out.strip().split(",")]
        check(len(cells) == 7 and int(cells[4]) > 0 and int(cells[5]) > 0,
              "GPU 0 sw/hw thermal slowdown counters: %r" % cells)

    def test_format_details(self):
        rc, out, _ = run(["query", "--simulate", "training-8xh100", "--format=csv",
                          "--query-gpu=timestamp,power.draw,clocks_event_reasons.supported,pstate"],
                         FROZEN)
        lines = out.splitlines()
        check(rc == 0 and len(lines) == 9, "timestamp query: %r" % out)
        check(lines[0] == "timestamp, power.draw [W], clocks_event_reasons.supported, pstate",
              "header: %r" % lines[0])
        row = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, \d+\.\d\d W, "
                         r"0x[0-9A-F]{16}, P\d+$")
        for line in lines[1:]:
            check(row.match(line), "row format: %r" % line)
        # nvidia-smi habit: the flags without the command word.
        rc, out2, _ = run(["--simulate", "training-8xh100", "--query-gpu=index", "--format=csv"],
                          FROZEN)
        check(rc == 0 and out2 == "index\n" + "".join("%d\n" % i for i in range(8)),
              "no command word: %r" % out2)

    def test_output_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "out.csv")
            args = ["query", "--simulate", "training-8xh100", "--format=csv,noheader",
                    "--query-gpu=index,memory.total"]
            rc, out, _ = run(args + ["-f", path], FROZEN)
            check(rc == 0 and out == "", "-f printed to stdout: %r" % out)
            _, direct, _ = run(args, FROZEN)
            with open(path) as f:
                check(f.read() == direct, "-f file differs from stdout output")

    def test_loops(self):
        query = ["query", "--simulate", "training-8xh100",
                 "--query-gpu=utilization.gpu,memory.used,temperature.gpu,power.draw",
                 "--format=csv"]
        check_loop(query + ["-l", "1"], 1.0, 3)
        check_loop(query + ["-lms", "300"], 0.3, 4)

    def test_summary(self):
        rc, out, err = run(["--simulate", "training-8xh100"], FROZEN)
        check(rc == 0, "summary exit %d: %s" % (rc, err))
        check("simulated node (scenario training-8xh100)" in out, "summary: no simulated line")
        check("Driver Version: " in out and "CUDA Version: " in out, "summary: no versions")
        gpu_lines = [l for l in out.splitlines() if "NVIDIA H100" in l and "00000000:" in l]
        check(len(gpu_lines) == 8, "summary: %d GPU lines" % len(gpu_lines))
        check(out.count("python3") == 8, "summary: processes missing")
        rc, out, _ = run(["version"])
        check(rc == 0 and out.startswith("gpuscope "), "version: %r" % out)

    def test_errors(self):
        rc, out, err = run(["query", "--simulate", "training-8xh100",
                            "--query-gpu=utilization.gpu,bogus", "--format=csv"])
        check(rc == 2 and out == "" and err == 'Field "bogus" is not a valid field to query.\n',
              "unknown field: rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = run(["query", "--query-gpu=Name"])
        check(rc == 2 and err == 'Field "Name" is not a valid field to query.\n',
              "case-sensitive: %r" % err)
        rc, out, err = run(["query", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1",
                            "--query-gpu=index", "--format=csv"])
        check(rc != 0 and out == "" and len(err.strip().splitlines()) == 1 and
              "/nonexistent/libnvidia-ml.so.1" in err, "missing library: rc=%d err=%r" % (rc, err))
        rc, out, err = run(["query", "--simulate", "training-8xh100", "--query-gpu=index"],
                           {"GPUSCOPE_SIM_INIT_ERROR": "DRIVER_NOT_LOADED"})
        last = err.strip().splitlines()[-1] if err.strip() else ""
        check(rc != 0 and out == "" and "driver" in last.lower() and "not loaded" in last,
              "driver not loaded: rc=%d err=%r" % (rc, err))
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.yaml")
            with open(bad, "w") as f:
                f.write("gpus:\n  - model: h100-sxm\n    count: many\n")
            rc, out, err = run(["query", "--simulate", bad, "--query-gpu=index"])
            last = err.strip().splitlines()[-1] if err.strip() else ""
            check(rc != 0 and bad + ":3" in last, "malformed scenario: rc=%d err=%r" % (rc, err))
        rc, _, err = run(["query", "--simulate", "training-8xh100", "--query-gpu=index", "-i", "9"])
        check(rc != 0 and "9" in err, "-i 9: rc=%d err=%r" % (rc, err))
        rc, _, err = run(["query", "--query-gpu=index", "--format=xml"])
        check(rc == 2 and "xml" in err, "bad format: %r" % err)


if __name__ == "__main__":
    main()
