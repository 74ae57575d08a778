#!/usr/bin/env python3
"""The HTTP client behind `gpuscope report`, `diagnose --agent` and `baseline` against hostile
servers (issue 39, items 8 and 9 and the report's impossible values).

One HTTP server on loopback plays a broken or hostile gpuscope agent and Prometheus; the first
segment of the URL's path picks what it answers (the rest is the path gpuscope asks for):

- size: a 500 MB chunked body, a 500 MB Content-Length, and a gzip bomb (about 0.5 MB that
  inflates to 512 MiB). Each command must stop at the client's 64 MiB bound with an error that
  names the URL and the limit, exit non-zero, and keep its peak RSS under 200 MB (read from the
  child's rusage: a memory bound, not a speed). Before the bound, the same answers took the client
  to 520 MB, and the body of '[' to 22 GB (killed). 60 MiB of '[' or of "0," (under the bound,
  but one JSON value per byte or two) must be refused before the parser builds them.
- wrong types: Prometheus answers whose fields have the wrong JSON type ("status": 1, "data": [],
  "result": {}, a value that is a number instead of [time, "text"]). Each must be a clear error
  naming the server and the field, exit non-zero, never a signal ("status": 1 aborted with an
  uncaught exception).
- impossible values and terminal escapes: an agent whose job starts before 1970 by millions of
  years must be refused; job ids, host names and a diagnosis carrying ESC, BEL and C1 controls
  must print without them.

Env: GPUSCOPE_BUILD_DIR. ~30 s (most of it deflating the bomb).
"""
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE, check, clean_env, main, sanitizer_report  # noqa: E402

MIB = 1 << 20
BIG_BYTES = 500 * 1000 * 1000
BOMB_INFLATED = 512 * MIB
DEEP_BYTES = 60 * MIB  # of '[': under the size bound, one JSON value per byte
LIMIT_TEXT = "larger than 64 MiB"


def make_bomb():
    """gzip of BOMB_INFLATED zero bytes (about 0.5 MB)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    zeros = bytes(MIB)
    parts = [deflate.compress(zeros) for _ in range(BOMB_INFLATED // MIB)]
    parts.append(deflate.flush())
    return b"".join(parts)


def prom_answer(result):
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


# Prometheus answers with a field of the wrong type, and what the error must say.
WRONG_PROMETHEUS = {
    "status-number": ({"status": 1}, "status is not a string"),
    "data-array": ({"status": "success", "data": []}, "data is not an object"),
    "result-object": ({"status": "success", "data": {"resultType": "vector", "result": {}}},
                      "data.result is not an array"),
    "value-number": (prom_answer([{"metric": {"hpc_job": "4242"}, "value": 5}]),
                     "data.result[0].value is not"),
    "value-text-number": (prom_answer([{"metric": {"hpc_job": "4242"}, "value": [1, 2]}]),
                          "data.result[0].value is not"),
    "label-number": (prom_answer([{"metric": {"hpc_job": 4242}, "value": [1, "2"]}]),
                     "data.result[0].metric.hpc_job is not a string"),
    "error-number": ({"status": "error", "error": 7}, "Prometheus query failed"),
}

ESC_ID = "evil\x1b]0;owned\x07\x1b[2J"
ESC_HOST = "node\x1b[31m\u009b1A"


def device(**changes):
    d = {"device_key": "GPU-0", "uuid": "GPU-0", "gpu": 0, "hostname": "node1", "mig_profile": "",
         "held_seconds": 3600, "busy_seconds": 3500, "idle_held_seconds": 0,
         "throttled_seconds": 0, "throttle_reason_seconds": {}, "memory_peak_bytes": 6e10,
         "memory_total_bytes": 8e10, "first_seen": 1.7e9, "last_seen": 1.7e9 + 3600,
         "sm_active_seconds": 3000, "tensor_active_seconds": None, "energy_joules": 1.8e6}
    d.update(changes)
    return d


def job(job_id, **changes):
    j = {"kind": "job", "id": job_id, "namespace": "", "workload": "", "hpc_job": job_id,
         "start": 1.7e9, "end": 1.7e9 + 3600, "devices": [device()], "findings": []}
    j.update(changes)
    return j


AGENT_ANSWERS = {
    # start -6.9e15 s printed as the date -219246529-01-00; held -3600 s as negative GPU-hours
    "impossible": {"jobs": [job("4242", start=-6.9e15, devices=[device(held_seconds=-3600)])]},
    "escapes": {"jobs": [job("4242", devices=[device(hostname=ESC_HOST)]), job(ESC_ID)]},
    "gpu-negative": {"jobs": [job("4242", devices=[device(gpu=-1)])]},
}
DIAGNOSIS_TEXT = "GPU 0: idle\x1b[2J\x1b]0;owned\x07 \u009b31m\n  evidence: none\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bomb = b""

    def log_message(self, *args):
        pass

    def send_json(self, doc):
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, chunked, total=BIG_BYTES):
        """Sends `total` bytes of JSON-looking text until the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(total))
        self.end_headers()
        block = b"[" * MIB
        try:
            for _ in range(total // MIB):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_GET(self):
        mode, _, rest = self.path.lstrip("/").partition("/")
        if mode in ("big", "biglength"):
            return self.stream(chunked=mode == "big")
        if mode == "deep":
            return self.stream(chunked=True, total=DEEP_BYTES)
        if mode == "flat":
            body = b'{"jobs": [' + b"0," * (DEEP_BYTES // 2) + b"0]}"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if mode == "bomb":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(self.bomb)))
            self.end_headers()
            try:
                self.wfile.write(self.bomb)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return None
        if mode.startswith("prom-") and mode[5:] in WRONG_PROMETHEUS:
            return self.send_json(WRONG_PROMETHEUS[mode[5:]][0])
        if mode == "prom-escapes":
            # Every query: one GPU whose host name carries escapes.
            return self.send_json(prom_answer([{"metric": {
                "instance": ESC_HOST, "uuid": "GPU-0", "gpu": "0", "hpc_job": "4242"},
                "value": [1.7e9, "1700000000"]}]))
        if mode.startswith("agent-") and rest.startswith("api/v1/diagnosis"):
            body = DIAGNOSIS_TEXT.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if mode.startswith("agent-") and mode[6:] in AGENT_ANSWERS:
            return self.send_json(AGENT_ANSWERS[mode[6:]])
        self.send_error(404)
        return None


def is_sanitizer_build():
    out = subprocess.run([GPUSCOPE, "version"], capture_output=True, text=True,
                         env=clean_env(), timeout=30).stdout
    return "Sanitizer" in out


def run_measured(args, timeout=120):
    """Runs gpuscope; (exit status or -signal, stdout, stderr, peak RSS in MB) from its rusage."""
    with open(os.devnull, "rb") as null_in:
        proc = subprocess.Popen([GPUSCOPE] + args, stdin=null_in, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=clean_env())
    out = {}

    def drain(name, pipe):
        with pipe:
            out[name] = pipe.read()

    readers = [threading.Thread(target=drain, args=(n, p))
               for n, p in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    deadline = time.time() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.time() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join()
    stdout = out["out"].decode(errors="replace")
    stderr = out["err"].decode(errors="replace")
    report = sanitizer_report(stderr)
    check(report is None, "gpuscope %s printed a sanitizer report:\n%s" % (args, report))
    return proc.returncode, stdout, stderr, usage.ru_maxrss / 1024


def check_clear_error(args, code, stderr, *wanted):
    check(code > 0, "gpuscope %s: want a non-zero exit, not a signal; got %s:\n%s" %
          (" ".join(args), code, stderr[-2000:]))
    for want in wanted:
        check(want in stderr, "gpuscope %s: %r not in the error:\n%s" %
              (" ".join(args), want, stderr[-2000:]))


class HostileServerCase(unittest.TestCase):
    """The hostile server, on loopback, for the cases below."""

    @classmethod
    def setUpClass(cls):
        if not Handler.bomb:
            Handler.bomb = make_bomb()
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.server.daemon_threads = True
        cls.base = "http://127.0.0.1:%d" % cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.rss_bound_mb = 600 if is_sanitizer_build() else 200

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()


class AnswerSizeBound(HostileServerCase):
    def check_bounded(self, args, mode, path):
        code, _, stderr, rss_mb = run_measured(args)
        check_clear_error(args, code, stderr, LIMIT_TEXT, "%s/%s/%s" % (self.base, mode, path))
        check(rss_mb < self.rss_bound_mb, "gpuscope %s peaked at %.0f MB RSS (bound %d MB)" %
              (" ".join(args), rss_mb, self.rss_bound_mb))

    def test_chunked_500mb_body_is_refused_at_the_limit(self):
        self.check_bounded(["report", "job", "4242", "--agent", self.base + "/big"], "big",
                           "api/v1/jobs?kind=job")

    def test_500mb_content_length_is_refused(self):
        self.check_bounded(["diagnose", "--agent", self.base + "/biglength"], "biglength",
                           "api/v1/diagnosis?format=text")

    def test_gzip_bomb_is_refused_once_inflated_past_the_limit(self):
        check(len(Handler.bomb) < 2 * MIB, "the bomb is %d bytes" % len(Handler.bomb))
        self.check_bounded(["report", "tenants", "--agent", self.base + "/bomb"], "bomb",
                           "api/v1/jobs")
        self.check_bounded(["report", "job", "4242", "--prometheus", self.base + "/bomb"], "bomb",
                           "api/v1/query?query=")
        self.check_bounded(["baseline", "--prometheus", self.base + "/bomb"], "bomb",
                           "api/v1/query?query=")


    def test_json_too_deep_or_too_many_values_is_refused_before_parsing(self):
        for args, what in ((["report", "job", "4242", "--agent", self.base + "/deep"],
                            "nests deeper than 32 levels"),
                           (["report", "job", "4242", "--prometheus", self.base + "/deep"],
                            "nests deeper than 32 levels"),
                           (["report", "job", "4242", "--agent", self.base + "/flat"],
                            "holds more than 2000000 values")):
            code, _, stderr, rss_mb = run_measured(args)
            check_clear_error(args, code, stderr, what, self.base)
            check(rss_mb < self.rss_bound_mb, "gpuscope %s peaked at %.0f MB RSS (bound %d MB)" %
                  (" ".join(args), rss_mb, self.rss_bound_mb))


class WrongTypes(HostileServerCase):
    def test_prometheus_fields_of_the_wrong_type_are_clear_errors(self):
        for mode, (_, want) in WRONG_PROMETHEUS.items():
            url = "%s/prom-%s" % (self.base, mode)
            for args in (["report", "job", "4242", "--prometheus", url],
                         ["report", "tenants", "--prometheus", url],
                         ["baseline", "--prometheus", url]):
                code, _, stderr, _ = run_measured(args)
                check_clear_error(args, code, stderr, want, "Prometheus at " + url)

    def test_agent_fields_of_the_wrong_type_are_clear_errors(self):
        args = ["report", "job", "4242", "--agent", self.base + "/agent-gpu-negative"]
        code, _, stderr, _ = run_measured(args)
        check_clear_error(args, code, stderr, '"gpu" has the wrong type', "jobs[0]",
                          "gpuscope agent at " + self.base)


class ImpossibleValuesAndEscapes(HostileServerCase):
    def test_impossible_usage_is_refused(self):
        for args in (["report", "job", "4242", "--agent", self.base + "/agent-impossible"],
                     ["report", "tenants", "--by", "job", "--agent",
                      self.base + "/agent-impossible"]):
            code, stdout, stderr, _ = run_measured(args)
            check_clear_error(args, code, stderr, "job 4242: impossible usage: start is",
                              "(negative)", "gpuscope agent at " + self.base)
            check("-219246529" not in stdout, "printed an impossible date:\n" + stdout)

    def check_no_control(self, args, text):
        for bad in ("\x1b", "\x07", "\u009b"):
            check(bad not in text, "gpuscope %s printed %r:\n%r" % (" ".join(args), bad, text))

    def test_text_from_the_source_cannot_drive_the_terminal(self):
        runs = (["report", "job", "4242", "--agent", self.base + "/agent-escapes"],
                ["report", "job", "4242", "--agent", self.base + "/agent-escapes", "--markdown"],
                ["report", "job", "4242", "--agent", self.base + "/agent-escapes", "--json"],
                ["report", "tenants", "--by", "job", "--agent", self.base + "/agent-escapes"],
                ["report", "tenants", "--by", "job", "--agent", self.base + "/agent-escapes",
                 "--json"],
                ["report", "job", "4242", "--prometheus", self.base + "/prom-escapes"],
                ["diagnose", "--agent", self.base + "/agent-escapes"])
        for args in runs:
            code, stdout, stderr, _ = run_measured(args)
            check(code == 0, "gpuscope %s exited %s:\n%s" % (" ".join(args), code, stderr))
            self.check_no_control(args, stdout + stderr)
        code, stdout, _, _ = run_measured(["diagnose", "--agent", self.base + "/agent-escapes"])
        check("GPU 0: idle" in stdout and "\n  evidence: none\n" in stdout,
              "the diagnosis lost its lines:\n%r" % stdout)
        code, stdout, _, _ = run_measured(runs[3])
        check("evil" in stdout and "4242" in stdout, "a holder is missing:\n%r" % stdout)


if __name__ == "__main__":
    main()
