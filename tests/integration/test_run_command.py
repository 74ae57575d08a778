#!/usr/bin/env python3
"""`gpuscope run -- CMD` on the simulator, with real process trees.

The command is tests/integration/run_job.py: it shows its own processes as
GPU processes through the simulator's control file (`attach`, sim/README.md)
on a node of three idle H100s, then sleeps and exits as told. Checked:

- the report (--json, the `report job` contract): the GPUs the command held
  and no other, its pid in "job", busy and peak memory per GPU; the notes:
  a GPU held idle (gpus_unused), a GPU CUDA_VISIBLE_DEVICES gave it and it
  never touched (visible_untouched); the human and Markdown formats;
- exit status passthrough: 0, 3, and 143 for a command killed by SIGTERM;
- SIGTERM sent to gpuscope reaches the command (which exits 42 on it), and
  the report is still written;
- the command dies when gpuscope is killed (SIGKILL);
- a grandchild whose parent exited (reparented to gpuscope, the subreaper)
  is counted;
- another user's process on the command's GPU is named as sharing it, its
  GPU alone is not reported, and the shared GPU is split by measured use;
- a process on a MIG instance makes the instance a row, not its parent GPU,
  and the processes on the other instances do not share it;
- bad input: CMD not found 127, not executable 126, no driver (the command
  is not started), no CMD 2; a command that uses no GPU gets one line;
- --live draws nothing when stderr is not a terminal.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~60 s.
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, check, check_exit, clean_env, main,  # noqa: E402
                              stop_process, temp_dir, wait_until)

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_job.py")
GIB = 1024 ** 3
SCENARIO = """description: Three idle H100 GPUs (gpuscope run tests).
seed: 7
gpus:
  - model: h100-sxm
    count: 3
    workload:
      - {at: 0, kind: idle}
"""


class RunCommandTest(unittest.TestCase):
    def setUp(self):
        self.dir = temp_dir(self, "gpuscope-run-")
        self.scenario = os.path.join(self.dir, "three.yaml")
        with open(self.scenario, "w") as f:
            f.write(SCENARIO)
        self.control = os.path.join(self.dir, "control")
        open(self.control, "w").close()

    def env(self, extra=None):
        env = clean_env({"GPUSCOPE_SIM_CONTROL": self.control})
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.update(extra or {})
        return env

    def argv(self, options, steps):
        return ([GPUSCOPE, "run", "--simulate", self.scenario, "--interval", "250ms"] + options
                + ["--", sys.executable, JOB] + steps)

    def run_job(self, options, steps, env=None):
        p = subprocess.run(self.argv(options, steps), capture_output=True, text=True,
                           env=self.env(env), timeout=60)
        return p.returncode, p.stdout, p.stderr

    def json_report(self, steps, env=None, expected=0):
        path = os.path.join(self.dir, "report.json")
        code, out, err = self.run_job(["--json", "--report", path], steps, env)
        check_exit("gpuscope run", code, out + err, expected)
        with open(path) as f:
            return json.load(f), out, err

    def test_report_gpus_and_notes(self):
        ready = os.path.join(self.dir, "ready")
        report, out, _ = self.json_report(
            ["ready", ready, "attach", "0", "30", "0.8", "attach", "1", "20", "0",
             "sleep", "3", "exit", "0"], env={"CUDA_VISIBLE_DEVICES": "0,1,2"})
        with open(ready) as f:
            pid = int(f.read())
        check(report["job"] == "run %d" % pid, report["job"])
        check("simulator" in report["source"], report["source"])
        gpus = {g["gpu"]: g for g in report["gpus"]}
        check(sorted(gpus) == [0, 1], "GPUs %s" % sorted(gpus))
        check(gpus[0]["busy_ratio"] > 0.5, gpus[0])
        check(gpus[1]["busy_ratio"] < 0.01, gpus[1])
        check(abs(gpus[0]["memory_peak_bytes"] - 30 * GIB) < GIB, gpus[0])
        check(abs(gpus[1]["memory_peak_bytes"] - 20 * GIB) < GIB, gpus[1])
        check(gpus[0]["split"] == "sole holder", gpus[0])
        check(report["end"] - report["start"] >= 3, report)
        check(0 < report["gpu_hours"] * 3600 <= 2 * (report["end"] - report["start"]), report)
        notes = {n["kind"]: n["text"] for n in report["notes"]}
        check("GPU 1 on" in notes.get("gpus_unused", ""), notes)
        check("never touched 1 (GPU 2)" in notes.get("visible_untouched", ""), notes)
        check("shared" not in notes, notes)
        check(out == "", "stdout is the command's: %r" % out)

    def test_human_and_markdown_formats(self):
        steps = ["attach", "0", "10", "0.5", "sleep", "2", "exit", "0"]
        code, out, err = self.run_job([], steps)
        check_exit("gpuscope run", code, out + err)
        check("exited with status 0 after" in err and "Report for run " in err, err)
        check("\n0    " in err and "\n1    " not in err, err)
        code, out, err = self.run_job(["--markdown", "--live"], steps)
        check_exit("gpuscope run --markdown", code, out + err)
        check("## gpuscope report: run " in err and "\n| 0 | " in err, err)
        # --live draws only on a terminal: here stderr is a pipe.
        check("\r" not in err and "\x1b[" not in err, "live line drawn into a pipe: %r" % err)

    def test_exit_status_passthrough(self):
        for steps, expected in ((["exit", "0"], 0), (["exit", "3"], 3),
                                (["attach", "0", "5", "0.5", "sleep", "1", "kill", "SIGTERM"],
                                 128 + signal.SIGTERM)):
            code, out, err = self.run_job([], steps)
            check_exit("gpuscope run %s" % steps, code, out + err, expected)
        check("killed by signal 15 (status 143)" in err, err)

    def test_sigterm_reaches_the_command(self):
        ready = os.path.join(self.dir, "ready")
        trapped = os.path.join(self.dir, "trapped")
        report = os.path.join(self.dir, "report.json")
        proc = subprocess.Popen(
            self.argv(["--json", "--report", report],
                      ["trap", trapped, "42", "attach", "0", "10", "0.5", "ready", ready,
                       "sleep", "30"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env())
        try:
            wait_until(lambda: os.path.exists(ready), "the command to start", timeout=20)
            time.sleep(1)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=20)
        finally:
            stop_process(proc, signal.SIGKILL)
        check_exit("gpuscope run (SIGTERM)", proc.returncode, out + err, 42)
        with open(trapped) as f:
            check(f.read() == "got signal %d\n" % signal.SIGTERM, "trap file")
        with open(report) as f:
            doc = json.load(f)
        check([g["gpu"] for g in doc["gpus"]] == [0], doc)

    def test_command_dies_with_gpuscope(self):
        ready = os.path.join(self.dir, "ready")
        proc = subprocess.Popen(self.argv([], ["ready", ready, "sleep", "60"]),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=self.env())
        try:
            wait_until(lambda: os.path.exists(ready) and os.path.getsize(ready) > 0,
                       "the command to start", timeout=20)
            with open(ready) as f:
                pid = int(f.read())
            proc.kill()  # SIGKILL: gpuscope cannot pass anything on
            proc.wait()
        finally:
            stop_process(proc, signal.SIGKILL)

        def gone():
            try:
                with open("/proc/%d/stat" % pid) as f:
                    return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
            except OSError:
                return True
        wait_until(gone, "the command to die with gpuscope (PR_SET_PDEATHSIG)", timeout=10)

    def test_reparented_grandchild_is_counted(self):
        report, _, _ = self.json_report(["grandchild", "3", "1", "25", "0.6", "sleep", "4",
                                         "exit", "0"])
        gpus = {g["gpu"]: g for g in report["gpus"]}
        check(sorted(gpus) == [1], "GPUs %s" % sorted(gpus))
        check(abs(gpus[1]["memory_peak_bytes"] - 25 * GIB) < GIB, gpus[1])
        check(gpus[1]["busy_ratio"] > 0.3, gpus[1])

    def test_other_users_process_is_not_counted(self):
        # Another user's process (nobody's when the test runs as root).
        as_nobody = (lambda: os.setuid(65534)) if os.getuid() == 0 else None
        other = subprocess.Popen(["sleep", "60"], preexec_fn=as_nobody)
        self.addCleanup(stop_process, other, signal.SIGKILL)
        report, _, _ = self.json_report(
            ["attach", "0", "20", "0.6", "attach-pid", str(other.pid), "0", "10", "0.3",
             "attach-pid", str(other.pid), "2", "10", "0.5", "sleep", "3", "exit", "0"])
        check([g["gpu"] for g in report["gpus"]] == [0], report["gpus"])
        gpu = report["gpus"][0]
        check(gpu["split"] == "measured", gpu)
        wall = report["end"] - report["start"]
        # The other process used a third of GPU 0's SM time: the command is
        # charged for its part only.
        check(report["gpu_hours"] * 3600 < 0.85 * wall, (report["gpu_hours"] * 3600, wall))
        notes = {n["kind"]: n["text"] for n in report["notes"]}
        shared = notes.get("shared", "")
        check("GPU 0: pid %d (sleep" % other.pid in shared, notes)
        check("GPU 2" not in shared, shared)
        if os.getuid() == 0:
            check("user nobody" in shared, shared)

    def test_mig_instance_is_its_own_row(self):
        # mixed-node's GPU 7 is in MIG mode (3g.40gb, 2g.20gb, 1g.10gb); other
        # processes run on the first two instances.
        path = os.path.join(self.dir, "mig.json")
        argv = [GPUSCOPE, "run", "--simulate", "mixed-node", "--interval", "250ms", "--json",
                "--report", path, "--", sys.executable, JOB, "attach", "7/2", "5", "0.6",
                "sleep", "3"]
        p = subprocess.run(argv, capture_output=True, text=True, env=self.env(), timeout=60)
        check_exit("gpuscope run (MIG)", p.returncode, p.stdout + p.stderr)
        with open(path) as f:
            report = json.load(f)
        check(len(report["gpus"]) == 1, report["gpus"])
        gpu = report["gpus"][0]
        check(gpu["gpu"] == 7 and gpu["split"] == "sole holder", gpu)
        check(gpu["mig_profile"] == "1g.10gb", gpu)  # the instance, as the table says
        # The instance's memory, not the whole GPU's.
        check(gpu["memory_total_bytes"] < 12 * GIB, gpu)
        check(abs(gpu["memory_peak_bytes"] - 5 * GIB) < 0.5 * GIB, gpu)
        check(all(n["kind"] != "shared" for n in report["notes"]), report["notes"])

    def test_bad_input(self):
        code, _, err = self.run_job([], [])  # python3 run_job.py with no steps: fine
        check(code == 0, err)
        argv = [GPUSCOPE, "run", "--simulate", self.scenario, "--"]
        p = subprocess.run(argv + ["no-such-command-xyz"], capture_output=True, text=True,
                           env=self.env(), timeout=30)
        check(p.returncode == 127 and "no-such-command-xyz: command not found" in p.stderr,
              (p.returncode, p.stderr))
        p = subprocess.run(argv + [self.scenario], capture_output=True, text=True,
                           env=self.env(), timeout=30)
        check(p.returncode == 126 and "not an executable" in p.stderr, (p.returncode, p.stderr))
        p = subprocess.run(argv[:-1], capture_output=True, text=True, env=self.env(), timeout=30)
        check(p.returncode == 2 and "no command to run" in p.stderr, (p.returncode, p.stderr))
        marker = os.path.join(self.dir, "started")
        p = subprocess.run(argv + ["touch", marker], capture_output=True, text=True,
                           env=self.env({"GPUSCOPE_SIM_INIT_ERROR": "DRIVER_NOT_LOADED"}),
                           timeout=30)
        check(p.returncode not in (0, 126, 127) and "was not started" in p.stderr,
              (p.returncode, p.stderr))
        check(not os.path.exists(marker), "the command ran without a driver")

    def test_command_without_gpu_gets_one_line(self):
        p = subprocess.run([GPUSCOPE, "run", "--simulate", self.scenario, "--", "true"],
                           capture_output=True, text=True, env=self.env(), timeout=30)
        check_exit("gpuscope run true", p.returncode, p.stdout + p.stderr)
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and "true used no GPU" in lines[0], p.stderr)


if __name__ == "__main__":
    main()
