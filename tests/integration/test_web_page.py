#!/usr/bin/env python3
"""The web page in a real browser: headless Chromium (Debian's chromium, driven
by puppeteer-core from web/node_modules; web/test/page.js does the browser
part) loads the page `gpuscope serve --simulate mixed-node` serves behind basic
auth, and checks:

- auth: the page, its assets and the API answer 401 without credentials;
- a card per GPU and MIG instance (the API's devices, in order), each with its
  model and values, the MIG cards with their profiles;
- a GPU lost through the simulator's control file shows as lost within two
  page cycles (the page polls at the sampling cadence);
- the thermal-throttling GPU (6, cooling failure) shows its thermal_throttle
  finding with evidence and action, and an SM clock that falls in its chart;
- a memory leak injected on GPU 4 shows its time to out-of-memory on the card
  and over the memory chart;
- the health and efficiency tabs render, and the page logs no script error;
- the KPI panel draws a step time from KPI totals (an /api/v1/gpus answer
  with a histogram added, standing in for the OTLP receiver).

The simulator runs 10x faster than real time, so the cooling failure heats the
GPU within seconds; the diagnosis needs 30 s of window (the serve default) and
re-runs every 10 s, which sets this test's length (about 45 s). Screenshots are
saved in <build>/test-artifacts/web/ for review.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, SOURCE_DIR, Serve, check, need,  # noqa: E402
                              need_tool, main)

PAGE_JS = os.path.join(SOURCE_DIR, "web", "test", "page.js")
ARTIFACTS = os.path.join(BUILD_DIR, "test-artifacts", "web")


def web_config(d):
    hashed = subprocess.run(["htpasswd", "-nbBC", "10", "viewer", "s3cret"], capture_output=True,
                            text=True, check=True).stdout.strip().split(":", 1)[1]
    path = os.path.join(d, "web.yml")
    with open(path, "w") as f:
        f.write("basic_auth_users:\n  viewer: '%s'\n" % hashed)
    return path


class WebPageTest(unittest.TestCase):
    def test_page_in_headless_chromium(self):
        chromium = need_tool("chromium", "chromium")
        node = need_tool("node", "nodejs")
        need_tool("htpasswd", "apache2-utils")
        need(os.path.isdir(os.path.join(SOURCE_DIR, "web", "node_modules", "puppeteer-core")),
             "web/node_modules/puppeteer-core missing (scripts/setup.sh runs npm ci in web/)")
        shutil.rmtree(ARTIFACTS, ignore_errors=True)
        with tempfile.TemporaryDirectory() as d:
            control = os.path.join(d, "control")
            open(control, "w").close()
            with Serve(["--simulate", "mixed-node", "-c", "500ms", "--web-config-file",
                        web_config(d)],
                       env={"GPUSCOPE_SIM_CONTROL": control, "GPUSCOPE_SIM_TIME_SCALE": "10"}) as s:
                cfg = {"url": s.base, "user": "viewer", "password": "s3cret", "control": control,
                       "artifacts": ARTIFACTS, "chromium": chromium, "lost_gpu": 3,
                       "thermal_gpu": "6", "leak_gpu": 4}
                p = subprocess.run([node, PAGE_JS, "check", json.dumps(cfg)], capture_output=True,
                                   text=True, timeout=180, cwd=os.path.join(SOURCE_DIR, "web"))
                check(p.returncode == 0, "page check failed:\n%s\n%s\nagent log:\n%s" % (
                    p.stdout[-3000:], p.stderr[-3000:], s.output()[-3000:]))
        result = json.loads(p.stdout.strip().splitlines()[-1])
        check(result["cards"]["cards"] == 11 and len(result["cards"]["mig"]) == 3, result)
        print(json.dumps(result, indent=1))
        print("screenshots in", ARTIFACTS)


if __name__ == "__main__":
    main()
