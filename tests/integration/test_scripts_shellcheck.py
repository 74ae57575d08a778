#!/usr/bin/env python3
"""The project's shell scripts pass shellcheck at its default severity (style
and up): scripts/*.sh, the fleet demo and the package cycle test. (The Slurm
scripts are checked with their own test, test_slurm_scripts.) A finding is a
bug more often than not: build-deb.sh passed its ELF files to dpkg-shlibdeps as
one "-e" word and the rest bare (SC2145).

Env: GPUSCOPE_SOURCE_DIR. stdlib + shellcheck (scripts/setup.sh installs it).
"""
import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, check, main, need_tool  # noqa: E402


class ShellcheckTest(unittest.TestCase):
    def test_scripts_pass_shellcheck(self):
        shellcheck = need_tool("shellcheck", "shellcheck")
        scripts = sorted(glob.glob(os.path.join(SOURCE_DIR, "scripts", "*.sh")))
        scripts += [os.path.join(SOURCE_DIR, "deploy", "fleet", "run-local.sh"),
                    os.path.join(SOURCE_DIR, "tests", "integration", "deb_cycle.sh")]
        check(len(scripts) > 5, "no scripts found in %s" % SOURCE_DIR)
        p = subprocess.run([shellcheck, "-x", "-s", "bash"] + scripts, cwd=SOURCE_DIR,
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, p.stdout + p.stderr)


if __name__ == "__main__":
    main()
