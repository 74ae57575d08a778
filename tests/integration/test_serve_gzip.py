#!/usr/bin/env python3
"""gzip on the wire: `gpuscope serve` answers a client that sends
Accept-Encoding: gzip with a gzip body (Content-Encoding: gzip, Vary naming
Accept-Encoding), in both formats, and a client that does not with plain text;
the gzip body inflates to an exposition of the same series. Then a real
Prometheus (which always asks for gzip) scrapes the agent: its targets are up
without error, it ingests every GPU's series, and the agent's own
gpuscope_scrapes_gzip_total, as Prometheus stored it, counts its scrapes.
"""
import gzip
import os
import re
import shutil
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (PROMETHEUS, Prometheus, Serve, check, main, need_tool,  # noqa: E402
                              parse_exposition, scrape_config, wait_until)

OM = "application/openmetrics-text; version=1.0.0"


def fetch(base, headers):
    """(headers, raw body bytes) of GET /metrics."""
    req = urllib.request.Request(base + "/metrics", headers=headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return {k.lower(): v for k, v in r.headers.items()}, r.read()


def series(text):
    """The set of series (name and labels) of an exposition, without values."""
    return {s.series for s in parse_exposition(text).samples
            if not s.name.startswith("gpuscope_scrapes")}


def check_negotiation(s):
    headers, plain = fetch(s.base, {})
    check("content-encoding" not in headers, "plain request got %s" % headers)
    check("Accept-Encoding" in headers.get("vary", ""), "no Vary: %s" % headers)
    text = plain.decode()
    check(text.startswith("# HELP"), text[:200])
    for accept in ("", OM):
        extra = {"Accept": accept} if accept else {}
        headers, body = fetch(s.base, dict(extra, **{"Accept-Encoding": "gzip"}))
        check(headers.get("content-encoding") == "gzip", "gzip request got %s" % headers)
        check("Accept-Encoding" in headers.get("vary", ""), "no Vary: %s" % headers)
        check(int(headers["content-length"]) == len(body), headers)
        inflated = gzip.decompress(body).decode()
        check(len(body) * 5 < len(inflated), "gzip %d of %d bytes" % (len(body), len(inflated)))
        if accept:
            check(inflated.endswith("# EOF\n"), inflated[-100:])
        else:
            check(series(inflated) == series(text), "gzip body has other series than plain")
    headers, _ = fetch(s.base, {"Accept-Encoding": "gzip;q=0, identity"})
    check("content-encoding" not in headers, "q=0 still got %s" % headers)


class ServeGzipTest(unittest.TestCase):
    def test_gzip_negotiated_and_scraped(self):
        need_tool(PROMETHEUS, "prometheus")
        with Serve(["--simulate", "training-8xh100", "-c", "200"]) as s:
            s.wait_healthy()
            check_negotiation(s)
            work = tempfile.mkdtemp(prefix="gpuscope-gzip-")
            prom = Prometheus(work, scrape_config(re.sub(r"^https?://", "", s.base)))
            try:
                prom.wait_ready()
                prom.wait_for("gpuscope_gpu_info", 8, timeout=60)
                prom.wait_for("DCGM_FI_DEV_GPU_TEMP", 8, timeout=30)
                wait_until(lambda: prom.query("gpuscope_scrapes_gzip_total > 1"),
                           "Prometheus's scrapes counted as gzip", timeout=60)
                up = prom.api("/api/v1/targets", {})["activeTargets"]
                check(len(up) == 1 and up[0]["health"] == "up" and not up[0]["lastError"], up)
                gz = float(prom.query("gpuscope_scrapes_gzip_total")[0]["value"][1])
                total = float(prom.query("gpuscope_scrapes_total")[0]["value"][1])
                # Of our 4 requests above 2 were plain; every scrape of Prometheus asks for gzip.
                check(total - gz <= 2,
                      "scrapes %d, gzip %d: Prometheus did not get gzip" % (total, gz))
            finally:
                prom.close()
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
