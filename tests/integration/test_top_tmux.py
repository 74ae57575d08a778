#!/usr/bin/env python3
"""`gpuscope top` in a real terminal emulator: tmux at 80x24 (send-keys,
capture-pane), as nvtop and htop users expect it.

- It draws on the alternate screen; the frame fits 80x24 on mixed-node's 8
  GPUs and 3 MIG instances: the header on top, one row per GPU (all 8),
  the selected GPU's details below, no line wrapped.
- j, the down arrow and k move the selection (the details follow).
- q, Q and Esc quit with exit 0; SIGTERM too. Each leaves the normal screen
  as it was (no frame in it or in the scrollback) with the cursor shown.

Env: GPUSCOPE_BUILD_DIR (with gpuscope and sim/). Needs tmux (scripts/setup.sh).
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
from gpuscope_testlib import GPUSCOPE, check, clean_env, main, need_tool  # noqa: E402

ROW = re.compile(r"^[> ] +([0-7]) \S")


class Tmux:
    """One private tmux server (its own socket) with one 80x24 session."""

    def __init__(self, tmux, command):
        self.tmux = tmux
        self.dir = tempfile.TemporaryDirectory(prefix="gpuscope-top-")
        self.socket = os.path.join(self.dir.name, "tmux.sock")
        # A shell stays after top exits, to read what it left (a dead pane
        # would hide the cursor itself).
        shell = "%s; echo EXIT=$?; sleep 120" % " ".join(command)
        self.run("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "top",
                 shell)

    def run(self, *args):
        return subprocess.run([self.tmux, "-S", self.socket] + list(args), capture_output=True,
                              text=True, timeout=30, env=clean_env()).stdout

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "top")

    def history(self):
        return self.run("capture-pane", "-p", "-S", "-", "-t", "top")

    def flags(self):
        """alternate screen on, cursor shown: "1"/"0" each."""
        return self.run("display-message", "-p", "-t", "top",
                        "#{alternate_on} #{cursor_flag}").split()

    def top_pid(self):
        shell = self.run("display-message", "-p", "-t", "top", "#{pane_pid}").strip()
        with open("/proc/%s/task/%s/children" % (shell, shell)) as f:
            return int(f.read().split()[0])

    def keys(self, *keys):
        self.run("send-keys", "-t", "top", *keys)

    def wait(self, what, predicate, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.1)
        check(False, "%s within %d s; screen:\n%s" % (what, timeout, self.screen()))

    def close(self):
        self.run("kill-server")
        self.dir.cleanup()


def selected_gpu(screen):
    for line in screen.splitlines():
        m = ROW.match(line)
        if m and line.startswith(">"):
            return int(m.group(1))
    return None


class TopTmuxTest(unittest.TestCase):
    def setUp(self):
        self.tmux_path = need_tool("tmux", "tmux")

    def start(self):
        t = Tmux(self.tmux_path, [GPUSCOPE, "top", "--simulate", "mixed-node",
                                  "--interval", "300ms", "--no-color"])
        self.addCleanup(t.close)
        t.wait("the first frame", lambda: len([line for line in t.screen().splitlines()
                                               if ROW.match(line)]) == 8)
        return t

    def quit_cleanly(self, t, how):
        t.wait("top exits on " + how, lambda: "EXIT=" in t.screen(), timeout=15)
        check("EXIT=0" in t.screen(), "%s: exit status:\n%s" % (how, t.screen()))
        alternate, cursor = t.flags()
        check(alternate == "0", "%s: still on the alternate screen" % how)
        check(cursor == "1", "%s: the cursor stays hidden" % how)
        left = t.history()
        check("gpuscope top" not in left and "H100" not in left,
              "%s: frames left on the normal screen or its scrollback:\n%s" % (how, left))

    def test_fits_80x24_and_quits_on_q(self):
        t = self.start()
        check(t.flags()[0] == "1", "top draws on the alternate screen")
        screen = t.screen()
        lines = screen.splitlines()
        check(lines[0].startswith("gpuscope top"), "the header on the first line:\n" + screen)
        check(len(lines) <= 24 and all(len(line) <= 80 for line in lines), screen)
        rows = [int(ROW.match(line).group(1)) for line in lines if ROW.match(line)]
        check(rows == list(range(8)), "a row per GPU, 0-7: %r\n%s" % (rows, screen))
        check(len(re.findall(r"^ +MIG \dg\.\d+gb", screen, re.M)) >= 3, "MIG rows:\n" + screen)
        check(selected_gpu(screen) == 0 and "GPU 0  NVIDIA H100" in screen,
              "GPU 0 selected with its details:\n" + screen)
        # Nothing scrolled: the history holds the one screen.
        check(t.history().count("gpuscope top") == 1, "frames piled up:\n" + t.history())

        t.keys("j", "j", "Down")
        t.wait("j j Down select GPU 3", lambda: selected_gpu(t.screen()) == 3)
        check("GPU 3  NVIDIA A100" in t.screen(), "GPU 3's details:\n" + t.screen())
        t.keys("k")
        t.wait("k selects GPU 2", lambda: selected_gpu(t.screen()) == 2)
        t.keys("q")
        self.quit_cleanly(t, "q")

    def test_quits_on_upper_q_and_esc(self):
        for key in ("Q", "Escape"):
            t = self.start()
            t.keys(key)
            self.quit_cleanly(t, key)

    def test_sigterm_leaves_a_clean_terminal(self):
        t = self.start()
        os.kill(t.top_pid(), signal.SIGTERM)
        self.quit_cleanly(t, "SIGTERM")


if __name__ == "__main__":
    main()
