#!/usr/bin/env python3
"""Helpers shared by the test_serve_*.py integration tests, and when run
itself a smoke test of `gpuscope serve`: the index page, /health, /metrics in
both formats, 404, settings precedence (flag > GPUSCOPE_* > --config YAML),
and /health answering 503 while NVML is missing.

Env: GPUSCOPE_BUILD_DIR (the build folder with gpuscope and sim/),
GPUSCOPE_SOURCE_DIR (the checkout). stdlib only.
"""
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BUILD_DIR = os.environ.get("GPUSCOPE_BUILD_DIR", "build/release")
SOURCE_DIR = os.environ.get("GPUSCOPE_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
GPUSCOPE = os.path.join(BUILD_DIR, "gpuscope")
SHARED_DATA = os.path.join(SOURCE_DIR, "..", "shared", "reference", "data")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(extra=None):
    """The environment without any GPUSCOPE_* settings of the caller."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUSCOPE_") or k in ("GPUSCOPE_BUILD_DIR", "GPUSCOPE_SOURCE_DIR")}
    env.update(extra or {})
    return env


class Serve:
    """A running `gpuscope serve`; the port is read from its start log line."""

    def __init__(self, args, env=None, scheme="http", wait=True, timeout=30):
        self.log = tempfile.NamedTemporaryFile(prefix="gpuscope-serve-", suffix=".log",
                                               delete=False)
        cmd = [GPUSCOPE, "serve"] + list(args)
        if not any(a in ("-a", "--address") or a.startswith("--address=") for a in args):
            cmd += ["-a", "127.0.0.1:0"]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log,
                                     env=clean_env(env))
        self.scheme = scheme
        self.port = None
        if wait:
            self.wait_started(timeout)

    def output(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def wait_started(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(r"\(port (\d+)", self.output())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                raise AssertionError("serve exited with %s:\n%s" % (self.proc.returncode,
                                                                    self.output()))
            time.sleep(0.05)
        raise AssertionError("serve did not start within %ss:\n%s" % (timeout, self.output()))

    @property
    def base(self):
        return "%s://127.0.0.1:%d" % (self.scheme, self.port)

    def get(self, path, headers=None, context=None):
        return http_get(self.base + path, headers, context)

    def wait_healthy(self, timeout=30):
        deadline = time.time() + timeout
        status, body = None, ""
        while time.time() < deadline:
            status, _, body = self.get("/health")
            if status == 200:
                return
            time.sleep(0.1)
        raise AssertionError("never healthy: %s %s\n%s" % (status, body, self.output()))

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.unlink(self.log.name)
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def http_get(url, headers=None, context=None):
    """(status, headers, body text); never raises for HTTP error statuses."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode(errors="replace")


def run(args, env=None, timeout=30):
    """Runs gpuscope to completion: (exit code, stdout, stderr)."""
    p = subprocess.run([GPUSCOPE] + list(args), capture_output=True, text=True,
                       env=clean_env(env), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def main():
    with Serve(["--simulate", "training-8xh100"]) as s:
        s.wait_healthy()
        check("serving /metrics" in s.output() and "8 GPUs" in s.output() and
              "simulator" in s.output(), "start line: " + s.output())
        status, headers, body = s.get("/")
        check(status == 200 and "text/html" in headers["Content-Type"], "index %s" % status)
        check('href="/metrics"' in body and 'href="/health"' in body, body)
        status, headers, body = s.get("/health")
        check(status == 200 and body.strip() == "OK", "health %s %r" % (status, body))
        status, headers, text = s.get("/metrics")
        check(status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              "metrics %s %s" % (status, headers))
        check('DCGM_FI_DEV_GPU_TEMP{gpu="7"' in text and "gpuscope_nvml_up 1" in text, text[:500])
        status, headers, om = s.get("/metrics", {"Accept": "application/openmetrics-text"})
        check(headers["Content-Type"].startswith("application/openmetrics-text"), headers)
        check(om.endswith("# EOF\n"), om[-100:])
        status, _, _ = s.get("/nope")
        check(status == 404, "404 expected, got %s" % status)

    # The YAML --config file, overridden by the environment, overridden by flags.
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        f.write("metrics: native\ncollect-interval: 500ms\nhostname: from-file\n")
    try:
        with Serve(["--simulate", "training-8xh100", "--config", f.name]) as s:
            text = s.get("/metrics")[2]
            check("DCGM_FI_" not in text and "gpuscope_gpu_info{" in text, "file: native")
        with Serve(["--simulate", "training-8xh100", "--config", f.name],
                   env={"GPUSCOPE_METRICS": "dcgm"}) as s:
            text = s.get("/metrics")[2]
            check('Hostname="from-file"' in text and "gpuscope_gpu_info{" not in text,
                  "env beats file")
        with Serve(["--simulate", "training-8xh100", "--config", f.name, "--metrics", "both"],
                   env={"GPUSCOPE_METRICS": "dcgm"}) as s:
            text = s.get("/metrics")[2]
            check("DCGM_FI_DEV_GPU_TEMP{" in text and "gpuscope_gpu_info{" in text,
                  "flag beats env")
    finally:
        os.unlink(f.name)

    # NVML missing: serve keeps running, /health says why.
    with Serve(["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"]) as s:
        status, _, body = s.get("/health")
        check(status == 503 and "NVML is down" in body, "health %s %r" % (status, body))
        status, _, text = s.get("/metrics")
        check(status == 200 and "gpuscope_nvml_up 0" in text, text[:300])
    print("ok")


if __name__ == "__main__":
    sys.exit(main())
