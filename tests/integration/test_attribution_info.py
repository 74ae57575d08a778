#!/usr/bin/env python3
"""`--attribution-labels info` end to end, and every shipped rule in both modes.

Two agents on the simulated 8 x H100 node with the same Slurm mapping
directory (GPU 2 shared by two jobs, GPU 5 by one): one in series mode (the
default), one in info mode. The info body must be the series body with the
holder labels removed (copies of a shared GPU's series folded into one), plus
one gpuscope_gpu_holder_info per holder, for both DCGM and native families;
promtool check metrics accepts it; a new job adds exactly one series.

Then every promtool unit test of deploy/prometheus/tests runs a second time
with its input rewritten to info mode (attribution_info.py) and its
expectations unchanged: every shipped rule answers the same in both modes.
"""
import glob
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attribution_info import HOLDER_LABELS, is_holder_series, parse_series, to_info_mode  # noqa: E402
from gpuscope_testlib import (SOURCE_DIR, Serve, check, main, need_tool, promtool)  # noqa: E402

RULE_TESTS = os.path.join(SOURCE_DIR, "deploy", "prometheus", "tests")
# Two agents' values differ: series are compared by name and labels only.
# Both ready: GPM families (two GPM samples) on the last GPU.
READY = 'gpuscope_sm_active_seconds_total{gpu="7"'


def series_of(body):
    """Names and labels of every sample line (the value cut), comments left out."""
    return [line.rsplit(" ", 1)[0] for line in body.splitlines()
            if line and not line.startswith("#")]


def by_family(series):
    out = {}
    for s in series:
        out.setdefault(s.split("{", 1)[0], set()).add(s)
    return out


def without_holder(series):
    name, labels = parse_series(series)
    if not is_holder_series(name, labels):
        return series
    kept = [(k, v) for k, v in labels if k not in HOLDER_LABELS]
    return name + "{" + ",".join('%s="%s"' % kv for kv in kept) + "}"


class AttributionInfoTest(unittest.TestCase):
    def setUp(self):
        self.jobs = tempfile.mkdtemp(prefix="gpuscope-info-")
        self.addCleanup(shutil.rmtree, self.jobs, True)
        for gpu, job in (("2", "4242\n4243\n"), ("5", "777\n")):
            with open(os.path.join(self.jobs, gpu), "w") as f:
                f.write(job)

    def agent(self, mode):
        return Serve(["--simulate", "training-8xh100", "--hpc-job-mapping-dir", self.jobs,
                      "--attribution-refresh", "500ms", "--attribution-labels", mode,
                      "--profile", "full"])

    def test_info_body_is_the_series_body_without_holder_labels(self):
        with self.agent("series") as plain, self.agent("info") as info:
            has_jobs = lambda b: 'hpc_job="4243"' in b and 'hpc_job="777"' in b and READY in b  # noqa: E731
            series_body = plain.wait_metrics(has_jobs, "series mode: the jobs")
            info_body = info.wait_metrics(has_jobs, "info mode: the jobs")
        holders = [s for s in series_of(info_body) if s.startswith("gpuscope_gpu_holder_info{")]
        check(sorted(holders) == sorted([
            'gpuscope_gpu_holder_info{gpu="2",uuid="%s",hpc_job="4242",workload="4242"}' % u
            for u in re.findall(r'gpuscope_gpu_info\{gpu="2",uuid="([^"]+)"', info_body)] + [
            'gpuscope_gpu_holder_info{gpu="2",uuid="%s",hpc_job="4243",workload="4243"}' % u
            for u in re.findall(r'gpuscope_gpu_info\{gpu="2",uuid="([^"]+)"', info_body)] + [
            'gpuscope_gpu_holder_info{gpu="5",uuid="%s",hpc_job="777",workload="777"}' % u
            for u in re.findall(r'gpuscope_gpu_info\{gpu="5",uuid="([^"]+)"', info_body)]),
              "one holder info series per holder: %s" % holders)
        # Each holder's measured SM share is per holder by nature: it keeps
        # the holder's labels in both modes (one series per holder, bounded).
        shares = [s for s in series_of(info_body)
                  if s.startswith("gpuscope_gpu_holder_sm_share_ratio{")]
        holder_labels = {h[h.index("{"):] for h in holders}
        for share in shares:
            check("hpc_job=" not in share or share[share.index("{"):] in holder_labels,
                  "a share series of no holder: %s" % share)
        rest = [s for s in series_of(info_body) if s not in holders and s not in shares]
        for s in rest:
            check("hpc_job=" not in s and "workload=" not in s, "holder label on %s" % s)
        # Family by family (a diagnosis family may appear a cycle later in one
        # of the two agents), the series are the series mode's without holders.
        expected = by_family(without_holder(s) for s in series_of(series_body))
        got = by_family(rest)
        common = sorted(set(expected) & set(got))
        check(len(common) >= 40, "families in both bodies: %s" % common)
        for family in common:
            self.assertEqual(sorted(got[family]), sorted(expected[family]), family)
        self.assertEqual(len(rest), len(set(rest)), "duplicate series in info mode")
        # The DCGM families lost their hpc_job label too.
        check(any(s.startswith('DCGM_FI_DEV_GPU_UTIL{gpu="2"') for s in rest), "DCGM series")
        need_tool("promtool", "prometheus")
        # The lint of the native families (DCGM's camelCase names are dcgm-exporter's).
        native = "".join(line + "\n" for line in info_body.splitlines()
                         if not re.match(r"(# (HELP|TYPE) )?DCGM_", line))
        rc, out = promtool(["check", "metrics"], text=native)
        self.assertEqual(rc, 0, out)

    def test_a_new_job_adds_one_series_per_gpu(self):
        with self.agent("info") as info:
            ready = lambda b: 'hpc_job="777"' in b and READY in b  # noqa: E731
            info.wait_metrics(ready, "job 777")
            time.sleep(2)  # a diagnosis family's first cycle
            before = set(series_of(info.get("/metrics")[2]))
            with open(os.path.join(self.jobs, "5"), "w") as f:
                f.write("778\n")
            after = set(series_of(info.wait_metrics(lambda b: 'hpc_job="778"' in b, "job 778")))
        added = sorted(after - before)
        # The holder's info series, and its measured SM share on a GPU whose
        # driver reports per-process samples (the simulator's does).
        self.assertEqual(len(added), 2, added)
        check(added[0].startswith('gpuscope_gpu_holder_info{gpu="5"'), added[0])
        check(added[1].startswith('gpuscope_gpu_holder_sm_share_ratio{gpu="5"'), added[1])

    def test_bad_mode_is_refused(self):
        agent = Serve(["--simulate", "training-8xh100", "--attribution-labels", "labels"],
                      wait=False)
        agent.proc.wait(timeout=10)
        code = agent.stop(expect_code=None)
        check(code == 2, "exit code %s" % code)
        check("attribution-labels: 'labels' is not series or info" in agent.final_output,
              agent.final_output)


class RulesInBothModesTest(unittest.TestCase):
    def test_every_rule_unit_test_passes_on_info_mode_input(self):
        need_tool("promtool", "prometheus")
        tests = sorted(glob.glob(os.path.join(RULE_TESTS, "*.yml")))
        check(len(tests) >= 6, "rule tests: %s" % tests)
        tmp = tempfile.mkdtemp(prefix="gpuscope-info-rules-")
        self.addCleanup(shutil.rmtree, tmp, True)
        rewritten_any = False
        for path in tests:
            with self.subTest(test=os.path.basename(path)):
                with open(path) as f:
                    doc = yaml.safe_load(f)
                before = yaml.safe_dump(doc)
                doc = to_info_mode(doc)
                rewritten_any |= "gpuscope_gpu_holder_info" in yaml.safe_dump(doc)
                self.assertNotEqual(before, "")
                doc["rule_files"] = [os.path.join(RULE_TESTS, r) for r in doc["rule_files"]]
                out = os.path.join(tmp, os.path.basename(path))
                with open(out, "w") as f:
                    yaml.safe_dump(doc, f, sort_keys=False)
                rc, text = promtool(["test", "rules", out], cwd=tmp)
                self.assertEqual(rc, 0, text)
        check(rewritten_any, "no rule test had attributed input to rewrite")


if __name__ == "__main__":
    main()
