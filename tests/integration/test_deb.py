#!/usr/bin/env python3
"""The Debian package (`make deb`: scripts/stage-image.sh, then
scripts/build-deb.sh): its layout, its control data, lintian, and the
extracted binary run with the packaged configuration.

- /usr/bin/gpuscope, the modules and the simulator under /usr/lib/gpuscope,
  the systemd unit (ExecStart /usr/bin/gpuscope with the conffile, User
  gpuscope), /etc/gpuscope/gpuscope.yaml listed in conffiles, copyright and
  changelog under /usr/share/doc/gpuscope;
- what a site needs beside the binary (issue 45): the Slurm prolog and
  epilog under /usr/lib/gpuscope/slurm, the rules, PrometheusRule,
  dashboards, runbooks, report thresholds and example scrape configs under
  /usr/share/gpuscope, the man page and the bash and zsh completions; the
  report thresholds a second conffile;
- every installed runbook_url is the build's runbook base and names an
  installed runbook;
- the man page has a section per command of `gpuscope --help`, each the
  command's --help word for word (both come from the binary);
- Depends computed by dpkg-shlibdeps (the HTTP library among them) and
  adduser, which postinst calls to make the system user;
- lintian reports no error (E:) and no warning (W:) line: what it would say
  is overridden in deploy/debian/lintian-overrides, each with its reason;
- the extracted binary prints its version (the package's) and serves
  /metrics on the simulator with --config of the packaged file;
- install, upgrade and purge (tests/integration/deb_cycle.sh), as root in a
  chroot on an overlay of this Debian 12 host, so the host is untouched:
  without systemd the unit is enabled but nothing is started; the installed
  agent serves /metrics on the simulator as the unit's user, the installed
  prolog and epilog map and unmap a job, promtool loads the installed rules
  and example config; an upgrade of a newer build under systemd (recorded)
  restarts the agent and keeps a conffile the site changed; purge removes the
  user, /etc/gpuscope and /run/gpuscope and leaves nothing named gpuscope in
  /etc, /run or /var/lib.

Env: GPUSCOPE_SOURCE_DIR. About 95 s after `make stage` (lintian 50 s, the cycle 20 s).
"""
import glob
import gzip
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (RUNBOOK_URL_BASE, SOURCE_DIR, check, need, need_tool,  # noqa: E402
                              main)
from packaging import check_runs, stage  # noqa: E402

EXPECTED_FILES = ["./usr/bin/gpuscope", "./usr/lib/gpuscope/libgpuscope-grpc.so",
                  "./usr/lib/gpuscope/libgpuscope-curl.so",
                  "./usr/lib/gpuscope/libgpuscope-otlp.so",
                  "./usr/lib/gpuscope/sim/libnvidia-ml.so.1",
                  "./usr/lib/gpuscope/sim/scenarios/training-8xh100.yaml",
                  "./lib/systemd/system/gpuscope.service", "./etc/gpuscope/gpuscope.yaml",
                  "./usr/share/doc/gpuscope/copyright", "./usr/share/doc/gpuscope/changelog.gz",
                  "./etc/gpuscope/report-thresholds.yaml",
                  "./usr/lib/gpuscope/slurm/gpuscope-prolog",
                  "./usr/lib/gpuscope/slurm/gpuscope-epilog",
                  "./usr/lib/gpuscope/slurm/gpuscope-slurm-lib.sh",
                  "./usr/share/gpuscope/prometheus/rules/gpu-health.yml",
                  "./usr/share/gpuscope/prometheus/prometheus.yml",
                  "./usr/share/gpuscope/prometheus/targets/gpuscope.yml",
                  "./usr/share/gpuscope/kubernetes/prometheusrule.yaml",
                  "./usr/share/gpuscope/grafana/dashboards/gpu-health.json",
                  "./usr/share/gpuscope/runbooks/GpuFallenOffBus.md",
                  "./usr/share/gpuscope/reports/thresholds.yaml",
                  "./usr/share/gpuscope/fleet/scrape.yml",
                  "./usr/share/gpuscope/fleet/prometheus-agent.yml",
                  "./usr/share/man/man1/gpuscope.1.gz",
                  "./usr/share/bash-completion/completions/gpuscope",
                  "./usr/share/zsh/vendor-completions/_gpuscope",
                  "./usr/share/lintian/overrides/gpuscope"]
CONFFILES = ["/etc/gpuscope/gpuscope.yaml", "/etc/gpuscope/report-thresholds.yaml"]


def read(path):
    with open(path) as f:
        return f.read()


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
    check(conffiles == CONFFILES, "conffiles: %s" % conffiles)
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
    errors = [line for line in (p.stdout + p.stderr).splitlines()
              if line.startswith(("E:", "W:"))]
    check(not errors, "lintian errors and warnings:\n" + "\n".join(errors))
    print("lintian (no errors, no warnings):\n" + (p.stdout.strip() or "clean"))


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
    check_man_page(binary, x)
    check_runbook_urls(x)


def check_man_page(binary, x):
    """A section per command of `gpuscope --help`, holding that command's
    --help word for word (roff's escapes undone)."""
    run = lambda *args: subprocess.run([binary] + list(args), capture_output=True, text=True,
                                       env={"LC_ALL": "C", "COLUMNS": "80"})
    usage = run("--help").stdout
    listed = usage[usage.index("Commands:"):].split("\n\n")[0].splitlines()[1:]
    commands = [line.split()[0] for line in listed if not line.split()[0].startswith("(")]
    check(len(commands) >= 5, "commands in --help: %s" % commands)
    with gzip.open(os.path.join(x, "usr", "share", "man", "man1", "gpuscope.1.gz"), "rt") as f:
        page = f.read()
    plain = page.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    for command in commands:
        section = re.search(r"^\.SS %s\n(.*?)(?=^\.SS |^\.SH )" % re.escape(command), plain,
                            re.M | re.S)
        check(section, "the man page has no section for %s" % command)
        own = run(command, "--help")
        if own.returncode == 0:  # else the section is the command's summary line
            check(own.stdout.strip() in section.group(1),
                  "the man page's %s section is not its --help" % command)
    completion = read(os.path.join(x, "usr", "share", "bash-completion", "completions",
                                   "gpuscope"))
    check(all(c in completion for c in commands), "bash completion lacks a command")
    p = subprocess.run(["bash", "-n", "-c", completion])
    check(p.returncode == 0, "the bash completion does not parse")


def check_runbook_urls(x):
    """Every installed alert links a runbook at the build's base that the
    package installs."""
    share = os.path.join(x, "usr", "share", "gpuscope")
    alerts = 0
    for path in glob.glob(os.path.join(share, "prometheus", "rules", "*.yml")):
        for group in yaml.safe_load(read(path)).get("groups", []):
            for rule in group["rules"]:
                url = rule.get("annotations", {}).get("runbook_url")
                if "alert" not in rule or url is None:
                    continue
                alerts += 1
                check(url.startswith(RUNBOOK_URL_BASE), "%s: %s" % (rule["alert"], url))
                name = url[len(RUNBOOK_URL_BASE):].split("#")[0]
                check(os.path.isfile(os.path.join(share, "runbooks", name)),
                      "%s links %s, which the package lacks" % (rule["alert"], url))
    check(alerts > 20, "only %d alerts with a runbook_url" % alerts)
    kube = read(os.path.join(share, "kubernetes", "prometheusrule.yaml"))
    check("github.com" not in kube and RUNBOOK_URL_BASE in kube, "the PrometheusRule's links")


def newer_build(deb, workdir):
    """The same package as version VERSION+upgrade1: what dpkg sees as a newer build."""
    tree = os.path.join(workdir, "newer")
    subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
    control = os.path.join(tree, "DEBIAN", "control")
    text = read(control)
    text = re.sub(r"^Version: (.*)$", r"Version: \1+upgrade1", text, flags=re.M)
    with open(control, "w") as f:
        f.write(text)
    out = os.path.join(workdir, "new.deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, out], check=True,
                   capture_output=True)
    return out


# Runs deb_cycle.sh in a chroot whose root is an overlay of /: a private
# mount namespace, so the overlay and its mounts vanish with it.
IN_OVERLAY = """set -e
w=$1; shift
mkdir -p "$w/upper" "$w/work" "$w/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$w/upper,workdir=$w/work" "$w/root"
mount -t proc proc "$w/root/proc"
mount --rbind /dev "$w/root/dev"
mount -t tmpfs tmpfs "$w/root/run"
mount -t tmpfs tmpfs "$w/root/tmp"
mkdir "$w/root/tmp/in"
cp "$@" "$w/root/tmp/in/"
exec chroot "$w/root" /bin/bash /tmp/in/deb_cycle.sh /tmp/in/old.deb /tmp/in/new.deb "$PORT"
"""


def check_cycle(deb, workdir):
    for tool, package in (("unshare", "util-linux"), ("promtool", "prometheus"),
                          ("curl", "curl"), ("man", "man-db")):
        need_tool(tool, package)
    need(os.geteuid() == 0, "the install cycle needs root (not root)", setup_installs=False)
    old = os.path.join(workdir, "old.deb")
    shutil.copy(deb, old)
    new = newer_build(deb, workdir)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    overlay = os.path.join(workdir, "overlay")
    script = os.path.join(SOURCE_DIR, "tests", "integration", "deb_cycle.sh")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", IN_OVERLAY, "sh",
                        overlay, script, old, new], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                                         "PORT": str(port)},
                       capture_output=True, text=True, timeout=600)
    print(p.stdout.strip())
    check(p.returncode == 0 and "step 4 ok" in p.stdout,
          "the install cycle failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr[-4000:]))


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
            check_cycle(deb, workdir)
        print("deb: %s checked" % os.path.basename(deb))


if __name__ == "__main__":
    main()
