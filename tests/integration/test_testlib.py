#!/usr/bin/env python3
"""The test helpers themselves, which every other integration test trusts:

- the runner (gpuscope_testlib.main), on small scripts run as ctest runs a
  test: exit 0 when all pass, 1 naming the failed test, SKIP_RC (77) naming
  the skipped one and its reason, 1 again for that skip under CI=true (a
  tool scripts/setup.sh installs), 1 when no test ran; tests in the order
  written;
- the exposition parser (parse_exposition): the golden bodies of the export
  unit tests (tests/golden/export_*.{prom,om}) read alike in both formats,
  label escapes, timestamps, exemplars and histograms read right, and every
  kind of malformed body fails.

Needs no build. stdlib only.
"""
import math
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpuscope_testlib import SKIP_RC, SOURCE_DIR, main, parse_exposition  # noqa: E402

GOLDEN = os.path.join(SOURCE_DIR, "tests", "golden")
PROBE = """import sys
import unittest
sys.path.insert(0, %r)
from gpuscope_testlib import check, main, need_tool


class Probe(unittest.TestCase):
%s

if __name__ == "__main__":
    main()
"""


def run_probe(*methods, ci=False):
    """(exit status, output) of a test script whose TestCase has methods."""
    body = "".join(textwrap.indent(textwrap.dedent(m), "    ") for m in methods)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "probe.py")
        with open(path, "w") as f:
            f.write(PROBE % (HERE, body))
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        if ci:
            env["CI"] = "true"
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env,
                           timeout=60)
    return p.returncode, p.stdout + p.stderr


MISSING_TOOL = """
    def test_tool(self):
        need_tool("gpuscope-no-such-tool", "gpuscope-no-such-package")
"""


class RunnerTest(unittest.TestCase):
    def test_all_pass(self):
        rc, out = run_probe("""
            def test_a(self):
                check(True, "")
        """)
        self.assertEqual(rc, 0, out)

    def test_failure_names_the_test(self):
        rc, out = run_probe("""
            def test_good(self):
                pass

            def test_bad(self):
                check(1 == 2, "one is not two")
        """)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED: __main__.Probe.test_bad", out)
        self.assertIn("one is not two", out)
        self.assertNotIn("FAILED: __main__.Probe.test_good", out)

    def test_error_fails(self):
        rc, out = run_probe("""
            def test_raises(self):
                {}["missing"]
        """)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED: __main__.Probe.test_raises", out)

    def test_missing_tool_skips(self):
        rc, out = run_probe(MISSING_TOOL, """
            def test_other(self):
                pass
        """)
        self.assertEqual(rc, SKIP_RC, out)
        self.assertIn("SKIPPED: __main__.Probe.test_tool: gpuscope-no-such-tool not installed",
                      out)

    def test_missing_tool_fails_under_ci(self):
        rc, out = run_probe(MISSING_TOOL, ci=True)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED: __main__.Probe.test_tool", out)
        self.assertIn("CI=true", out)
        self.assertNotIn("SKIPPED", out)

    def test_skip_in_set_up_class_skips(self):
        rc, out = run_probe("""
            @classmethod
            def setUpClass(cls):
                need_tool("gpuscope-no-such-tool", "gpuscope-no-such-package")

            def test_a(self):
                pass
        """)
        self.assertEqual(rc, SKIP_RC, out)
        self.assertIn("SKIPPED: setUpClass (__main__.Probe)", out)

    def test_no_test_fails(self):
        rc, out = run_probe("""
            def helper(self):
                pass
        """)
        self.assertEqual(rc, 1, out)

    def test_order_as_written(self):
        rc, out = run_probe("""
            def test_b(self):
                print("ran b")

            def test_a(self):
                print("ran a")
        """)
        self.assertEqual(rc, 0, out)
        self.assertLess(out.index("ran b"), out.index("ran a"), out)


def golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return f.read()


HISTOGRAM = r"""# HELP request_seconds Request time.\nSecond line \\ done.
# TYPE request_seconds histogram
request_seconds_bucket{le="0.1"} 3 1700000000000
request_seconds_bucket{le="+Inf"} 5
request_seconds_sum 1.5e-1
request_seconds_count 5
# a plain comment
odd{path="a\"b\nc\\d",empty=""} NaN

bare -Inf
"""
OPENMETRICS = r"""# TYPE jobs counter
# HELP jobs Jobs \"done\".
jobs_total{kind="a"} 3 # {trace_id="abc"} 1 1700000000.5
jobs_created{kind="a"} 1700000000
# TYPE build info
build_info{version="1"} 1
# EOF
"""
# (body, what the failure says) of bodies the parser must refuse.
MALFORMED_TEXT = [
    ('x{a="1"} one\n', "not a sample line"),
    ('x{a="1"}1\n', "not a sample line"),  # no space before the value
    ('x{a="1", b="2"} 1\n', "not a sample line"),  # a space in the labels
    ("x{a=1} 1\n", "not a sample line"),  # an unquoted label value
    ("x 1_0\n", "not a sample line"),  # Python's float() takes it
    ('x{a="\\t"} 1\n', "undefined escape"),
    ('# HELP x say \\"hi\\"\n', "undefined escape"),  # the text format's HELP escapes no quote
    ('x{a="1",a="2"} 1\n', "a label twice"),
    ('x{a="1",b="2"} 1\nx{b="2",a="1"} 2\n', "a series twice"),
    ('x{a="1"} 1\ny 1\nx{a="2"} 1\n', "samples of x are not together"),
    ("# TYPE x gauge\nx 1\n# TYPE x gauge\n", "family x described twice"),
    ("# TYPE x gauge\n# TYPE x counter\n", "second TYPE"),
    ("# TYPE x widget\n", "unknown type"),
    ("# TYPE x info\n", "unknown type"),  # OpenMetrics only
    ('x 1 # {t="1"} 1\n', "exemplars are OpenMetrics only"),
]
MALFORMED_OPENMETRICS = [
    ("x 1\n", "ends with '# EOF'"),
    ("x 1\n# EOF\nx 2\n# EOF\n", "allows only HELP, TYPE, UNIT, EOF"),
    ("x 1\n\n# EOF\n", "no blank lines"),
    ("# hello\nx 1\n# EOF\n", "allows only HELP, TYPE, UNIT, EOF"),
    ("# TYPE x untyped\nx 1\n# EOF\n", "unknown type"),
]


class ExpositionParserTest(unittest.TestCase):
    def test_golden_bodies_read_alike_in_both_formats(self):
        for name in ("export_full_gpu", "export_small"):
            text = parse_exposition(golden(name + ".prom"))
            om = parse_exposition(golden(name + ".om"), openmetrics=True)
            self.assertGreater(len(text.samples), 30, name)
            self.assertEqual([(s.name, s.labels, s.value) for s in text.samples],
                             [(s.name, s.labels, s.value) for s in om.samples], name)
            self.assertEqual([f.help for f in text.families.values()],
                             [f.help for f in om.families.values()], name)
            for t, o in zip(text.families.values(), om.families.values()):
                self.assertTrue(t.samples and all(t.owns(s.name) for s in t.samples), t.name)
                if o.type == "counter":  # OpenMetrics names the family without _total
                    self.assertEqual((t.name, t.type), (o.name + "_total", "counter"))
                elif o.type == "info":
                    self.assertEqual((t.name, t.type), (o.name + "_info", "gauge"))

    def test_golden_escapes_and_lookups(self):
        om = parse_exposition(golden("export_full_gpu.om"), openmetrics=True)
        self.assertEqual(om.families["gpuscope_collector_up"].help, '1 when "the" collector works.')
        gpu = om.find("DCGM_FI_DEV_GPU_UTIL")
        self.assertEqual(len(gpu), 1)
        self.assertEqual(gpu[0].labels["modelName"], 'Odd "model" \\ name')
        self.assertEqual(list(gpu[0].labels)[:2], ["gpu", "UUID"])  # the order written
        self.assertEqual(om.families["gpuscope_gpu"].type, "info")
        self.assertEqual(om.value("gpuscope_gpu_info", name='Odd "model" \\ name'), 1)
        self.assertEqual(om.value("gpuscope_collector_up", collector="nvml"), 1)
        self.assertIsNone(om.value("gpuscope_collector_up", collector="none"))
        text = parse_exposition(golden("export_small.prom"))
        xids = text.find("gpuscope_xid_errors_total", gpu="1")
        self.assertEqual({s.labels["xid"]: s.value for s in xids}, {"13": 4, "79": 1})
        with self.assertRaises(AssertionError):
            text.value("gpuscope_xid_errors_total", gpu="1")  # two samples

    def test_text_format(self):
        body = parse_exposition(HISTOGRAM)
        self.assertEqual(list(body.families), ["request_seconds", "odd", "bare"])
        hist = body.families["request_seconds"]
        self.assertEqual((hist.type, hist.help), ("histogram",
                                                  "Request time.\nSecond line \\ done."))
        self.assertEqual([s.name for s in hist.samples], ["request_seconds_bucket"] * 2 +
                         ["request_seconds_sum", "request_seconds_count"])
        self.assertEqual(hist.samples[0].timestamp, 1700000000000)
        self.assertIsNone(hist.samples[1].timestamp)
        self.assertEqual(body.value("request_seconds_bucket", le="+Inf"), 5)
        self.assertEqual(body.value("request_seconds_sum"), 0.15)
        odd = body.find("odd")[0]
        self.assertEqual(odd.labels, {"path": 'a"b\nc\\d', "empty": ""})
        self.assertTrue(math.isnan(odd.value))
        self.assertIsNone(body.families["odd"].type)
        self.assertEqual(body.value("bare"), -math.inf)
        self.assertEqual(body.find("bare")[0].series, ("bare", ()))

    def test_openmetrics(self):
        body = parse_exposition(OPENMETRICS, openmetrics=True)
        jobs = body.families["jobs"]
        self.assertEqual((jobs.type, jobs.help), ("counter", 'Jobs "done".'))
        total = body.find("jobs_total", kind="a")[0]
        self.assertEqual(total.value, 3)
        self.assertEqual(total.exemplar, ({"trace_id": "abc"}, 1, 1700000000.5))
        self.assertEqual(body.value("jobs_created", kind="a"), 1700000000)
        self.assertEqual(body.families["build"].samples[0].name, "build_info")
        self.assertEqual(len(parse_exposition(OPENMETRICS.rstrip("\n"), True).samples), 3)
        self.assertEqual(parse_exposition("").samples, [])

    def test_malformed_bodies_fail(self):
        for openmetrics, cases in ((False, MALFORMED_TEXT), (True, MALFORMED_OPENMETRICS)):
            for text, says in cases:
                with self.subTest(text), self.assertRaisesRegex(AssertionError, re.escape(says)):
                    parse_exposition(text, openmetrics)
        with self.assertRaisesRegex(AssertionError, r"line 3: not a sample line: 'x\{ 2'"):
            parse_exposition("# TYPE x gauge\nx 1\nx{ 2\n")


if __name__ == "__main__":
    main()
