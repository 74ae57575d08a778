#!/usr/bin/env python3
"""Regenerates the README's picture of the web page (make screenshot):
`gpuscope serve --simulate mixed-node` (simulator 10x real time, so the
cooling failure of GPU 6 shows within seconds), headless Chromium through
web/test/page.js, the overview with GPU 6's charts and diagnosis opened.
It waits for the diagnosis (about 40 s: 30 s of window, re-run every 10 s).

Usage: screenshot.py BUILD_DIR OUT.png
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
os.environ.setdefault("GPUSCOPE_BUILD_DIR", os.path.abspath(sys.argv[1]))
from gpuscope_testlib import Serve  # noqa: E402


def main():
    out = os.path.abspath(sys.argv[2])
    chromium = shutil.which("chromium")
    if not chromium or not shutil.which("node"):
        sys.exit("screenshot: chromium and node are needed (scripts/setup.sh installs them)")
    with Serve(["--simulate", "mixed-node", "-c", "500ms", "--hostname", "gpu-node-1"],
               env={"GPUSCOPE_SIM_TIME_SCALE": "10"}) as s:
        cfg = {"url": s.base, "out": out, "chromium": chromium, "thermal_gpu": "6"}
        p = subprocess.run(["node", os.path.join(ROOT, "web", "test", "page.js"), "screenshot",
                            json.dumps(cfg)], cwd=os.path.join(ROOT, "web"), timeout=240)
    if p.returncode != 0:
        sys.exit("screenshot: page.js failed")
    print("wrote", out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
