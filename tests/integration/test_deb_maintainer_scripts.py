#!/usr/bin/env python3
"""The .deb's maintainer scripts (deploy/debian/postinst, prerm), run as
dpkg runs them on a systemd host, without systemd: /run/systemd/system is in
a tmpfs on /run in a private mount namespace (unshare -m), and the tools they
call (deb-systemd-helper, deb-systemd-invoke, systemctl, adduser, getent,
chgrp, chmod) are recorders on PATH. Checks (issue 39, item 11): an upgrade
restarts the agent (`postinst configure OLD-VERSION`), so no old agent keeps
running beside the new modules; prerm leaves it running on upgrade and stops
it on remove; on a host without systemd nothing is invoked. Needs root (a
mount namespace). ~1 s.
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, check, main, need, need_tool  # noqa: E402

DEBIAN = os.path.join(SOURCE_DIR, "deploy", "debian")
TOOLS = ("deb-systemd-helper", "deb-systemd-invoke", "systemctl", "adduser", "getent",
         "chgrp", "chmod")

RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$CALLS"
"""

# Mounts a tmpfs on /run in the namespace (the host's stays as it is
# outside), with or without systemd/system in it.
IN_NAMESPACE = """set -e
mount -t tmpfs tmpfs /run
if [ "$SYSTEMD" = yes ]; then mkdir -p /run/systemd/system; fi
exec sh "$@"
"""


class MaintainerScriptsTest(unittest.TestCase):
    def setUp(self):
        need(os.geteuid() == 0, "a mount namespace needs root (not root)", setup_installs=False)
        need_tool("unshare", "util-linux")
        d = tempfile.TemporaryDirectory(prefix="gpuscope-maint-")
        self.addCleanup(d.cleanup)
        self.bin = os.path.join(d.name, "bin")
        os.mkdir(self.bin)
        for tool in TOOLS:
            path = os.path.join(self.bin, tool)
            with open(path, "w") as f:
                f.write(RECORDER)
            os.chmod(path, 0o755)
        self.calls = os.path.join(d.name, "calls")

    def run_script(self, script, *args, systemd=True):
        """The tools script called, one "tool args" line each."""
        if os.path.exists(self.calls):
            os.unlink(self.calls)
        env = {"PATH": self.bin + ":/usr/sbin:/usr/bin:/sbin:/bin", "CALLS": self.calls,
               "SYSTEMD": "yes" if systemd else "no"}
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            IN_NAMESPACE, "sh", os.path.join(DEBIAN, script)] + list(args),
                           env=env, capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, "%s %s exited %d: %s" % (script, args, p.returncode, p.stderr))
        if not os.path.exists(self.calls):
            return []
        with open(self.calls) as f:
            return f.read().splitlines()

    def invoked(self, calls):
        return [c for c in calls if c.startswith("deb-systemd-invoke ")]

    def test_upgrade_restarts_the_agent(self):
        calls = self.run_script("postinst", "configure", "0.1.0")
        check(self.invoked(calls) == ["deb-systemd-invoke restart gpuscope.service"],
              "postinst configure on upgrade: %s" % calls)
        check("systemctl --system daemon-reload" in calls, calls)

        calls = self.run_script("postinst", "configure", "")  # a first install
        check(self.invoked(calls) == ["deb-systemd-invoke restart gpuscope.service"], calls)

    def test_prerm_stops_only_on_remove(self):
        check(self.invoked(self.run_script("prerm", "upgrade", "0.2.0")) == [],
              "prerm upgrade stopped the agent: the postinst restart replaces it")
        check(self.invoked(self.run_script("prerm", "remove")) ==
              ["deb-systemd-invoke stop gpuscope.service"], "prerm remove")

    def test_no_systemd_no_invoke(self):
        calls = self.run_script("postinst", "configure", "0.1.0", systemd=False)
        check(self.invoked(calls) == [] and not any(c.startswith("systemctl") for c in calls),
              "invoked without systemd: %s" % calls)


if __name__ == "__main__":
    main()
