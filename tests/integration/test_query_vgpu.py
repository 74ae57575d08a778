#!/usr/bin/env python3
"""`gpuscope query` lists vGPU instances (issue 43 item 5), end to end on the
simulator.

Host: sim/scenarios/vgpu/host.yaml, two H100s each carrying three virtual GPUs
of different VMs. `query vgpu` prints nvidia-smi vgpu's table, `query vgpu -q`
its detail, `--query-vgpu=...` CSV in --query-gpu's layout (golden files in
tests/golden/query/vgpu_*; the table's date and version lines are checked by
pattern, the rest byte for byte). -i selects boards; a host with no board in
host vGPU mode (bare metal, a guest) says nvidia-smi's "No supported devices in
vGPU mode." and exits 3; an unknown field is nvidia-smi's sentence, exit 2.
Against an agent (`--agent URL`, its /api/v1/snapshot) the same goldens hold.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. GPUSCOPE_UPDATE_GOLDEN=1 rewrites
the golden files from the current binary. stdlib only.
"""
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE, SOURCE_DIR, Serve, check, main  # noqa: E402
from test_query import UPDATE, check_golden, env_with, run  # noqa: E402 (query's helpers)

HOST = os.path.join(SOURCE_DIR, "sim", "scenarios", "vgpu", "host.yaml")
GUEST = os.path.join(SOURCE_DIR, "sim", "scenarios", "vgpu", "guest.yaml")
# 120 s into the run: the third VM's licence lapsed at 8 s (grace period).
FROZEN = {"GPUSCOPE_SIM_FROZEN_TIME": "120"}
NOT_VGPU = "No supported devices in vGPU mode.\n"

# Every field but timestamp (which follows the wall clock).
ALL_FIELDS = ("gpu_index,gpu_name,gpu_bus_id,gpu_uuid,vgpu_id,vgpu_uuid,vgpu_name,vm_id,vm_name,"
              "license_status,fb_memory_usage.total,fb_memory_usage.used,fb_memory_usage.free,"
              "utilization.gpu,utilization.memory,utilization.encoder,utilization.decoder")

GOLDEN_CASES = [
    ("vgpu_table.txt", ["vgpu"]),
    ("vgpu_table_gpu1.txt", ["vgpu", "-i", "1"]),
    ("vgpu_detail.txt", ["vgpu", "-q"]),
    ("vgpu_all.csv", ["--query-vgpu=" + ALL_FIELDS, "--format=csv"]),
    ("vgpu_gpu0_noheader_nounits.csv",
     ["--query-vgpu=vgpu_id,vm_id,fb_memory_usage.used,utilization.gpu,license_status",
      "--format=csv,noheader,nounits", "-i", "00000000:18:00.0"]),
]
# The table's first two lines: nvidia-smi's date line, then the version box.
DATE_LINE = re.compile(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}       $")
VERSION_LINE = re.compile(r"^\| gpuscope \S+ +Driver Version: \S+ +\|$")


def comparable(name, out):
    """The output as its golden file holds it: a table's date and version
    lines (wall clock, release) are checked here and left out."""
    if not name.startswith("vgpu_table"):
        return out
    lines = out.split("\n")
    check(len(lines) > 2 and DATE_LINE.match(lines[0]) and VERSION_LINE.match(lines[2]),
          "%s: date or version line: %r" % (name, lines[:3]))
    check(len(lines) > 2 and len(lines[2]) == 79, "%s: version box width: %r" % (name, lines[2]))
    return "\n".join(lines[1:2] + lines[3:])


class QueryVgpuTest(unittest.TestCase):
    def test_goldens(self):
        self.check_goldens(["--simulate", HOST], FROZEN)

    def test_goldens_through_an_agent(self):
        if UPDATE:
            return
        with Serve(["--simulate", HOST, "-c", "100"], env=FROZEN) as agent:
            agent.wait_healthy()
            time.sleep(1.0)  # several cycles: every tier has been read
            self.check_goldens(["--agent", agent.base], {})

    def check_goldens(self, source, extra_env):
        for name, args in GOLDEN_CASES:
            with self.subTest(name):
                rc, out, err = run(["query"] + args + source, extra_env)
                check(rc == 0 and err == "", "%s: exit %d: %s" % (name, rc, err))
                check_golden(name, comparable(name, out))

    def test_table_lists_six_vms_under_their_boards(self):
        rc, out, _ = run(["query", "--simulate", HOST, "vgpu"], FROZEN)
        check(rc == 0, "exit %d" % rc)
        lines = out.splitlines()
        check(all(len(line) == 79 for line in lines[1:]), "rows of 79 columns: %r" % lines)
        boards = [i for i, line in enumerate(lines) if re.match(r"^\|   [01]  NVIDIA H100", line)]
        check(len(boards) == 2, "two boards: %r" % lines)
        instances = [line for line in lines if re.match(r"^\|      \d{10}  GRID H100-", line)]
        check(len(instances) == 6, "six instances: %r" % instances)
        # Each board's three instances follow it, before the board's closing rule.
        if len(boards) == 2:
            first = lines[boards[0] + 1:boards[1]]
            check(sum("GRID H100-" in line for line in first) == 3 and
                  first[-1].startswith("+----"), "GPU 0's block: %r" % first)

    def test_csv_rows_and_selection(self):
        rc, every, _ = run(["query", "--simulate", HOST, "--query-vgpu=gpu_index,vm_id",
                            "--format=csv,noheader"], FROZEN)
        rows = [line.split(", ") for line in every.splitlines()]
        check(rc == 0 and len(rows) == 6, "six rows: %r" % every)
        check([r[0] for r in rows] == ["0"] * 3 + ["1"] * 3, "board order: %r" % rows)
        check(len({r[1] for r in rows}) == 6, "six different VMs: %r" % rows)
        # -i by index, UUID and bus id name the same board.
        _, uuid, _ = run(["query", "--simulate", HOST, "--query-gpu=uuid",
                          "--format=csv,noheader", "-i", "1"], FROZEN)
        by = {}
        for ident in ("1", uuid.strip(), "00000000:2A:00.0"):
            rc, out, err = run(["query", "--simulate", HOST, "--query-vgpu=gpu_index,vm_id",
                                "--format=csv,noheader", "-i", ident], FROZEN)
            check(rc == 0, "-i %s: exit %d: %s" % (ident, rc, err))
            by[ident] = out
        check(len(set(by.values())) == 1 and by["1"].count("\n") == 3 and
              all(line.startswith("1, ") for line in by["1"].splitlines()),
              "-i 1 by index, uuid, bus id: %r" % by)
        # nvidia-smi habit: the flag without the command word.
        rc, bare, _ = run(["--simulate", HOST, "--query-vgpu=gpu_index,vm_id",
                           "--format=csv,noheader"], FROZEN)
        check(rc == 0 and bare == every, "no command word: %r" % bare)

    def test_loop_prints_a_block_per_interval(self):
        p = subprocess.Popen([GPUSCOPE, "query", "--simulate", HOST, "--query-vgpu=vgpu_id",
                              "--format=csv", "-lms", "200"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env_with())
        lines = [p.stdout.readline() for _ in range(1 + 3 * 6)]
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=20)
        check(p.returncode == 0, "loop exit %s: %s" % (p.returncode, err))
        check(lines[0] == "vgpu_id\n" and all(re.match(r"^\d+\n$", l) for l in lines[1:]),
              "header once, then ids: %r" % lines)

    def test_no_vgpu(self):
        # Bare metal and a guest: no board hosts virtual GPUs.
        for scenario in ("training-8xh100", GUEST):
            for args in (["vgpu"], ["vgpu", "-q"], ["--query-vgpu=vgpu_id", "--format=csv"]):
                rc, out, err = run(["query", "--simulate", scenario] + args, FROZEN)
                check(rc == 3 and out == "" and err == NOT_VGPU,
                      "%s %s: rc=%d out=%r err=%r" % (scenario, args, rc, out, err))
        # A vGPU host whose selection has no vGPU board is the same; a GPU that
        # does not exist is -i's error (exit 6), as for --query-gpu.
        rc, out, err = run(["query", "--simulate", HOST, "vgpu", "-i", "7"], FROZEN)
        check(rc == 6 and out == "" and "7" in err, "-i 7: rc=%d err=%r" % (rc, err))

    def test_errors(self):
        rc, out, err = run(["query", "--simulate", HOST, "--query-vgpu=vm_id,bogus",
                            "--format=csv"])
        check(rc == 2 and out == "" and err == 'Field "bogus" is not a valid field to query.\n',
              "unknown field: rc=%d out=%r err=%r" % (rc, out, err))
        rc, _, err = run(["query", "--query-vgpu=VM_ID"])
        check(rc == 2 and err == 'Field "VM_ID" is not a valid field to query.\n',
              "case-sensitive: %r" % err)
        # A --query-gpu field is not a vGPU field, and the reverse.
        rc, _, err = run(["query", "--query-vgpu=utilization.gpu,pci.bus_id"])
        check(rc == 2 and err == 'Field "pci.bus_id" is not a valid field to query.\n',
              "gpu field in --query-vgpu: %r" % err)
        rc, _, err = run(["query", "--query-gpu=vm_id"])
        check(rc == 2 and err == 'Field "vm_id" is not a valid field to query.\n',
              "vgpu field in --query-gpu: %r" % err)
        for args in (["-q"], ["--query-gpu=index", "--query-vgpu=vm_id"],
                     ["vgpu", "--query-gpu=index"], ["vgpu", "-q", "--query-vgpu=vm_id"]):
            rc, out, err = run(["query", "--simulate", HOST] + args)
            check(rc == 2 and out == "" and err.strip(), "%s: rc=%d err=%r" % (args, rc, err))

    def test_help(self):
        rc, out, _ = run(["query", "--help-query-vgpu"])
        check(rc == 0 and out.startswith(
            'List of valid properties to query for the switch "--query-vgpu=":\n'),
            "help header: %r" % out[:80])
        for field in ["timestamp"] + ALL_FIELDS.split(","):
            check('\n"%s"\n' % field in out, "help lacks %s" % field)
        rc, out, _ = run(["query", "--help"])
        check(rc == 0 and "--query-vgpu" in out and "query vgpu" in out, "usage: %r" % out)
        # docs/cli.md's field table names every field.
        with open(os.path.join(SOURCE_DIR, "docs", "cli.md")) as f:
            doc = f.read()
        for field in ["timestamp"] + ALL_FIELDS.split(","):
            check("`%s`" % field in doc, "docs/cli.md lacks %s" % field)


if __name__ == "__main__":
    main()
