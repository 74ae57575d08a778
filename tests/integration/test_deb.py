#!/usr/bin/env python3
"""The Debian package (`make deb`: scripts/stage-image.sh, then
scripts/build-deb.sh): its layout, its control data, lintian, and the
extracted binary run with the packaged configuration.

- /usr/bin/gpuscope, the modules and the simulator under /usr/lib/gpuscope,
  the systemd unit (ExecStart /usr/bin/gpuscope with the conffile, User
  gpuscope), /etc/gpuscope/gpuscope.yaml listed in conffiles, copyright and
  changelog under /usr/share/doc/gpuscope;
- Depends computed by dpkg-shlibdeps (the HTTP library among them) and
  adduser, which postinst calls to make the system user;
- lintian reports no error (E:) line;
- the extracted binary prints its version (the package's) and serves
  /metrics on the simulator with --config of the packaged file.

Env: GPUSCOPE_SOURCE_DIR. About 30 s after `make stage`.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, check, need_tool, main  # noqa: E402
from packaging import check_runs, stage  # noqa: E402

EXPECTED_FILES = ["./usr/bin/gpuscope", "./usr/lib/gpuscope/libgpuscope-grpc.so",
                  "./usr/lib/gpuscope/libgpuscope-curl.so",
                  "./usr/lib/gpuscope/libgpuscope-otlp.so",
                  "./usr/lib/gpuscope/sim/libnvidia-ml.so.1",
                  "./usr/lib/gpuscope/sim/scenarios/training-8xh100.yaml",
                  "./lib/systemd/system/gpuscope.service", "./etc/gpuscope/gpuscope.yaml",
                  "./usr/share/doc/gpuscope/copyright", "./usr/share/doc/gpuscope/changelog.gz"]


def build_deb(workdir):
    root = os.path.join(workdir, "root")
    stage(root)
    out = os.path.join(workdir, "out")
    p = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "build-deb.sh"), root, out],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "build-deb.sh failed:\n" + p.stdout + p.stderr)
    debs = glob.glob(os.path.join(out, "gpuscope_*_*.deb"))
    check(len(debs) == 1, "expected one .deb in %s: %s" % (out, debs))
    return debs[0]


def check_contents(deb):
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    paths = {line.split()[-1] for line in listing.splitlines()}
    for want in EXPECTED_FILES:
        check(want in paths, "%s is not in the package:\n%s" % (want, listing))
    check(not any("/build" in p or p.startswith("./usr/local") for p in paths),
          "stray paths:\n" + listing)
    field = lambda name: subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True,
                                        text=True).stdout.strip()
    depends = field("Depends")
    for dep in ("adduser", "libgnutls30", "libyaml-cpp0.7", "libc6"):
        check(re.search(r"(^|, )%s( |,|$)" % re.escape(dep), depends),
              "Depends lacks %s: %s" % (dep, depends))
    version = field("Version")
    check(os.path.basename(deb) == "gpuscope_%s_%s.deb" % (version, field("Architecture")),
          "file name %s against Version %s" % (deb, version))
    control = tempfile.mkdtemp()
    subprocess.run(["dpkg-deb", "-e", deb, control], check=True)
    conffiles = open(os.path.join(control, "conffiles")).read().split()
    check(conffiles == ["/etc/gpuscope/gpuscope.yaml"], "conffiles: %s" % conffiles)
    postinst = open(os.path.join(control, "postinst")).read()
    check("adduser --system" in postinst, "postinst makes no system user")
    for script in ("postinst", "prerm", "postrm"):
        p = subprocess.run(["sh", "-n", os.path.join(control, script)], capture_output=True,
                           text=True)
        check(p.returncode == 0, "%s: %s" % (script, p.stderr))
    return version


def check_lintian(deb):
    p = subprocess.run(["lintian", "--no-tag-display-limit", deb], capture_output=True,
                       text=True, timeout=600)
    errors = [line for line in (p.stdout + p.stderr).splitlines() if line.startswith("E:")]
    check(not errors, "lintian errors:\n" + "\n".join(errors))
    print("lintian (no errors):\n" + (p.stdout.strip() or "clean"))


def check_extracted(deb, workdir, version):
    x = os.path.join(workdir, "x")
    subprocess.run(["dpkg-deb", "-x", deb, x], check=True)
    unit = open(os.path.join(x, "lib", "systemd", "system", "gpuscope.service")).read()
    check(re.search(r"^ExecStart=/usr/bin/gpuscope serve --config /etc/gpuscope/gpuscope.yaml",
                    unit, re.M), "ExecStart:\n" + unit)
    check(re.search(r"^User=gpuscope$", unit, re.M) and "DynamicUser" not in unit,
          "the unit does not run as the package's user:\n" + unit)
    binary = os.path.join(x, "usr", "bin", "gpuscope")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    check(out.startswith("gpuscope %s " % version), "--version %r, package %s" % (out, version))
    check_runs(binary, extra_args=["--config", os.path.join(x, "etc", "gpuscope",
                                                           "gpuscope.yaml")])


class DebTest(unittest.TestCase):
    def test_package_contents_lintian_and_run(self):
        for tool, package in (("dpkg-deb", "dpkg"), ("dpkg-shlibdeps", "dpkg-dev"),
                              ("lintian", "lintian")):
            need_tool(tool, package)
        with tempfile.TemporaryDirectory() as workdir:
            deb = build_deb(workdir)
            version = check_contents(deb)
            check_lintian(deb)
            check_extracted(deb, workdir, version)
        print("deb: %s checked" % os.path.basename(deb))


if __name__ == "__main__":
    main()
