#!/usr/bin/env python3
"""The container image, tested without a Docker daemon (none on these
machines): its build stage's one script, scripts/stage-image.sh, run on this
Debian 12 host, then the runtime stage's promises checked on what it staged:

- every shared library that the staged gpuscope, its modules and the
  simulator need (ldd) comes from a package that the Dockerfile's runtime
  stage installs, one they depend on, or glibc/libstdc++ (which
  debian:bookworm-slim has), and every package it names exists here; so does
  libgnutls30, which the agent loads on first use (TLS, basic auth);
- no binary carries a build-tree rpath;
- the binary runs as the image's USER (uid 10001) with no capabilities and an
  empty environment: `--version` names a semantic version and a commit, and
  `serve --simulate` answers /metrics, without a warning;
- the image carries what a Kubernetes user copies out (issue 45): under
  /usr/share/gpuscope every rule file, the PrometheusRule, every dashboard
  and every runbook of the repository, readable by the image's USER.

What only a Docker host shows (the image builds, the NVIDIA runtime injects
NVML) is listed in deploy/README.md. Env: GPUSCOPE_SOURCE_DIR. About 20 s
after `make stage` (a cold Release build otherwise).
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, check, need_tool, main  # noqa: E402
from packaging import check_runs, stage  # noqa: E402

DOCKERFILE = os.path.join(SOURCE_DIR, "deploy", "Dockerfile")
# debian:bookworm-slim's own libraries that the image may rely on without
# installing them (glibc, the C++ runtime: apt itself needs them).
BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}


def runtime_stage():
    """(packages the runtime stage installs, its USER uid)."""
    text = open(DOCKERFILE).read()
    runtime = text[text.index("FROM debian:bookworm-slim"):]
    install = re.search(r"apt-get install -y --no-install-recommends(.*?)&&", runtime, re.S)
    check(install, "no apt-get install in the runtime stage")
    packages = set(install.group(1).replace("\\", " ").split())
    user = re.search(r"^USER (\d+)(?::(\d+))?$", runtime, re.M)
    check(user, "the runtime stage sets no numeric USER")
    return packages, int(user.group(1))


def depends_closure(packages):
    """The packages and, recursively, their Depends and Pre-Depends as this
    host (the same Debian release) has them installed."""
    seen, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        p = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", name],
                           capture_output=True, text=True)
        check(p.returncode == 0, "the Dockerfile's package %s is not a Debian 12 package "
              "installed here: %s" % (name, p.stderr.strip()))
        for alternative in p.stdout.split(","):
            dep = alternative.split("|")[0].split("(")[0].strip().split(":")[0]
            if dep:
                todo.append(dep)
    return seen


def owner(path):
    """The Debian package that ships a library ldd resolved (usr-merge: the
    same file is known under /lib or /usr/lib)."""
    candidates = [path, os.path.realpath(path)]
    for c in list(candidates):
        candidates.append(c[4:] if c.startswith("/usr/") else "/usr" + c)
    for c in candidates:
        p = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        if p.returncode == 0:
            return p.stdout.split(":")[0]
    raise AssertionError("no package ships %s" % path)


def check_share(root, uid):
    """The repository's rules, dashboards and runbooks, all of them, under
    usr/share/gpuscope; readable by uid (`kubectl cp` runs as the image's user)."""
    share = os.path.join(root, "usr", "share", "gpuscope")
    for source, staged, suffix in (("deploy/prometheus/rules", "prometheus/rules", ".yml"),
                                   ("deploy/grafana/dashboards", "grafana/dashboards", ".json"),
                                   ("docs/runbooks", "runbooks", ".md")):
        check(os.path.isdir(os.path.join(share, staged)), "no %s under %s" % (staged, share))
        want = sorted(f for f in os.listdir(os.path.join(SOURCE_DIR, source))
                      if f.endswith(suffix))
        have = sorted(f for f in os.listdir(os.path.join(share, staged)) if f.endswith(suffix))
        missing = sorted(set(want) - set(have))
        check(want and not missing, "%s lacks %s" % (staged, missing))
    check(os.path.isfile(os.path.join(share, "kubernetes", "prometheusrule.yaml")),
          "no PrometheusRule under " + share)
    p = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                        "find", share, "!", "-readable"], capture_output=True, text=True)
    check(p.returncode == 0 and not p.stdout.strip(), "unreadable by uid %d: %s%s" %
          (uid, p.stdout, p.stderr))


def elf_files(root):
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return sorted(found)


def check_libraries(root, allowed):
    elves = elf_files(root)
    names = {os.path.relpath(e, root) for e in elves}
    for want in ("usr/bin/gpuscope", "usr/lib/gpuscope/libgpuscope-grpc.so",
                 "usr/lib/gpuscope/libgpuscope-curl.so", "usr/lib/gpuscope/libgpuscope-otlp.so",
                 "usr/lib/gpuscope/sim/libnvidia-ml.so.1"):
        check(want in names, "%s not staged (staged: %s)" % (want, sorted(names)))
    for elf in elves:
        dynamic = subprocess.run(["readelf", "-d", elf], capture_output=True, text=True).stdout
        check("RPATH" not in dynamic and "RUNPATH" not in dynamic,
              "%s carries an rpath:\n%s" % (elf, dynamic))
        ldd = subprocess.run(["ldd", elf], capture_output=True, text=True, env={}).stdout
        check("not found" not in ldd, "%s: a library is missing:\n%s" % (elf, ldd))
        for lib in re.findall(r"=> (/\S+)", ldd):
            package = owner(lib)
            check(package in allowed, "%s needs %s from %s, which the runtime stage does not "
                  "install" % (os.path.relpath(elf, root), lib, package))


class ImageStageTest(unittest.TestCase):
    def test_stage_and_runtime(self):
        for tool in ("ldd", "readelf", "dpkg-query", "setpriv"):
            need_tool(tool, {"readelf": "binutils", "setpriv": "util-linux"}.get(tool, "dpkg"))
        packages, uid = runtime_stage()
        allowed = depends_closure(packages) | BASE_PACKAGES
        with tempfile.TemporaryDirectory() as workdir:
            os.chmod(workdir, 0o755)  # the unprivileged user reads the staged tree
            root = os.path.join(workdir, "root")
            binary = stage(root)
            check_libraries(root, allowed)
            check_share(root, uid)
            # GnuTLS is loaded on first use (TLS, basic auth): no ELF file names it.
            check("libgnutls30" in allowed, "the runtime stage does not install libgnutls30")
            wrapper = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                       "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "env", "-i"]
            status = check_runs(binary, wrapper)
        check(re.search(r"^Uid:\s+%d\s" % uid, status, re.M), "not uid %d:\n%s" % (uid, status))
        for caps in ("CapEff", "CapPrm", "CapBnd"):
            check(re.search(r"^%s:\s+0+$" % caps, status, re.M),
                  "%s not empty:\n%s" % (caps, status))
        print("image stage: %d packages allowed, runs as uid %d without capabilities" %
              (len(allowed), uid))


if __name__ == "__main__":
    main()
