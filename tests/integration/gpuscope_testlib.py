"""Helpers shared by the integration tests (not a test itself: ctest registers
only test_*.py). Import it after putting this folder on sys.path:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpuscope_testlib import Serve, check, main  # noqa: E402

Holds the runner, the checkout and build paths, free loopback ports,
`gpuscope serve` and one-shot `gpuscope` runs, HTTP GET, the exposition
parser (parse_exposition, from exposition.py), real Prometheus /
Alertmanager daemons in a work folder with PromQL queries, promtool, and the
checks every alert rule file must pass.

Every test script holds unittest.TestCase classes (check() fails a test as
the assert methods do) and ends with `if __name__ == "__main__": main()`,
which runs them in the order written and exits with the script's status.

Skips: a test that cannot run here (a tool or the reference data missing)
calls need(), which ends it as skipped: exit SKIP_RC, which ctest reports as
"Skipped" (every integration test has SKIP_RETURN_CODE set in CMakeLists.txt),
printing "SKIPPED: <test>: <reason>". A skip never passes: under CI=true, a
missing thing that scripts/setup.sh installs (or CI lays out: ../shared)
fails the test instead, and main() prints "FAILED: <test>".

Agents started here are checked when they stop: a non-zero exit status or a
sanitizer report (ASan, LSan, UBSan, TSan) on stderr fails the test.

Env: GPUSCOPE_BUILD_DIR (the build folder with gpuscope and sim/),
GPUSCOPE_SOURCE_DIR (the checkout), CI ("true" in CI). stdlib + python3-yaml only.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from exposition import parse_exposition  # noqa: F401 (the tests' one parser)

SOURCE_DIR = os.path.abspath(os.environ.get(
    "GPUSCOPE_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
BUILD_DIR = os.path.abspath(os.environ.get("GPUSCOPE_BUILD_DIR",
                                           os.path.join(SOURCE_DIR, "build", "release")))
GPUSCOPE = os.path.join(BUILD_DIR, "gpuscope")
SHARED_DATA = os.path.join(SOURCE_DIR, "..", "shared", "reference", "data")
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
ALERTMANAGER = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"
RULES_DIR = os.path.join(SOURCE_DIR, "deploy", "prometheus", "rules")
RULE_TESTS_DIR = os.path.join(SOURCE_DIR, "deploy", "prometheus", "tests")
RUNBOOKS = os.path.join(SOURCE_DIR, "docs", "runbooks")
# Where the committed rules link the runbooks: the build's default
# GPUSCOPE_RUNBOOK_URL_BASE (cmake/install_share.cmake), the installed copy.
with open(os.path.join(SOURCE_DIR, "cmake", "install_share.cmake")) as _f:
    RUNBOOK_URL_BASE = re.search(r'set\(GPUSCOPE_DEFAULT_RUNBOOK_URL_BASE "([^"]+)"\)',
                                 _f.read()).group(1)


# ctest's SKIP_RETURN_CODE for every integration test (CMakeLists.txt).
SKIP_RC = 77
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
SANITIZER_REPORT = re.compile(r"ERROR: \w*Sanitizer|^\S+:\d+:\d+: runtime error: |"
                              r"WARNING: ThreadSanitizer", re.M)


def need(available, reason, setup_installs=True):
    """Skips the calling test unless available. Raises unittest.SkipTest
    (main() turns it into exit SKIP_RC), or, under CI=true when
    setup_installs (scripts/setup.sh or CI provides it), an AssertionError:
    in CI a missing tool is a failure, never a skip."""
    if available:
        return
    if setup_installs and IN_CI:
        raise AssertionError("%s (CI=true: scripts/setup.sh or CI provides it, so this "
                             "is a failure, not a skip)" % reason)
    raise unittest.SkipTest(reason)


def need_tool(path, package):
    """Skips (fails under CI=true) unless the program path or name is executable."""
    found = path if os.path.isabs(path) else shutil.which(path)
    need(found and os.access(found, os.X_OK),
         "%s not installed (Debian package %s, installed by scripts/setup.sh)" % (path, package))
    return found


def need_shared_data(name):
    """The path of a file of ../shared/reference/data beside the checkout (laid
    out by CI); skips (fails under CI=true) when it is missing."""
    path = os.path.join(SHARED_DATA, name)
    need(os.path.isfile(path), "reference data %s missing: ../shared/reference/data is laid "
         "out beside the checkout in CI only" % os.path.normpath(path))
    return path


class _WrittenOrderLoader(unittest.TestLoader):
    """Loads a module's TestCases, and each one's tests, in the order written
    (unittest sorts by name): a script's steps read top to bottom."""

    def getTestCaseNames(self, case_class):
        order = {}
        for klass in case_class.__mro__:
            for name in vars(klass):
                order.setdefault(name, len(order))
        return sorted(super().getTestCaseNames(case_class), key=order.__getitem__)

    def loadTestsFromModule(self, module, *args, **kwargs):
        cases = [c for c in vars(module).values()
                 if isinstance(c, type) and issubclass(c, unittest.TestCase)]
        return self.suiteClass(self.loadTestsFromTestCase(c) for c in cases)


def main():
    """The entry point of every test script (`if __name__ == "__main__":
    main()`): runs its unittest.TestCases in the order written and exits 1
    on a failure or error (each listed as FAILED: test) or when no test ran,
    SKIP_RC when a test was skipped (each listed as SKIPPED: test: reason),
    else 0."""
    result = unittest.main(module="__main__", testLoader=_WrittenOrderLoader(), exit=False,
                           verbosity=2).result
    for test, _ in result.failures + result.errors:
        print("FAILED: %s" % test.id())
    if not result.wasSuccessful() or (result.testsRun == 0 and not result.skipped):
        sys.exit(1)
    for test, reason in result.skipped:
        print("SKIPPED: %s: %s" % (test.id(), reason))
    sys.exit(SKIP_RC if result.skipped else 0)


def sanitizer_report(text):
    """The sanitizer report in a process's output (from its first line), or None."""
    m = SANITIZER_REPORT.search(text or "")
    return text[text.rfind("\n", 0, m.start()) + 1:][:6000] if m else None


def check_exit(what, code, output, expected=0):
    """Fails when a gpuscope process exited with another status than expected
    or printed a sanitizer report."""
    report = sanitizer_report(output)
    check(report is None, "%s printed a sanitizer report:\n%s" % (what, report))
    check(code == expected, "%s exited %s, expected %s:\n%s" % (what, code, expected,
                                                                output[-3000:]))


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def temp_dir(test, prefix):
    """A new temporary folder, removed (whatever is left in it) when the
    test ends."""
    return test.enterContext(tempfile.TemporaryDirectory(prefix=prefix,
                                                         ignore_cleanup_errors=True))


def wait_until(predicate, what, timeout=10):
    """Polls predicate() every 0.1 s until it holds; AssertionError after timeout s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


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


def http_get(url, headers=None, context=None, timeout=10):
    """(status, headers, body text); never raises for HTTP error statuses."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode(errors="replace")


def run(args, env=None, timeout=30):
    """Runs gpuscope to completion: (exit code, stdout, stderr)."""
    p = subprocess.run([GPUSCOPE] + list(args), capture_output=True, text=True,
                       env=clean_env(env), timeout=timeout)
    report = sanitizer_report(p.stderr)
    check(report is None, "gpuscope %s printed a sanitizer report:\n%s" % (" ".join(args),
                                                                          report))
    return p.returncode, p.stdout, p.stderr


def stop_process(proc, sig=signal.SIGTERM, timeout=10):
    """Signals proc if still running, waits, kills it after timeout s."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class Serve:
    """A running `gpuscope serve`; the port is read from its start log line."""

    def __init__(self, args, env=None, scheme="http", wait=True, timeout=30, binary=GPUSCOPE,
                 wrapper=()):
        """binary: another gpuscope (a staged image, an extracted package);
        wrapper: a command that runs it (setpriv as another user)."""
        self.log = tempfile.NamedTemporaryFile(prefix="gpuscope-serve-", suffix=".log",
                                               delete=False)
        cmd = list(wrapper) + [binary, "serve"] + list(args)
        if not any(a in ("-a", "--address") or a.startswith("--address=") for a in args):
            cmd += ["-a", "127.0.0.1:0"]
        # Off unless asked for: parallel agents would all try the default :4318.
        if not any(a.startswith("--otlp-listen-address") for a in args):
            cmd += ["--otlp-listen-address="]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log,
                                     env=clean_env(env))
        self.scheme = scheme
        self.port = None
        self.final_output = None  # the log once stopped
        if wait:
            try:
                self.wait_started(timeout)
            except BaseException:
                # No caller holds an agent that failed to start: stop it here.
                self.stop(sig=signal.SIGKILL, timeout=5, expect_code=None)
                raise

    def output(self):
        if self.final_output is not None:
            return self.final_output
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

    def wait_metrics(self, predicate, what, timeout=30):
        """The first /metrics body (answered 200) for which predicate(body)
        holds, polled every 0.2 s; AssertionError with the last body's and the
        agent's tails after timeout s."""
        deadline = time.time() + timeout
        body = ""
        while time.time() < deadline:
            status, _, body = self.get("/metrics")
            if status == 200 and predicate(body):
                return body
            time.sleep(0.2)
        raise AssertionError("%s: not within %ss\n%s\n%s" % (what, timeout, body[-1500:],
                                                             self.output()[-1500:]))

    def stop(self, sig=signal.SIGTERM, timeout=10, expect_code=0):
        """Stops the agent (if still running) and fails unless it exited with
        expect_code (None: any) and printed no sanitizer report."""
        if self.final_output is not None:
            return self.proc.returncode
        code = stop_process(self.proc, sig, timeout)
        self.final_output = self.output()
        self.log.close()
        os.unlink(self.log.name)
        check_exit(" ".join(self.cmd), code, self.final_output,
                   code if expect_code is None else expect_code)
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Daemon:
    """A child process logging into workdir/<name>.log, listening on self.port;
    its log is shown when a check fails."""

    def __init__(self, name, argv, workdir, port):
        self.name = name
        self.port = port
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-3000:]

    def wait_ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            check(self.proc.poll() is None, "%s exited:\n%s" % (self.name, self.output()))
            try:
                if http_get(self.base + "/-/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("%s not ready:\n%s" % (self.name, self.output()))

    def close(self):
        stop_process(self.proc)
        self.log.close()


class Prometheus(Daemon):
    """A real Prometheus on a free port, its config and TSDB in workdir."""

    def __init__(self, workdir, config_text, extra_args=()):
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(config_text)
        port = free_port()
        super().__init__("prometheus", [
            PROMETHEUS, "--config.file=" + config,
            "--storage.tsdb.path=" + os.path.join(workdir, "prom-data"),
            "--web.listen-address=127.0.0.1:%d" % port] + list(extra_args), workdir, port)

    def api(self, path, params):
        """The data of a successful API answer."""
        status, _, body = http_get("%s%s?%s" % (self.base, path, urllib.parse.urlencode(params)))
        check(status == 200, "%s %s: %s %s" % (path, params, status, body))
        return json.loads(body)["data"]

    def query(self, expr):
        """The result list of an instant PromQL query."""
        return self.api("/api/v1/query", {"query": expr})["result"]

    def by_gpu(self, expr):
        """An instant query's values keyed by the gpu label."""
        return {r["metric"].get("gpu", ""): float(r["value"][1]) for r in self.query(expr)}

    def wait_for(self, expr, count, timeout=30):
        """Polls expr until it yields at least count series; returns them."""
        deadline = time.time() + timeout
        result = []
        while time.time() < deadline:
            result = self.query(expr)
            if len(result) >= count:
                return result
            time.sleep(0.5)
        raise AssertionError("%s: %d series, wanted %d" % (expr, len(result), count))


def scrape_config(target, rule_files=(), alertmanager_port=None):
    """A prometheus.yml scraping target as job gpuscope every second."""
    text = ("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "  evaluation_interval: 1s\n")
    if rule_files:
        text += "rule_files:\n" + "".join("  - '%s'\n" % r for r in rule_files)
    if alertmanager_port:
        text += ("alerting:\n  alertmanagers:\n    - static_configs:\n"
                 "        - targets: ['127.0.0.1:%d']\n" % alertmanager_port)
    return text + ("scrape_configs:\n  - job_name: gpuscope\n"
                   "    static_configs:\n      - targets: ['%s']\n" % target)


def start_alertmanager(workdir):
    """A real Alertmanager that drops every notification, grouping at once."""
    config = os.path.join(workdir, "alertmanager.yml")
    with open(config, "w") as f:
        f.write("route:\n  receiver: drop\n  group_wait: 0s\n  group_interval: 1s\n"
                "receivers:\n  - name: drop\n")
    port = free_port()
    return Daemon("alertmanager", [
        ALERTMANAGER, "--config.file=" + config,
        "--storage.path=" + os.path.join(workdir, "am-data"),
        "--web.listen-address=127.0.0.1:%d" % port,
        "--cluster.listen-address="], workdir, port)


def promtool(args, text=None, cwd=None, timeout=60):
    """Runs promtool (stdin: text): (exit code, stdout + stderr stripped).
    Skips (fails under CI=true) without promtool."""
    need_tool("promtool", "prometheus")
    p = subprocess.run(["promtool"] + list(args), input=text, capture_output=True, text=True,
                       cwd=cwd, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


# --- alert rule files ----------------------------------------------------------

def rule_alerts(path):
    """The alerting rules of a Prometheus rule file."""
    import yaml  # only the rule tests need python3-yaml
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


def sanitized(build_dir=None):
    """The sanitizer flags the build in build_dir (default BUILD_DIR) was made
    with, from its CMakeCache.txt: [] for a plain build."""
    try:
        with open(os.path.join(build_dir or BUILD_DIR, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return []
    if re.search(r"^GPUSCOPE_SANITIZE:BOOL=ON", cache, re.M):
        return ["-fsanitize=address,undefined"]
    if re.search(r"^GPUSCOPE_TSAN:BOOL=ON", cache, re.M):
        return ["-fsanitize=thread"]
    return []


class AlertRuleFileChecks:
    """Mixin for a unittest.TestCase over one shipped rule file: set RULES (the
    rule file) and TESTS (its promtool unit tests). Adds the promtool tests and
    the firing / healthy-node unit test coverage test."""

    RULES = None
    TESTS = None

    def alerts(self, path=None):
        return rule_alerts(path or self.RULES)

    def group_names(self):
        import yaml
        with open(self.RULES) as f:
            return [g["name"] for g in yaml.safe_load(f)["groups"]]

    def test_promtool_check_rules(self):
        need_tool("promtool", "prometheus")
        rc, out = promtool(["check", "rules", self.RULES])
        self.assertEqual(rc, 0, out)

    def test_promtool_unit_tests(self):
        need_tool("promtool", "prometheus")
        rc, out = promtool(["test", "rules", self.TESTS], cwd=os.path.dirname(self.TESTS))
        self.assertEqual(rc, 0, out)

    def test_every_alert_has_a_firing_and_a_silent_unit_test(self):
        import yaml
        with open(self.TESTS) as f:
            doc = yaml.safe_load(f)
        fired, silent_on_healthy = set(), set()
        for t in doc["tests"]:
            for c in t["alert_rule_test"]:
                if c.get("exp_alerts"):
                    fired.add(c["alertname"])
                elif t["name"].startswith("healthy"):
                    silent_on_healthy.add(c["alertname"])
        names = {a["alert"] for a in self.alerts()}
        self.assertEqual(names - fired, set(), "alerts without a firing test")
        self.assertEqual(names - silent_on_healthy, set(), "alerts without a healthy-node test")

    def check_alerts_documented(self, severities, node_level=()):
        """Unique names; severity in severities; summary; a description naming
        the instance and (but for node_level alerts) the GPU; a runbook_url to
        an existing docs/runbooks/<alert>.md. Returns the runbook paths."""
        names = [a["alert"] for a in self.alerts()]
        self.assertEqual(len(names), len(set(names)), "duplicate alert names")
        runbooks = {}
        for a in self.alerts():
            name = a["alert"]
            self.assertIn(a["labels"]["severity"], severities, name)
            ann = a["annotations"]
            self.assertTrue(ann.get("summary"), name)
            self.assertIn("$labels.instance", ann["description"], name)
            if name not in node_level:
                self.assertIn("$labels.gpu", ann["description"], name)
            url = ann["runbook_url"]
            self.assertEqual(url, RUNBOOK_URL_BASE + name + ".md")
            path = os.path.join(RUNBOOKS, name + ".md")
            self.assertTrue(os.path.isfile(path), "missing runbook " + path)
            runbooks[name] = path
        return runbooks

    def check_runbooks_say(self, needles):
        """Each alert's runbook (docs/runbooks/<alert>.md) holds every needle."""
        for a in self.alerts():
            with open(os.path.join(RUNBOOKS, a["alert"] + ".md")) as f:
                text = f.read()
            for needle in needles:
                self.assertIn(needle, text, a["alert"])
