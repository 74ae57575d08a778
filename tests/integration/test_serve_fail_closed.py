#!/usr/bin/env python3
"""A bad configuration file never makes `gpuscope serve` fail open (issue 15).

At start, for each of --web-config-file, --config and -f: a directory, an
empty file, a blank file, a file that is not UTF-8, a FIFO and an unreadable
file (skipped as root, who reads anything) make serve exit non-zero with one
message naming the file and the problem.

On SIGHUP, a web-config (TLS + basic auth) or counters file that was swapped
for a directory or an empty file keeps the running configuration and logs the
error: HTTPS with credentials keeps answering, plain HTTP and requests without
credentials keep being refused, and the DCGM families stay.

A web-config with TLS or basic-auth users where libgnutls.so.30 cannot be
loaded (GnuTLS is loaded on first use) exits non-zero with the reason.

Non-finite and out-of-range numbers (nan, inf, 1e13, negative) for the
numeric settings exit non-zero naming the setting, from a flag, the
environment or the --config file.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib + openssl, curl,
htpasswd. ~20 s.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, Serve, check, clean_env, main, run,  # noqa: E402
                              wait_until)

SIM = ["serve", "--simulate", "training-8xh100", "-a", "127.0.0.1:0"]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def expect_failure(args, needles, env=None):
    rc, _, err = run(SIM + args, env=env, timeout=30)
    check(rc != 0, "%s: exit 0, it must fail closed\n%s" % (args, err))
    for needle in needles:
        check(needle in err, "%s: %r not in stderr:\n%s" % (args, needle, err))
    last = err.strip().splitlines()[-1] if err.strip() else ""
    check(len(last) < 300, "message too long: " + last)


def bad_files(d):
    """(name, path, expected problem) for every kind of bad file."""
    os.mkdir(os.path.join(d, "a-directory"))
    os.mkfifo(os.path.join(d, "a-fifo"))
    cases = [
        ("directory", os.path.join(d, "a-directory"), "is a directory"),
        ("empty", write(os.path.join(d, "empty"), ""), "is empty"),
        ("blank", write(os.path.join(d, "blank"), "  \n\n"), "is empty"),
        ("latin-1", write(os.path.join(d, "latin1"), b"metrics: caf\xe9\n"), "is not UTF-8"),
        ("fifo", os.path.join(d, "a-fifo"), "is a FIFO"),
    ]
    if os.geteuid() != 0:
        unreadable = write(os.path.join(d, "unreadable"), "metrics: both\n")
        os.chmod(unreadable, 0)
        cases.append(("unreadable", unreadable, "Permission denied"))
    else:
        print("running as root: the unreadable-file case is covered by base_tests only")
    return cases


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, timeout=60)


def curl(url, *extra):
    p = subprocess.run(["curl", "-s", "-k", "-o", "/dev/null", "-w", "%{http_code}",
                        "--max-time", "5"] + list(extra) + [url],
                       capture_output=True, text=True, timeout=30)
    try:
        return int(p.stdout.strip() or "0")
    except ValueError:
        return 0


def replace_with(path, kind):
    """Swaps the file at path for a directory or an empty file."""
    if os.path.isdir(path):
        os.rmdir(path)
    else:
        os.unlink(path)
    if kind == "directory":
        os.mkdir(path)
    else:
        write(path, "")


def remove_tree(d):
    """Removes d, unreadable files included."""
    for root, dirs, files in os.walk(d):
        for name in files:
            os.chmod(os.path.join(root, name), 0o600)
    shutil.rmtree(d, ignore_errors=True)


class ServeFailClosedTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="gpuscope-fail-closed-")
        self.addCleanup(remove_tree, self.d)

    def test_start(self):
        for name, path, problem in bad_files(self.d):
            for flag in ("--web-config-file", "--config", "-f"):
                expect_failure([flag, path], [path, problem])
            print("start: %s refused for all three files" % name)
        # Through the environment too, and a counters file that lists nothing.
        expect_failure([], ["is a directory"], env={"GPUSCOPE_WEB_CONFIG_FILE": self.d})
        comments = write(os.path.join(self.d, "comments.csv"), "# nothing enabled\n")
        expect_failure(["-f", comments], [comments, "lists no fields"])
        web_comments = write(os.path.join(self.d, "comments.yml"), "# nothing\n")
        expect_failure(["--web-config-file", web_comments], [web_comments, "has no settings"])

    def test_without_gnutls(self):
        """TLS or basic auth where libgnutls.so.30 cannot be loaded (GnuTLS is loaded on first
        use): serve refuses to start with the reason, never serves plain HTTP instead. The
        library is hidden by a bind mount in a private mount namespace."""
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
        lib = next((line.split()[-1] for line in cache.splitlines()
                    if line.split() and line.split()[0] == "libgnutls.so.30"), None)
        check(lib is not None, "libgnutls.so.30 is not in the ldconfig cache:\n" + cache)
        probe = subprocess.run(["unshare", "-m", "mount", "--bind", "/dev/null", lib],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            self.skipTest("needs a private mount namespace (unshare -m, as root): "
                          + probe.stderr.strip())
        key, crt = os.path.join(self.d, "server.key"), os.path.join(self.d, "server.crt")
        sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
           "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", crt)
        hashed = subprocess.run(["htpasswd", "-nbBC", "10", "u", "p"], capture_output=True,
                                text=True, check=True).stdout.strip().split(":", 1)[1]
        cases = [("tls", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (crt, key),
                  "TLS (tls_server_config) needs libgnutls.so.30"),
                 ("auth", "basic_auth_users:\n  u: '%s'\n" % hashed,
                  "basic_auth_users needs libgnutls.so.30")]
        for name, text, needle in cases:
            web = write(os.path.join(self.d, name + ".yml"), text)
            script = 'mount --bind /dev/null "$1" && shift && exec "$@"'
            p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", lib, GPUSCOPE] + SIM
                               + ["--web-config-file", web], capture_output=True, text=True,
                               env=clean_env(), timeout=30)
            check(p.returncode != 0, "%s without GnuTLS: exit 0, it must fail closed\n%s"
                  % (name, p.stderr))
            check(needle in p.stderr and web in p.stderr,
                  "%s without GnuTLS: %r and the file not in stderr:\n%s" % (name, needle, p.stderr))
            print("without GnuTLS: %s refused: %s" % (name, p.stderr.strip().splitlines()[-1]))

    def test_reload(self):
        key, crt = os.path.join(self.d, "server.key"), os.path.join(self.d, "server.crt")
        sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
           "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", crt)
        hashed = subprocess.run(["htpasswd", "-nbBC", "10", "u", "p"], capture_output=True,
                                text=True, check=True).stdout.strip().split(":", 1)[1]
        web = write(os.path.join(self.d, "web.yml"),
                    "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                    "basic_auth_users:\n  u: '%s'\n" % (crt, key, hashed))
        counters = write(os.path.join(self.d, "counters.csv"), "DCGM_FI_DEV_GPU_TEMP, gauge, t\n")
        s = Serve(["--simulate", "training-8xh100", "-c", "200", "--web-config-file", web,
                   "-f", counters], scheme="https")
        try:
            https, http = "https://127.0.0.1:%d/metrics" % s.port, "http://127.0.0.1:%d/metrics" % s.port
            wait_until(lambda: curl(https, "-u", "u:p") == 200, "the first scrape")
            errors = 0
            for kind in ("directory", "empty", "directory"):
                replace_with(web, kind)
                replace_with(counters, kind)
                s.proc.send_signal(signal.SIGHUP)
                errors += 2
                wait_until(lambda: s.output().count("reload: keeping the previous") >= errors,
                         "two reload errors in the log after the %s swap" % kind)
                check(curl(https, "-u", "u:p") == 200, "%s: HTTPS with credentials" % kind)
                check(curl(https) == 401, "%s: HTTPS without credentials must stay 401" % kind)
                check(curl(http) != 200, "%s: plain HTTP answered" % kind)
                body = subprocess.run(["curl", "-s", "-k", "-u", "u:p", https], capture_output=True,
                                      text=True, timeout=30).stdout
                check("DCGM_FI_DEV_GPU_TEMP{" in body, "%s: the DCGM family was dropped" % kind)
                check(s.proc.poll() is None, "serve exited")
            log = s.output()
            check(web + ": is a directory" in log and web + ": is empty" in log, log[-2000:])
            check(counters + ": is a directory" in log and counters + ": is empty" in log,
                  log[-2000:])
            print("reload: directory and empty swaps kept TLS, auth and counters")
        finally:
            s.stop()

    def test_numbers(self):
        cases = [
            (["-c", "nan"], "collect-interval"), (["-c", "inf"], "collect-interval"),
            (["-c", "1e13"], "collect-interval"), (["-c", "-100"], "collect-interval"),
            (["--window", "inf"], "window"), (["--window", "nan"], "window"),
            (["--stale-after", "nan"], "stale-after"), (["--stale-after", "-inf"], "stale-after"),
            (["--request-timeout", "inf"], "request-timeout"),
            (["--gpu-hour-price", "nan"], "gpu-hour-price"),
            (["--gpu-hour-price", "1e400"], "gpu-hour-price"),
            (["-x", "1e13"], "xid-count-window-size"),
            (["--max-connections", "99999999999999999999"], "max-connections"),
        ]
        for args, key in cases:
            started = time.monotonic()
            expect_failure(args, [key + ": '"])
            check(time.monotonic() - started < 10, "%s took too long to be refused" % args)
        expect_failure([], ["slow-interval: 'inf'", "GPUSCOPE_SLOW_INTERVAL"],
                       env={"GPUSCOPE_SLOW_INTERVAL": "inf"})
        config = write(os.path.join(self.d, "serve.yml"), "pcie-interval: .nan\n")
        expect_failure(["--config", config], ["pcie-interval: '.nan'", config])
        print("numbers: %d non-finite or out-of-range values refused" % (len(cases) + 2))


if __name__ == "__main__":
    main()
