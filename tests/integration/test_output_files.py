#!/usr/bin/env python3
"""Files the CLI writes at a path the user names, when gpuscope runs as root.

`gpuscope run --report FILE` and `gpuscope query -f FILE` write only a plain
file of the caller's (src/base/own_file.h). In a sticky directory such as
/tmp another user (here: nobody) may have planted, at that path, a symbolic
link to a file of root's, a hard link to one, a FIFO, a file of their own, or
a symbolic link to a directory above it; each is refused, with the reason on
stderr, and nothing is written through it. A new path is created (0644, the
caller's) and a file of the caller's own is replaced.

Runs as root only (the case is root writing through another user's path).
Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. stdlib only. ~10 s.
"""
import os
import pwd
import stat
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import GPUSCOPE, check, check_exit, clean_env, main, need, temp_dir  # noqa

SCENARIO = """description: One idle H100 (output file tests).
seed: 7
gpus:
  - model: h100-sxm
    count: 1
    workload:
      - {at: 0, kind: idle}
"""
SECRET = "root's own file\n"
THEIRS = "nobody's file\n"


class OutputFileTest(unittest.TestCase):
    def setUp(self):
        need(os.geteuid() == 0, "runs as root only (root writing through a user's path)",
             setup_installs=False)
        self.nobody = pwd.getpwnam("nobody").pw_uid
        self.dir = temp_dir(self, "gpuscope-out-")
        self.scenario = os.path.join(self.dir, "one.yaml")
        with open(self.scenario, "w") as f:
            f.write(SCENARIO)
        # root's file, outside the sticky directory: what an attacker aims at.
        self.secret = os.path.join(self.dir, "secret")
        with open(self.secret, "w") as f:
            f.write(SECRET)
        self.sticky = os.path.join(self.dir, "tmp")
        os.mkdir(self.sticky)
        os.chmod(self.sticky, 0o1777)

    def planted(self):
        """name -> path of what nobody planted in the sticky directory."""
        paths = {}
        paths["symlink"] = os.path.join(self.sticky, "symlink")
        os.symlink(self.secret, paths["symlink"])
        paths["hardlink"] = os.path.join(self.sticky, "hardlink")
        os.link(self.secret, paths["hardlink"])
        paths["fifo"] = os.path.join(self.sticky, "fifo")
        os.mkfifo(paths["fifo"], 0o666)
        paths["theirs"] = os.path.join(self.sticky, "theirs")
        with open(paths["theirs"], "w") as f:
            f.write(THEIRS)
        link_dir = os.path.join(self.sticky, "dir")
        os.symlink(self.dir, link_dir)
        for path in (paths["symlink"], paths["fifo"], paths["theirs"], link_dir):
            os.lchown(path, self.nobody, self.nobody)
        paths["through dir"] = os.path.join(link_dir, "secret")
        return paths

    def check_untouched(self, what, paths):
        with open(self.secret) as f:
            check(f.read() == SECRET, "%s: root's file was written through" % what)
        with open(paths["theirs"]) as f:
            check(f.read() == THEIRS, "%s: nobody's file was written" % what)
        check(stat.S_ISLNK(os.lstat(paths["symlink"]).st_mode), "%s: link replaced" % what)

    def check_own_files(self, what, write):
        """write(path) -> (code, stderr) creates a new file and replaces one of root's."""
        fresh = os.path.join(self.sticky, "fresh")
        code, err = write(fresh)
        check_exit(what, code, err)
        st = os.stat(fresh)
        check(st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o644, (what, oct(st.st_mode)))
        with open(fresh, "w") as f:
            f.write("x" * 100000)
        code, err = write(fresh)
        check_exit(what, code, err)
        check(0 < os.path.getsize(fresh) < 100000, "%s: the old file was not replaced" % what)

    def query(self, path):
        p = subprocess.run([GPUSCOPE, "query", "--simulate", self.scenario,
                            "--query-gpu=index,name", "--format=csv", "-f", path],
                           capture_output=True, text=True, env=clean_env(), timeout=30)
        return p.returncode, p.stderr

    def run_report(self, path):
        p = subprocess.run([GPUSCOPE, "run", "--simulate", self.scenario, "--interval", "100ms",
                            "--json", "--report", path, "--", "true"],
                           capture_output=True, text=True, env=clean_env(), timeout=30)
        return p.returncode, p.stderr

    def test_query_refuses_planted_paths(self):
        paths = self.planted()
        for name, path in paths.items():
            code, err = self.query(path)
            check(code != 0 and "cannot write " + path in err, (name, code, err))
        self.check_untouched("query -f", paths)
        self.check_own_files("query -f", self.query)
        # The null device takes the output away, as with nvidia-smi, and stays the device.
        code, err = self.query("/dev/null")
        check_exit("query -f /dev/null", code, err)
        check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null was replaced")
        # A device node of another kind (nobody cannot make one; root's /dev/zero) is refused.
        code, err = self.query("/dev/zero")
        check(code != 0 and "cannot write /dev/zero: not a regular file" in err, (code, err))

    def test_run_report_refuses_planted_paths(self):
        paths = self.planted()
        for name, path in paths.items():
            code, err = self.run_report(path)
            # The command's status stands; the refused report is said on stderr.
            check(code == 0 and "--report: cannot write " + path in err, (name, code, err))
        self.check_untouched("run --report", paths)
        self.check_own_files("run --report", self.run_report)


if __name__ == "__main__":
    main()
