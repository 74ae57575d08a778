#!/usr/bin/env python3
"""The CLI contract (issue 44, docs/cli.md): every subcommand, given the usual
mistakes, answers with the exit code of the one table `gpuscope --help` prints
and with one message style: an unknown option names the command and suggests
the near miss, a missing value points at the command's --help, a missing
scenario exits 6 everywhere and lists the shipped ones, `-i 9` exits 6
everywhere, durations say what a bare number means, and a lost GPU (XID 79)
exits 15 in the summary, query, health and diagnose with one sentence.

Env: GPUSCOPE_BUILD_DIR (with gpuscope and sim/), GPUSCOPE_SOURCE_DIR. stdlib only.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, GPUSCOPE, SOURCE_DIR, check, clean_env,  # noqa: E402
                             main, run, sanitized, stop_process)

LOST = os.path.join(SOURCE_DIR, "sim", "scenarios", "health", "xid-79-lost.yaml")
AFTER_LOSS = {"GPUSCOPE_SIM_START_TIME": "20"}  # GPU 3 fell off the bus at t = 10 s
UNKNOWN = re.compile(r'^Unknown option "(?P<typed>[^"]+)" for gpuscope(?P<command>( [a-z]+)*)'
                     r'(; did you mean (?P<near>\S+)\?|\.) See gpuscope(?P=command) --help\.$')
MISSING_VALUE = re.compile(r"^Option (?P<flag>\S+) needs a value; see gpuscope( [a-z]+)* --help\.$")


def exit_table():
    """{name: (code, meaning)} from `gpuscope --help`: the tests check codes by name."""
    code, out, _ = run(["--help"])
    check(code == 0, "--help exits %d" % code)
    start = out.index("Exit status")
    table = {}
    for line in out[start:].splitlines()[1:]:
        m = re.match(r"^  (\d+)\s+(\S+(?: \S+)?)\s{2,}(.+)$", line)
        if m:
            table[m.group(2)] = (int(m.group(1)), m.group(3))
    return table


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


class CliContractTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = exit_table()
        cls.codes = {name: code for name, (code, _) in cls.table.items()}

    def expect(self, args, name, pattern=None, env=None, timeout=60):
        """Runs gpuscope ARGS; checks the exit code is the table's NAME and the
        last stderr line matches PATTERN (a regex or a substring)."""
        code, out, err = run(args, env=env, timeout=timeout)
        want = self.codes[name]
        check(code == want, "gpuscope %s: exit %d, want %d (%s)\n%s" %
              (" ".join(args), code, want, name, err[-2000:]))
        line = last_line(err)
        if isinstance(pattern, re.Pattern):
            check(pattern.match(line), "gpuscope %s: %r does not follow the style" %
                  (" ".join(args), line))
        elif pattern:
            check(pattern in err, "gpuscope %s: %r not in stderr:\n%s" %
                  (" ".join(args), pattern, err[-2000:]))
        return out, err

    def test_the_table(self):
        check({"ok": 0, "health warn": 1, "usage": 2, "not supported": 3, "no permission": 4,
               "not found": 6, "no driver": 9, "GPU lost": 15, "health failed": 20,
               "unreachable": 21, "internal": 255}.items() <= self.codes.items(),
              "nvidia-smi's return codes where it has one: %s" % self.codes)
        with open(os.path.join(SOURCE_DIR, "docs", "cli.md")) as f:
            doc = f.read()
        for name, (code, meaning) in self.table.items():
            row = "| %d | %s | %s |" % (code, name, meaning)
            check(row in doc, "docs/cli.md lacks the row %s" % row)

    def test_unknown_options_suggest_the_near_miss(self):
        sim = ["--simulate", "training-8xh100"]
        cases = [
            (["--simulat", "x"], "--simulate"),
            (["query", "--query-gpuu=index"], "--query-gpu"),
            (["serve", "--adress", ":0"] + sim, "--address"),
            (["health", "--jsn"] + sim, "--json"),
            (["diagnose", "--windw", "5m"] + sim, "--window"),
            (["top", "--intervl", "1s"] + sim, "--interval"),
            (["baseline", "--promethus", "http://127.0.0.1:1"], "--prometheus"),
            (["report", "job", "1", "--agnt", "http://127.0.0.1:1"], "--agent"),
            (["docs", "--metrics"], None),
            (["version", "--verbose"], None),
        ]
        for args, near in cases:
            _, err = self.expect(args, "usage", UNKNOWN)
            m = UNKNOWN.match(last_line(err))
            check(m.group("near") == near, "%s: suggested %r, want %r" %
                  (args, m.group("near"), near))
        _, err = self.expect(["helth"], "usage", "did you mean health?")

    def test_missing_values(self):
        for args in (["query", "--query-gpu=index", "-i"], ["serve", "-a"], ["health", "--watch"],
                     ["diagnose", "--window"], ["top", "-d"], ["report", "job", "--since"],
                     ["baseline", "--prometheus"], ["--simulate"]):
            self.expect(args, "usage", MISSING_VALUE)

    def test_report_without_an_id_says_so(self):
        self.expect(["report", "job", "--agent", "http://127.0.0.1:1"], "usage",
                    "report job: the job ID is missing")
        self.expect(["report", "pod", "--agent", "http://127.0.0.1:1"], "usage",
                    "the pod NS/NAME is missing")

    def test_a_missing_scenario_exits_not_found_everywhere(self):
        for args in ([], ["query", "--query-gpu=index"], ["health"], ["health", "--json"],
                     ["diagnose"], ["top", "--once"], ["serve", "-a", "127.0.0.1:0"]):
            _, err = self.expect(args + ["--simulate", "nosuch"], "not found",
                                 'No scenario "nosuch" is shipped', timeout=30)
            check("training-8xh100" in err and "fault-drill" in err,
                  "%s: the shipped scenarios are not listed: %s" % (args, err))
        self.expect(["query", "--query-gpu=index", "--simulate", "/nonexistent/x.yaml"],
                    "not found", "/nonexistent/x.yaml does not exist")
        # The simulator named by its library, the scenario by the environment: serve too.
        sim_lib = os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1")
        self.expect(["serve", "-a", "127.0.0.1:0", "--nvml-lib", sim_lib], "not found",
                    'No scenario "nosuch" is shipped', env={"GPUSCOPE_SIM_SCENARIO": "nosuch"},
                    timeout=30)

    def test_a_bad_scenario_exits_alike_everywhere(self):
        """A scenario the parser refuses: FILE:LINE and the usage code (2) from
        every command, serve too (it served 0 GPUs and retried forever)."""
        with tempfile.TemporaryDirectory(prefix="gpuscope-bad-") as folder:
            bad = os.path.join(folder, "bad.yaml")
            with open(bad, "w") as f:
                f.write("description: bad\ngpus: [ {model: \n  - h100-sxm\n")
            code, _, err = run(["health", "--simulate", bad])
            check(code == 2 and bad + ":3:" in err, (code, err))
            name = "usage"
            for args in (["query", "--query-gpu=index"], ["top", "--once"], ["-L"],
                         ["diagnose", "--window", "1m"],
                         ["serve", "-a", "127.0.0.1:0"]):
                self.expect(args + ["--simulate", bad], name, bad + ":3:", timeout=30)
            sim_lib = os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1")
            self.expect(["serve", "-a", "127.0.0.1:0", "--nvml-lib", sim_lib], name,
                        bad + ":3:", env={"GPUSCOPE_SIM_SCENARIO": bad}, timeout=30)

    def test_no_such_gpu_exits_not_found_everywhere(self):
        sim = ["--simulate", "training-8xh100", "-i", "9"]
        # diagnose says it before sampling: --live would sample 10 minutes first.
        for args in (["query", "--query-gpu=index"], ["health"],
                     ["diagnose", "--live", "--window", "10m"], ["top", "--once"]):
            self.expect(args + sim, "not found", '"9"', timeout=30)

    def test_durations_say_the_bare_unit(self):
        sim = ["--simulate", "training-8xh100"]
        self.expect(["top", "-d", "5000"] + sim, "usage",
                    "-d: '5000' is 5000s (a bare number is seconds); want 100ms to 1h "
                    "(write 5000ms for milliseconds)")
        self.expect(["diagnose", "--window", "999h"] + sim, "usage",
                    "--window: '999h' is 999h; want 1s to 1d")
        self.expect(["health", "--watch", "100000"] + sim, "usage", "a bare number is seconds")
        self.expect(["health", "--watch", "soon"] + sim, "usage", "a bare number is seconds")
        self.expect(["serve", "-c", "5"] + sim, "usage", "a bare number is milliseconds")
        self.expect(["serve", "-c", "soon"] + sim, "usage", "a bare number is ms")
        for command, flag in (("top", "--interval"), ("health", "--watch"),
                              ("diagnose", "--window")):
            code, out, _ = run([command, "--help"])
            # The option's own line, not a usage line that also names it.
            line = [x for x in out.splitlines()
                    if x.lstrip().startswith("-") and flag in x and "DURATION" in x]
            text = out[out.index(line[0]):] if line else ""
            check(code == 0 and "a bare number is" in text[:400] and "seconds" in text[:400],
                  "%s --help does not say what a bare number of %s means:\n%s" %
                  (command, flag, out))
        code, out, _ = run(["serve", "--help"])
        check("a bare number is milliseconds" in out, "serve --help: the bare unit")

    def test_health_watch_keeps_watching_until_interrupted(self):
        proc = subprocess.Popen([GPUSCOPE, "health", "--watch", "1s", "--simulate",
                                 "training-8xh100"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=clean_env())
        try:
            time.sleep(4.5)
            check(proc.poll() is None, "health --watch 1s exited by itself")
        finally:
            stop_process(proc, signal.SIGINT)
        out, _ = proc.communicate()
        reports = out.count(": OK (8 GPUs")
        check(proc.returncode == 0 and reports >= 3,
              "health --watch: exit %s, %d reports:\n%s" % (proc.returncode, reports, out))
        code, out, _ = run(["health", "--watch", "1s", "--count", "2", "--json", "--simulate",
                            "training-8xh100"])
        check(code == 0 and out.count('"verdict": "ok"') >= 2 and out.count('"hostname"') == 2,
              "--count 2: exit %d\n%s" % (code, out[-500:]))

    def test_a_lost_gpu_fails_every_command(self):
        sim = ["--simulate", LOST]
        sentence = re.compile(r"GPU 3 (\([0-9A-F:.]+\) )?is lost \(.*XID 79.*\)\. Drain the node")
        for args in ([], ["query", "--query-gpu=index,temperature.gpu", "--format=csv"],
                     ["health"], ["health", "--json"], ["diagnose", "--window", "1m"]):
            out, err = self.expect(args + sim, "GPU lost", env=AFTER_LOSS)
            check(sentence.search(err), "%s: no lost-GPU sentence on stderr:\n%s" % (args, err))
        # The other GPUs are still shown; diagnose names the loss as its finding.
        out, _ = self.expect(["query", "--query-gpu=index", "--format=csv,noheader"] + sim,
                             "GPU lost", env=AFTER_LOSS)
        check(out.splitlines()[:3] == ["0", "1", "2"], "query rows: %r" % out)
        out, _ = self.expect(["diagnose", "--window", "1m", "-i", "3"] + sim, "GPU lost",
                             env=AFTER_LOSS)
        check("GPU lost: GPU 3" in out and "no verdict yet" not in out, out)
        # Before the loss the same commands succeed.
        self.expect(["query", "--query-gpu=index"] + sim, "ok",
                    env={"GPUSCOPE_SIM_START_TIME": "0"})

    def test_diagnose_shows_progress_on_long_steps(self):
        # 12 scenario hours of 8 GPUs step for several seconds on any machine; under ASan
        # 12 hours outlast the test, and 1 hour steps for longer than a second.
        window = "1h" if sanitized() else "12h"
        _, err = self.expect(["diagnose", "--window", window, "-i", "0", "--simulate",
                              "training-8xh100"], "ok", timeout=280)
        check(re.search(r"gpuscope diagnose: simulated \S+ of %s" % window, err),
              "no progress on stderr:\n%s" % err[-1000:])


if __name__ == "__main__":
    main()
