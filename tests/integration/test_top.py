#!/usr/bin/env python3
"""`gpuscope top` end to end on the simulator: one --once frame of the
training scenario, and the live view under a pseudo-terminal (redraws with
the clear-screen sequence, restores the cursor and exits 0 on SIGINT).

Env: GPUSCOPE_BUILD_DIR (with gpuscope and sim/). stdlib only.
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE, check, main, sanitizer_report  # noqa: E402

CLEAR = b"\x1b[H\x1b[2J"
RESTORE_CURSOR = b"\x1b[?25h"


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("GPUSCOPE_")}


def read_available(fd, out, until, enough=None):
    """Reads fd into out until the time `until` (or until enough(out));
    False once the child closed the terminal."""
    while time.time() < until and not (enough and enough(out)):
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        out.extend(chunk)
    return True


class TopTest(unittest.TestCase):
    def test_once(self):
        proc = subprocess.run(
            [GPUSCOPE, "top", "--simulate", "training-8xh100", "--once", "--no-color"],
            capture_output=True, text=True, timeout=30, env=clean_env())
        check(proc.returncode == 0, "top --once exit %d: %s" % (proc.returncode, proc.stderr))
        check(sanitizer_report(proc.stderr) is None, "top --once: " + proc.stderr)
        out = proc.stdout
        gpus = re.findall(r"^GPU (\d+)  (.+?)\s{2,}OK$", out, re.M)
        check([int(g[0]) for g in gpus] == list(range(8)), "8 GPUs listed, got %r" % (gpus,))
        check(all("H100" in g[1] for g in gpus), "H100 names: %r" % (gpus,))
        check("\x1b[" not in out, "--once --no-color prints no escape codes")
        check("simulated node (scenario training-8xh100)" in out, "simulated header")
        check("Processes:" in out, "process table")
        check(re.search(r"SM active \d+%", out) is not None,
              "GPM SM activity on H100: " + out[:800])

    def test_bad_args(self):
        proc = subprocess.run([GPUSCOPE, "top", "--simulate", "training-8xh100",
                               "--interval", "5ms"],
                              capture_output=True, text=True, timeout=30, env=clean_env())
        check(proc.returncode == 2, "bad interval exits 2, got %d" % proc.returncode)
        check(sanitizer_report(proc.stderr) is None, "top --interval 5ms: " + proc.stderr)
        check("--interval" in proc.stderr, "error names the option: " + proc.stderr)

    def test_live_under_pty(self):
        pid, fd = pty.fork()
        if pid == 0:
            env = clean_env()
            os.execve(GPUSCOPE, [GPUSCOPE, "top", "--simulate", "mixed-node",
                                 "--interval", "300ms"], env)
        out = bytearray()
        # Two redraws, however long a loaded machine takes to start and draw.
        read_available(fd, out, time.time() + 60, lambda o: o.count(CLEAR) >= 2)
        os.kill(pid, signal.SIGINT)
        deadline = time.time() + 10
        status = None
        while time.time() < deadline:
            alive = read_available(fd, out, time.time() + 0.1)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                read_available(fd, out, time.time() + 0.2)
                break
            if not alive:
                time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            check(False, "top did not exit within 10 s of SIGINT")
        os.close(fd)
        check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
              "top exits 0 on SIGINT, status %r" % status)
        check(out.count(CLEAR) >= 2, "at least two redraws, got %d" % out.count(CLEAR))
        report = sanitizer_report(out.decode(errors="replace"))
        check(report is None, "top under a pty: %s" % report)
        check(RESTORE_CURSOR in out, "cursor restored")
        check(out.rfind(RESTORE_CURSOR) > out.rfind(CLEAR), "cursor restored after the last frame")
        # A row per GPU, the vendor left out to fit 80 columns.
        check(b" L4 " in out and b"A100-SXM4-80GB" in out, "mixed-node GPUs drawn")


if __name__ == "__main__":
    main()
