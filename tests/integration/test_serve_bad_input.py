#!/usr/bin/env python3
"""Bad input makes `gpuscope serve` exit non-zero with one clear message that
names the file and line where there is one: a malformed counters CSV line, an
unknown field name, an unreadable web-config, an invalid bcrypt hash, a port
already in use, an unknown flag, a bad setting in the YAML --config file.
"""
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import check, main, run, temp_dir  # noqa: E402


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def expect_failure(args, *needles):
    rc, out, err = run(["serve", "--simulate", "training-8xh100", "-a", "127.0.0.1:0"] + args,
                       timeout=30)
    check(rc != 0, "%s: exit 0\n%s" % (args, err))
    for needle in needles:
        check(needle in err, "%s: %r not in stderr:\n%s" % (args, needle, err))
    last = err.strip().splitlines()[-1]
    check(len(last) < 300, "message too long: " + last)


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.d = temp_dir(self, "gpuscope-bad-")

    def test_bad_files_and_settings(self):
        d = self.d
        malformed = write(d, "malformed.csv",
                          "# comment\nDCGM_FI_DEV_GPU_TEMP, gauge, temperature\n"
                          "DCGM_FI_DEV_POWER_USAGE, gauge\n")
        expect_failure(["-f", malformed], malformed + ":3")
        unknown = write(d, "unknown.csv", "DCGM_FI_DEV_GPU_TEMP, gauge, t\n\n"
                        "DCGM_FI_DEV_NO_SUCH_FIELD, gauge, what\n")
        expect_failure(["-f", unknown], unknown + ":3", "DCGM_FI_DEV_NO_SUCH_FIELD")
        expect_failure(["-f", os.path.join(d, "missing.csv")], "missing.csv")
        expect_failure(["--web-config-file", os.path.join(d, "nope.yml")], "nope.yml")
        bad_hash = write(d, "web.yml", "basic_auth_users:\n  alice: '$2y$10$tooshort'\n")
        expect_failure(["--web-config-file", bad_hash], bad_hash, "alice")
        expect_failure(["--no-such-flag"], "--no-such-flag")
        config = write(d, "serve.yml", "address: ':9400'\nmetric: native\n")
        expect_failure(["--config", config], config + ":2", "metric")

    def test_port_in_use(self):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            rc, _, err = run(["serve", "--simulate", "training-8xh100",
                              "-a", "127.0.0.1:%d" % port])
            check(rc != 0 and str(port) in err and "in use" in err, "port in use: %s" % err)


if __name__ == "__main__":
    main()
