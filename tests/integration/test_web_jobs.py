#!/usr/bin/env python3
"""The web page's Jobs tab in headless Chromium (web/test/page.js `jobs`):
on the job-report node (tests/integration/jobs_fixture.py) Slurm job 4242
ends (its mapping files removed) while job 77 runs; the tab lists both jobs
and their workloads, 4242 as ended, with their GPUs and GPU-hours, and the
page logs no script error. The screenshot lands in
<build>/test-artifacts/web/web-jobs.png (docs/images/web-jobs.png is a copy).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (BUILD_DIR, SOURCE_DIR, Serve, check, main, need,  # noqa: E402
                              need_tool, wait_until)
from jobs_fixture import end_job, make_node  # noqa: E402

PAGE_JS = os.path.join(SOURCE_DIR, "web", "test", "page.js")
# Its own folder: test_web_page empties test-artifacts/web when it starts.
ARTIFACTS = os.path.join(BUILD_DIR, "test-artifacts", "web-jobs")


class WebJobsTest(unittest.TestCase):
    def test_jobs_tab(self):
        chromium = need_tool("chromium", "chromium")
        node = need_tool("node", "nodejs")
        need(os.path.isdir(os.path.join(SOURCE_DIR, "web", "node_modules", "puppeteer-core")),
             "web/node_modules/puppeteer-core missing (scripts/setup.sh runs npm ci in web/)")
        with tempfile.TemporaryDirectory() as d:
            scenario, mapping = make_node(d)
            with Serve(["--simulate", scenario, "--hpc-job-mapping-dir", mapping,
                        "--attribution-refresh", "100ms", "--hostname", "gpu-node-1"]) as s:
                s.wait_healthy()
                wait_until(lambda: s.get("/api/v1/jobs?kind=job&id=4242")[0] == 200, "job 4242")
                time.sleep(3)
                end_job(mapping)
                wait_until(lambda: json.loads(s.get("/api/v1/jobs?kind=job&id=4242")[2])["end"]
                           is not None, "job 4242 ended")
                os.makedirs(ARTIFACTS, exist_ok=True)
                out = os.path.join(ARTIFACTS, "web-jobs.png")
                cfg = {"url": s.base, "chromium": chromium, "out": out,
                       "rows": ["job:4242", "job:77", "workload:4242", "workload:77"],
                       "ended": ["job:4242"]}
                p = subprocess.run([node, PAGE_JS, "jobs", json.dumps(cfg)], capture_output=True,
                                   text=True, timeout=120, cwd=os.path.join(SOURCE_DIR, "web"))
                check(p.returncode == 0, "page jobs failed:\n%s\n%s" % (p.stdout[-2000:],
                                                                         p.stderr[-2000:]))
        rows = {r[0]: r[1:] for r in json.loads(p.stdout.strip().splitlines()[-1])["rows"]}
        # Columns: holder, state, GPUs, GPU-hours, ...
        check(rows["job:77"][1] == "running" and rows["job:77"][2] == "2", rows["job:77"])
        check(rows["job:4242"][1].startswith("ended") and rows["job:4242"][2] == "0, 1",
              rows["job:4242"])
        check(float(rows["job:4242"][3]) >= 0, rows["job:4242"])
        print("web: Jobs tab lists %d holders; screenshot %s" % (len(rows), out))


if __name__ == "__main__":
    main()
