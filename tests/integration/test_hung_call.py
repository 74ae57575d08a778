#!/usr/bin/env python3
"""A wedged driver call on one GPU: scrapes keep answering.

`gpuscope serve --simulate training-8xh100 -c 250` with the simulator's
control file; the test injects `inject 2 hang nvmlDeviceGetPowerUsage 20`, so
GPU 2's power call sleeps 20 s of wall time. During the stall, 50 scrapes of
/metrics must all answer (a functional bound of one second each, not a
benchmark), each showing gpuscope_collector_stale{gpu="2"} 1 with GPU 2's last
values still served, while the other GPUs' sample timestamps keep advancing.
Then SIGTERM, with the call still hung: serve must exit cleanly (status 0)
within a functional bound of 2 s; it must not wait for the wedged call.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~20-30 s.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (Serve, check, main, parse_exposition, temp_dir,  # noqa: E402
                              wait_until)

SCRAPES = 50
SCRAPE_BOUND_S = 1.0
EXIT_BOUND_S = 2.0


def series(text, name):
    """{gpu: value} of a family's samples."""
    return {s.labels["gpu"]: s.value for s in parse_exposition(text).find(name)}


def scrape(serve):
    started = time.monotonic()
    status, _, text = serve.get("/metrics")
    took = time.monotonic() - started
    check(status == 200, "scrape answered %s" % status)
    return took, text


def wait_stale(serve, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        _, text = scrape(serve)
        if series(text, "gpuscope_collector_stale").get("2") == 1:
            return text
        time.sleep(0.1)
    raise AssertionError("GPU 2 never went stale:\n" + serve.output()[-2000:])


def processes_with(marker):
    """The pids whose environment holds `marker` (what a test started)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(pid))
        except OSError:
            pass  # gone, or not ours to read
    return pids


class HungCallTest(unittest.TestCase):
    def setUp(self):
        self.control = os.path.join(temp_dir(self, "gpuscope-hung-"), "control")
        open(self.control, "w").close()
        self.env = {"GPUSCOPE_SIM_CONTROL": self.control}

    def start_serve(self):
        """serve on the simulator, stopped when the test ends, whatever happened.
        A failed test kills it (its exit status is then no news)."""
        # The full profile: the test reads every GPU's last-sample timestamp
        # and a stale flag of 0 before the hang (the lean default leaves both out).
        serve = Serve(["--simulate", "training-8xh100", "-c", "250", "--profile", "full"],
                      env=self.env)
        self.addCleanup(lambda: serve.stop(sig=signal.SIGKILL, timeout=5, expect_code=None))
        return serve

    def test_scrapes_answer_and_sigterm_stops_during_a_hung_call(self):
        serve = self.start_serve()
        serve.wait_healthy()
        _, before = scrape(serve)
        check(series(before, "gpuscope_collector_stale") == {str(g): 0.0 for g in range(8)},
              "stale before the hang: %s" % series(before, "gpuscope_collector_stale"))
        with open(self.control, "a") as f:
            f.write("inject 2 hang nvmlDeviceGetPowerUsage 20\n")
        injected = time.monotonic()
        first = wait_stale(serve)
        first_ts = series(first, "gpuscope_gpu_last_sample_timestamp_seconds")
        slowest = 0.0
        for i in range(SCRAPES):
            took, text = scrape(serve)
            slowest = max(slowest, took)
            check(took < SCRAPE_BOUND_S, "scrape %d took %.2f s" % (i, took))
            check(series(text, "gpuscope_collector_stale").get("2") == 1,
                  "scrape %d: GPU 2 not stale" % i)
            check('DCGM_FI_DEV_POWER_USAGE{gpu="2"' in text, "scrape %d: GPU 2's last values "
                  "are gone" % i)
            time.sleep(0.1)
        check(time.monotonic() - injected < 20, "the scrapes outlasted the stall")
        last_ts = series(text, "gpuscope_gpu_last_sample_timestamp_seconds")
        for gpu in ("0", "1", "3", "4", "5", "6", "7"):
            check(last_ts[gpu] > first_ts[gpu], "GPU %s stopped updating: %s -> %s"
                  % (gpu, first_ts[gpu], last_ts[gpu]))
            check(series(text, "gpuscope_collector_stale")[gpu] == 0, "GPU %s stale" % gpu)
        check(last_ts["2"] == first_ts["2"], "hung GPU 2 advanced")
        status, _, body = serve.get("/health")
        check(status == 200, "one hung GPU of 8 keeps /health at 200: %s %s" % (status, body))
        print("%d scrapes during the stall, slowest %.3f s" % (SCRAPES, slowest))
        check(time.monotonic() - injected < 15, "no hang left to stop under")
        stopping = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        try:
            code = serve.proc.wait(EXIT_BOUND_S)
        except subprocess.TimeoutExpired:
            raise AssertionError("serve still running %.1f s after SIGTERM during a hung "
                                 "call:\n%s" % (EXIT_BOUND_S, serve.output()[-2000:]))
        took = time.monotonic() - stopping
        check(code == 0, "exit status %s after SIGTERM:\n%s" % (code, serve.output()[-2000:]))
        print("SIGTERM during the hang: exited in %.2f s" % took)

    def test_nothing_started_outlives_a_failed_start(self):
        """A serve that does not start in time (here: at once) is stopped by
        Serve itself: the test that wanted it never holds it to stop it."""
        try:
            with self.assertRaises(AssertionError):
                Serve(["--simulate", "training-8xh100"], env=self.env, timeout=0)
            wait_until(lambda: not processes_with(self.control), "the serve that failed to "
                       "start to be gone", timeout=5)
        finally:
            for pid in processes_with(self.control):  # only when the check above failed
                os.kill(pid, signal.SIGKILL)

if __name__ == "__main__":
    main()
