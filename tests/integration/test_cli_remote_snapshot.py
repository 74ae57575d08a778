#!/usr/bin/env python3
"""Remote parity of the read commands that render a snapshot (issue 44, item 8):
the summary (`gpuscope --agent URL`), `query --agent URL`, `-L --agent URL`
and `top --agent URL` read the agent's /api/v1/snapshot and print what a
local run prints, byte for byte.

Both sides see the same scenario moment: `gpuscope serve --simulate mixed-node`
and the local commands run with the simulator frozen at t=120 s
(GPUSCOPE_SIM_FROZEN_TIME). The agent runs with --process-names, and the local
commands with it too (process names name a GPU's workload in both).

- summary, -L, query (every --query-gpu field but the wall-clock timestamp,
  several fields with -i, every --query-compute-apps field): same bytes, same
  exit code;
- top --once and top in tmux at 80x24: the same frame but for what is the
  sampler's own (the header's clock, the moment, and the rates a sampler
  computes over its own interval: SM activity and PCIe), masked;
- an agent without --process-names: process_name is refused naming the field
  and why (exit 3, not a wrong [N/A]); pid and memory still match;
- a lost GPU (XID 79) exits 15 remotely as locally, after the other rows;
- an agent that does not answer exits 21; a malformed or hostile body (not
  JSON, another version, a wrong type, escape sequences in a name) is a clear
  error or comes out terminal-safe, never a crash; an agent without the
  endpoint (404) says to upgrade it (exit 21);
- every read command's --help shows --agent; query -l polls the agent; TLS and
  basic auth as health's (a missing CA or password exits 21).

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR; tmux for the live test. ~25 s.
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, Serve, check, clean_env,  # noqa: E402
                             free_port, main, need_tool, run)
from test_serve_tls import agent_web_config  # noqa: E402

FROZEN = {"GPUSCOPE_SIM_FROZEN_TIME": "120"}
LOCAL = ["--simulate", "mixed-node", "--process-names"]
LOST = os.path.join(SOURCE_DIR, "sim", "scenarios", "health", "xid-79-lost.yaml")
AFTER_LOSS = {"GPUSCOPE_SIM_FROZEN_TIME": "20"}  # GPU 3 fell off the bus at t = 10 s


def gpu_fields():
    code, out, _ = run(["query", "--help-query-gpu"])
    check(code == 0, out)
    names = re.findall(r'^"([A-Za-z0-9_.]+)"', out, re.M)
    check(len(names) > 100, names)
    return [n for n in names if n != "timestamp"]  # the time the query ran


def app_fields():
    code, out, _ = run(["query", "--help-query-compute-apps"])
    check(code == 0, out)
    return [n for n in re.findall(r'^"([A-Za-z0-9_.]+)"', out, re.M) if n != "timestamp"]


def masked_top(text):
    """A top frame less what is the sampler's own: the header's clock, the
    moment the local clock started from, the SM column and activity, PCIe rates."""
    text = re.sub(r"   \d\d:\d\d:\d\d$", "   HH:MM:SS", text, flags=re.M)
    text = re.sub(r"\(scenario (\S+) from [^)]*\)", r"(scenario \1)", text)
    text = re.sub(r"SM active .*$", "SM active ...", text, flags=re.M)
    text = re.sub(r"PCIe rx .*$", "PCIe rx ...", text, flags=re.M)
    # The row table's SM column (right-aligned under its heading), up to the blank line.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  GPU Name") and "  SM  " in line:
            end = line.index("  SM  ") + 4
            for j in range(i + 1, len(lines)):
                if not lines[j].strip():
                    break
                lines[j] = lines[j][:end - 4] + "...." + lines[j][end:]
    return "\n".join(lines)

class SnapshotParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.agent = Serve(["--simulate", "mixed-node", "-c", "100", "--process-names"],
                          env=FROZEN)
        cls.agent.wait_healthy()
        time.sleep(1.0)  # several cycles: every tier has been read
        cls.url = cls.agent.base

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()

    def same(self, args, compare=lambda out: out, printed=True):
        here = run(args + LOCAL, env=FROZEN)
        there = run(args + ["--agent", self.url])
        check(here[0] == there[0], "%s: exit %s here, %s remote\n%s\n%s" % (
            args, here[0], there[0], here[2], there[2]))
        check(compare(here[1]) == compare(there[1]),
              "%s: here and remote differ:\n--- here\n%s\n--- remote\n%s" % (
                  args, here[1], there[1]))
        check(here[1].strip() != "" or not printed, "%s printed nothing" % args)
        return here, there

    def test_summary_list_and_query_are_the_same_bytes(self):
        _, there = self.same([])
        check("simulated node (scenario mixed-node)" in there[1] and "python3" in there[1],
              there[1])
        _, there = self.same(["-L"])
        check(there[1].count("(UUID: MIG-") == 3, there[1])
        _, there = self.same(["query", "--query-gpu=" + ",".join(gpu_fields()), "--format=csv"])
        check(len(there[1].splitlines()) == 9, there[1])
        self.same(["query", "--query-gpu=index,name,temperature.gpu,power.draw,memory.used,"
                   "utilization.gpu,clocks_event_reasons.active", "--format=csv,noheader,nounits",
                   "-i", "1,7"])
        _, there = self.same(["query", "--query-compute-apps=" + ",".join(app_fields()),
                              "--format=csv"])
        check("tritonserver" in there[1], there[1])
        # Same errors: an id that matches nothing.
        here, there = self.same(["query", "--query-gpu=index", "-i", "9"], printed=False)
        check(there[0] == 6 and here[2] == there[2], (here, there))
        print("summary, -L and query --agent: the same bytes as here")

    def test_top_once_is_the_same_frame(self):
        _, there = self.same(["top", "--once", "--no-color"], compare=masked_top)
        check("GPU 7  NVIDIA H100" in there[1], there[1])
        _, there = self.same(["top", "--once", "--no-color", "-i", "2,7"], compare=masked_top)
        check(re.findall(r"^GPU (\d)", there[1], re.M) == ["2", "7"], there[1])

    def test_top_live_in_tmux(self):
        tmux = shutil.which("tmux")
        if tmux is None:
            print("tmux missing: the live frames are not compared (scripts/setup.sh installs it)")
            return
        work = tempfile.TemporaryDirectory(prefix="gpuscope-remote-top-")
        self.addCleanup(work.cleanup)
        sock = os.path.join(work.name, "tmux.sock")

        def tmux_run(*args):
            return subprocess.run([tmux, "-S", sock] + list(args), capture_output=True,
                                  text=True, timeout=30, env=clean_env()).stdout
        self.addCleanup(tmux_run, "kill-server")
        local = "GPUSCOPE_SIM_FROZEN_TIME=120 %s top --no-color %s" % (GPUSCOPE, " ".join(LOCAL))
        remote = "%s top --no-color --agent %s" % (GPUSCOPE, self.url)
        tmux_run("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "here",
                 local + "; echo EXIT=$?; sleep 60")
        tmux_run("new-session", "-d", "-x", "80", "-y", "24", "-s", "there",
                 remote + "; echo EXIT=$?; sleep 60")

        def screens():
            return [tmux_run("capture-pane", "-p", "-t", s) for s in ("here", "there")]
        deadline = time.time() + 30
        while time.time() < deadline and not all("verdict" in s for s in screens()):
            time.sleep(0.2)
        for key in ("j", "j"):  # the selection moves the same way
            tmux_run("send-keys", "-t", "here", key)
            tmux_run("send-keys", "-t", "there", key)
        # A local top attributes every 5 s: its frames reach the agent's within that.
        deadline = time.time() + 15
        while True:
            here, there = screens()
            if masked_top(here) == masked_top(there) or time.time() > deadline:
                break
            time.sleep(0.2)
        check(masked_top(here) == masked_top(there),
              "top here and remote differ:\n--- here\n%s\n--- remote\n%s" % (here, there))
        check("GPU 2  NVIDIA H200" in there and len(there.splitlines()) <= 24, there)
        for s in ("here", "there"):
            tmux_run("send-keys", "-t", s, "q")
        deadline = time.time() + 10
        while time.time() < deadline and not all("EXIT=0" in s for s in screens()):
            time.sleep(0.1)
        check(all("EXIT=0" in s for s in screens()), screens())
        print("top --agent in tmux: the same screen as here, q quits")

    def test_help_shows_agent(self):
        for args in (["--help"], ["query", "--help"], ["-L", "--help"], ["top", "--help"],
                     ["health", "--help"], ["diagnose", "--help"], ["report", "--help"]):
            code, out, _ = run(args)
            check(code == 0 and "--agent URL" in out, "%s: no --agent in\n%s" % (args, out))


class PollingAndTlsTest(unittest.TestCase):
    def test_query_loop_polls_the_agent(self):
        with Serve(["--simulate", "mixed-node", "-c", "100"], env=FROZEN) as agent:
            agent.wait_healthy()
            p = subprocess.Popen([GPUSCOPE, "query", "--query-gpu=index", "--format=csv",
                                  "-lms", "200", "--agent", agent.base],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=clean_env())
            time.sleep(1.5)
            p.send_signal(2)
            out, err = p.communicate(timeout=10)
            blocks = out.count("\n0\n") + out.startswith("0\n")
            check(p.returncode == 0 and out.count("index") == 1 and blocks >= 3,
                  (p.returncode, out, err))

    def test_tls_and_basic_auth(self):
        need_tool("openssl", "openssl")
        need_tool("htpasswd", "apache2-utils")
        d = tempfile.mkdtemp(prefix="gpuscope-remote-tls-")
        ca, web, pw = agent_web_config(d)
        auth = ["--basic-auth-user", "ops", "--basic-auth-password-file", pw]
        with Serve(["--simulate", "mixed-node", "-c", "100", "--process-names",
                    "--web-config-file", web], env=FROZEN, scheme="https") as agent:
            for args in ([], ["-L"], ["query", "--query-gpu=index,name,power.draw"]):
                there = run(args + ["--agent", agent.base, "--ca-file", ca] + auth)
                here = run(args + LOCAL, env=FROZEN)
                check(there == here, (args, here, there))
            code, out, err = run(["-L", "--agent", agent.base] + auth)  # no CA: not trusted
            check(code == 21 and out == "" and agent.base in err, (code, out, err))
            code, out, err = run(["-L", "--agent", agent.base, "--ca-file", ca])  # no password
            check(code == 21 and out == "" and "401" in err, (code, out, err))
            code, out, err = run(["-L", "--ca-file", ca])
            check(code == 2 and "go with --agent" in err, (code, err))


class AgentWithoutNamesTest(unittest.TestCase):
    def test_process_names_are_refused_not_blank(self):
        with Serve(["--simulate", "mixed-node", "-c", "100"], env=FROZEN) as agent:
            agent.wait_healthy()
            code, out, err = run(["query", "--query-compute-apps=pid,process_name",
                                  "--agent", agent.base])
            check(code == 3 and out == "" and "process_name" in err and
                  "--process-names" in err, (code, out, err))
            here = run(["query", "--query-compute-apps=pid,used_memory,gpu_uuid",
                        "--simulate", "mixed-node"], env=FROZEN)
            there = run(["query", "--query-compute-apps=pid,used_memory,gpu_uuid",
                         "--agent", agent.base])
            check(here == there, (here, there))
            # The summary shows the pid and memory, the name as N/A.
            code, out, _ = run(["--agent", agent.base])
            check(code == 0 and re.search(r"3200\s+92160MiB  N/A", out), out)


class LostGpuTest(unittest.TestCase):
    def test_lost_gpu_exits_15_remotely(self):
        sentence = re.compile(r"GPU 3 (\([0-9A-F:.]+\) )?is lost \(.*XID 79")
        with Serve(["--simulate", LOST, "-c", "100"], env=AFTER_LOSS) as agent:
            agent.wait_healthy()
            time.sleep(0.5)
            for args in ([], ["-L"], ["query", "--query-gpu=index,temperature.gpu"],
                         ["top", "--once"]):
                here = run(args + ["--simulate", LOST], env=AFTER_LOSS)
                there = run(args + ["--agent", agent.base])
                want = 0 if args[:1] == ["top"] else 15  # top shows LOST and goes on
                check(there[0] == want and here[0] == want,
                      "%s: exit %s here, %s remote (want %d)\n%s" % (
                          args, here[0], there[0], want, there[2]))
                if want == 15:
                    check(sentence.search(there[2]), "%s: %s" % (args, there[2]))
                    check(here[1] == there[1] or args == [], (here[1], there[1]))
            code, out, _ = run(["query", "--query-gpu=index", "--format=csv,noheader",
                                "--agent", agent.base])
            check(code == 15 and out.splitlines()[:3] == ["0", "1", "2"], out)


class FakeAgent:
    """An HTTP server answering /api/v1/snapshot with a body the test sets."""

    def __init__(self):
        self.body, self.status = b"", 200
        agent = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(agent.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(agent.body)))
                self.end_headers()
                self.wfile.write(agent.body)

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class BrokenAgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with Serve(["--simulate", "mixed-node", "-c", "100"], env=FROZEN) as agent:
            agent.wait_healthy()
            time.sleep(0.5)
            status, _, body = agent.get("/api/v1/snapshot")
            check(status == 200, body)
            cls.good = json.loads(body)

    @staticmethod
    def commands():
        return ([], ["-L"], ["query", "--query-gpu=index,name"], ["top", "--once"])

    def test_unreachable_agent_exits_21(self):
        port = free_port()
        for args in self.commands():
            code, out, err = run(args + ["--agent", "http://127.0.0.1:%d" % port])
            check(code == 21 and out == "" and "127.0.0.1:%d" % port in err,
                  (args, code, out, err))

    def test_malformed_bodies(self):
        fake = FakeAgent()
        self.addCleanup(fake.close)
        wrong_type = json.loads(json.dumps(self.good))
        wrong_type["devices"][0]["info"]["index"] = "zero"
        newer = dict(self.good, version=2)
        deep = "[" * 100000 + "]" * 100000
        for body, needle in ((b"<html>not json", "not a gpuscope snapshot"),
                             (json.dumps(newer).encode(), "version 2"),
                             (json.dumps(wrong_type).encode(), '"index" has the wrong type'),
                             (deep.encode(), "not a gpuscope snapshot"),
                             (b"{}", "version")):
            fake.body = body
            for args in self.commands():
                code, out, err = run(args + ["--agent", fake.url])
                check(code == 2 and out == "" and needle in err and fake.url in err,
                      (args, needle, code, out, err[:500]))
        # Escape sequences in a name reach no terminal.
        hostile = json.loads(json.dumps(self.good))
        hostile["devices"][0]["info"]["name"] = "\x1b]0;pwned\x07\x1b[2J evil"
        fake.body = json.dumps(hostile).encode()
        for args in self.commands():
            code, out, err = run(args + ["--agent", fake.url])
            check(code == 0 and "\x1b" not in out and "\x07" not in out and "evil" in out,
                  (args, code, out[:300], err))
        # An agent older than the endpoint.
        fake.status, fake.body = 404, b"404 page not found\n"
        code, out, err = run(["--agent", fake.url])
        check(code == 21 and "/api/v1/snapshot" in err and "upgrade" in err, (code, err))
        print("a broken or hostile agent: a clear error (exit 2 or 21), never a crash")


if __name__ == "__main__":
    main()
