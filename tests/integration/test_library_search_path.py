#!/usr/bin/env python3
"""No library is searched for in the current directory (issue 39, item 2).
The agent runs as root: a RUNPATH entry that is empty (CMake's build-rpath
padding ':') or relative makes the loader look where the admin stands, and
a libfmt, libm or libnvidia-ml planted there ran as root.

- every ELF of the build (the binary, its modules, the simulator, the test
  programs), of the stage (build/stage, when `make stage` made it) and of a
  fresh `scripts/dist.sh` copy has only absolute or $ORIGIN RUNPATH entries;
- the build's and the dist copy's agent, run from a folder holding a
  libnvidia-ml.so.1 whose constructor writes a marker, never load it (the
  default NVML library is opened by bare name), and the loader tries no
  relative path (LD_DEBUG=libs) for their libraries, the OTLP module's
  libprotobuf on the first post included.
~15 s.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, GPUSCOPE, SOURCE_DIR, Serve, check,  # noqa: E402
                              clean_env, free_port, main, need_tool)

ELF_MAGIC = b"\x7fELF"

# A stand-in for a planted library: its constructor leaves a marker.
FAKE_LIBRARY = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
  FILE* f = fopen("MARKER", "a");
  if (f) { fputs("loaded from the current directory\n", f); fclose(f); }
}
"""


def elf_files(*folders):
    """The ELF files directly in each folder that exists (not below)."""
    found = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "*"))):
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    if f.read(4) == ELF_MAGIC:
                        found.append(path)
    return found


def bad_search_paths(elf):
    """The RPATH/RUNPATH entries of elf that are empty or relative."""
    dynamic = subprocess.run(["readelf", "-d", elf], capture_output=True, text=True).stdout
    bad = []
    for path in re.findall(r"Library r(?:un)?path: \[(.*)\]", dynamic):
        bad += ["'%s' in %s" % (entry, path) for entry in path.split(":")
                if not entry.startswith(("/", "$ORIGIN", "${ORIGIN}"))]
    return bad


def relative_tries(debug_dir):
    """The loader's relative tries (LD_DEBUG=libs, LD_DEBUG_OUTPUT files)."""
    tries = []
    for name in glob.glob(os.path.join(debug_dir, "ld.*")):
        with open(name, errors="replace") as f:
            tries += [line.strip() for line in f
                      if re.search(r"trying file=[^/]", line)]
    return tries


def make_dist(workdir):
    out = os.path.join(workdir, "dist")
    p = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "dist.sh"), BUILD_DIR, out],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "dist.sh failed:\n" + p.stdout + p.stderr)
    return out


class LibrarySearchPathTest(unittest.TestCase):
    def setUp(self):
        need_tool("readelf", "binutils")
        d = tempfile.TemporaryDirectory(prefix="gpuscope-search-path-")
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def test_runpath_entries_are_absolute_or_origin(self):
        dist = make_dist(self.dir)
        stage = os.path.join(SOURCE_DIR, "build", "stage")
        folders = [BUILD_DIR, os.path.join(BUILD_DIR, "sim"), dist,
                   os.path.join(dist, "lib"), os.path.join(dist, "sim"),
                   os.path.join(stage, "usr", "bin"), os.path.join(stage, "usr", "lib", "gpuscope"),
                   os.path.join(stage, "usr", "lib", "gpuscope", "sim")]
        elves = elf_files(*folders)
        for want in (GPUSCOPE, os.path.join(BUILD_DIR, "libgpuscope-otlp.so"),
                     os.path.join(BUILD_DIR, "sim", "libnvidia-ml.so.1"),
                     os.path.join(dist, "gpuscope")):
            check(want in elves, "%s not checked: %s" % (want, elves))
        bad = {elf: entries for elf in elves for entries in [bad_search_paths(elf)] if entries}
        check(not bad, "empty or relative RUNPATH entries (the current directory):\n" +
              "\n".join("%s: %s" % (elf, ", ".join(e)) for elf, e in sorted(bad.items())))
        print("search path: %d ELF files, every RUNPATH entry absolute or $ORIGIN" % len(elves))

    def plant(self):
        """A folder to run from, holding the planted libraries."""
        cc = need_tool("cc", "gcc")
        cwd = os.path.join(self.dir, "cwd")
        os.mkdir(cwd)
        source = os.path.join(self.dir, "planted.c")
        with open(source, "w") as f:
            f.write(FAKE_LIBRARY.replace("MARKER", os.path.join(self.dir, "marker")))
        planted = os.path.join(self.dir, "planted.so")
        subprocess.run([cc, "-shared", "-fPIC", "-o", planted, source], check=True)
        for name in ("libnvidia-ml.so.1", "libgnutls.so.30"):  # opened by bare name
            shutil.copy(planted, os.path.join(cwd, name))
        return cwd

    def run_from(self, cwd, binary, debug):
        """`binary query` from cwd, the default NVML library, loader tries logged."""
        os.makedirs(debug, exist_ok=True)
        env = clean_env({"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": os.path.join(debug, "ld")})
        env.pop("LD_LIBRARY_PATH", None)
        return subprocess.run([binary, "query", "--query-gpu=name", "--format=csv"], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=30)

    def check_query_from(self, cwd, binary, debug):
        """`binary query` run from cwd loads nothing from there."""
        p = self.run_from(cwd, binary, debug)
        check(not os.path.exists(os.path.join(self.dir, "marker")),
              "%s loaded the planted libnvidia-ml.so.1 (exit %d): %s" %
              (binary, p.returncode, p.stdout + p.stderr))
        tries = relative_tries(debug)
        check(not tries, "%s searched the current directory:\n%s" %
              (binary, "\n".join(tries[:10])))

    def test_nothing_loaded_from_the_current_directory(self):
        cwd = self.plant()
        marker = os.path.join(self.dir, "marker")
        self.check_query_from(cwd, GPUSCOPE, os.path.join(self.dir, "debug-build"))
        self.check_query_from(cwd, os.path.join(make_dist(self.dir), "gpuscope"),
                              os.path.join(self.dir, "debug-dist"))

        # The OTLP module's libprotobuf, mapped on the first post.
        debug = os.path.join(self.dir, "debug-serve")
        os.mkdir(debug)
        port = free_port()
        scenario = os.path.join(BUILD_DIR, "sim", "scenarios", "idle-node.yaml")
        with Serve(["--simulate", scenario, "--otlp-listen-address", "127.0.0.1:%d" % port],
                   env={"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": os.path.join(debug, "ld")},
                   wrapper=("env", "--chdir=" + cwd)) as agent:
            agent.wait_healthy()
            req = urllib.request.Request("http://127.0.0.1:%d/v1/metrics" % port,
                                         data=b'{"resourceMetrics": []}',
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                check(r.status == 200, "OTLP post: %d" % r.status)
        loaded = ""
        for name in glob.glob(os.path.join(debug, "ld.*")):
            with open(name, errors="replace") as f:
                loaded += f.read()
        check("libprotobuf" in loaded, "the post mapped no libprotobuf (LD_DEBUG):\n" +
              loaded[-2000:])
        tries = relative_tries(debug)
        check(not tries, "serve searched the current directory:\n%s" % "\n".join(tries[:10]))
        check(not os.path.exists(marker), "a planted library was loaded")


if __name__ == "__main__":
    main()
