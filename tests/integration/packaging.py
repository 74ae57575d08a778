"""Helpers of the packaging tests (test_image_stage.py, test_deb.py): stage
the image's tree with scripts/stage-image.sh, as deploy/Dockerfile does, and
run a staged or extracted gpuscope. Not a test itself (ctest registers only
test_*.py)."""
import os
import re
import subprocess

from gpuscope_testlib import SOURCE_DIR, Serve, check, check_exit, clean_env

# The image's Release build, shared by the packaging tests and `make stage`
# (which builds it first, so a test only re-runs the install).
IMAGE_BUILD_DIR = os.path.join(SOURCE_DIR, "build", "image")
VERSION_LINE = re.compile(r"^gpuscope (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)$")


def stage(root):
    """Runs scripts/stage-image.sh into root; returns root/usr/bin/gpuscope."""
    p = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "stage-image.sh"), root,
                        IMAGE_BUILD_DIR], capture_output=True, text=True, timeout=3000)
    check(p.returncode == 0, "stage-image.sh failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
    binary = os.path.join(root, "usr", "bin", "gpuscope")
    check(os.access(binary, os.X_OK), "stage-image.sh did not install " + binary)
    return binary


def check_runs(binary, wrapper=(), extra_args=()):
    """binary --version names a semantic version and a commit; `serve
    --simulate training-8xh100` answers /metrics with the DCGM families and
    gpuscope_build_info. Returns the serve's process id's /proc status text."""
    p = subprocess.run(list(wrapper) + [binary, "--version"], capture_output=True, text=True,
                       env=clean_env(), timeout=30)
    check_exit("%s --version" % binary, p.returncode, p.stdout + p.stderr)
    first = p.stdout.splitlines()[0] if p.stdout else ""
    m = VERSION_LINE.match(first)
    check(m, "--version's first line is %r" % first)
    check(os.path.dirname(os.path.dirname(binary)) in p.stdout,
          "--version does not find the simulator beside the binary:\n" + p.stdout)
    with Serve(["--simulate", "training-8xh100"] + list(extra_args), binary=binary,
               wrapper=wrapper) as s:
        s.wait_healthy()
        status, _, body = s.get("/metrics")
        check(status == 200 and re.search(r"^DCGM_FI_DEV_GPU_UTIL\{", body, re.M),
              "/metrics: %s\n%s" % (status, body[:500]))
        build = re.search(r'^gpuscope_build_info\{(.*)\} 1$', body, re.M)
        check(build and 'version="%s"' % m.group(1) in build.group(1) and
              'commit="%s"' % m.group(2) in build.group(1),
              "gpuscope_build_info does not match --version: %s" % (build and build.group(0)))
        with open("/proc/%d/status" % s.proc.pid) as f:
            proc_status = f.read()
        warnings = [line for line in s.output().splitlines() if "[warning]" in line]
        check(not warnings, "the default configuration warned:\n" + "\n".join(warnings))
    return proc_status
