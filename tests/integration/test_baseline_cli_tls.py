"""`gpuscope baseline` against a real Prometheus behind TLS, client
certificates and basic auth (Prometheus's --web.config.file): the CLI's
--ca-file, --cert-file/--key-file and --basic-auth-user/--basic-auth-password-file
get through; each missing or wrong one fails with an error that says why
(TLS verification on, never skipped). Certificates come from openssl."""
import base64
import os
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, PROMETHEUS, free_port, need, need_tool,  # noqa: E402
                              run, stop_process, main, wait_until)
from test_serve_tls import bcrypt, make_ca, make_cert, write  # noqa: E402


class BaselineCliTlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need_tool("prometheus", "prometheus")
        need_tool("openssl", "openssl")
        need_tool("htpasswd", "apache2-utils")
        need(os.path.exists(GPUSCOPE), "gpuscope is not built", setup_installs=False)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpuscope-baseline-tls-")
        d = cls.tmp.name
        ca_key, cls.ca = make_ca(d, "ca")
        skey, scrt = make_cert(d, "server", ca_key, cls.ca, "IP:127.0.0.1")
        cls.ckey, cls.ccrt = make_cert(d, "client", ca_key, cls.ca)
        cls.pw = write(os.path.join(d, "pw"), "s3cret\n")
        cls.bad_pw = write(os.path.join(d, "bad"), "wrong\n")
        web = write(os.path.join(d, "web.yml"),
                    "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                    "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\n"
                    "basic_auth_users:\n  prometheus: '%s'\n"
                    % (scrt, skey, cls.ca, bcrypt("prometheus", "s3cret")))
        config = write(os.path.join(d, "prometheus.yml"), "global:\n  scrape_interval: 1m\n")
        port = free_port()
        cls.url = "https://127.0.0.1:%d" % port
        cls.log = open(os.path.join(d, "prometheus.log"), "w")
        cls.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + config, "--web.config.file=" + web,
             "--storage.tsdb.path=" + os.path.join(d, "data"),
             "--web.listen-address=127.0.0.1:%d" % port], stdout=cls.log,
            stderr=subprocess.STDOUT)
        ctx = ssl.create_default_context(cafile=cls.ca)
        ctx.load_cert_chain(cls.ccrt, cls.ckey)
        auth = "Basic " + base64.b64encode(b"prometheus:s3cret").decode()

        def ready():
            try:
                req = urllib.request.Request(cls.url + "/-/ready", headers={"Authorization": auth})
                with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_until(ready, "Prometheus behind TLS", 60)

    @classmethod
    def tearDownClass(cls):
        stop_process(cls.proc)
        cls.log.close()
        cls.tmp.cleanup()

    def baseline(self, *extra):
        return run(["baseline", "--prometheus", self.url] + list(extra), timeout=60)

    def full(self, **drop):
        args = {"--ca-file": self.ca, "--cert-file": self.ccrt, "--key-file": self.ckey,
                "--basic-auth-user": "prometheus", "--basic-auth-password-file": self.pw}
        for k, v in drop.items():
            key = "--" + k.replace("_", "-")
            if v is None:
                args.pop(key)
            else:
                args[key] = v
        return [x for kv in args.items() for x in kv]

    def test_all_options_get_through(self):
        rc, out, err = self.baseline(*self.full())
        self.assertEqual(rc, 0, err)
        self.assertIn("No baselines recorded yet", out)
        rc, out, err = self.baseline("--json", *self.full())
        self.assertEqual(rc, 0, err)
        self.assertIn('"baselines": []', out)

    def test_unknown_ca_fails_closed(self):
        rc, _, err = self.baseline(*self.full(ca_file=None))
        self.assertNotEqual(rc, 0)
        self.assertIn("Prometheus at " + self.url, err)
        self.assertRegex(err.lower(), "certificate|ssl|tls")

    def test_wrong_password_and_no_client_certificate(self):
        rc, _, err = self.baseline(*self.full(basic_auth_password_file=self.bad_pw))
        self.assertNotEqual(rc, 0)
        self.assertIn("HTTP 401", err)
        rc, _, err = self.baseline(*self.full(cert_file=None, key_file=None))
        self.assertNotEqual(rc, 0)
        self.assertIn("Prometheus at " + self.url, err)


if __name__ == "__main__":
    main()
