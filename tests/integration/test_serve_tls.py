#!/usr/bin/env python3
"""TLS, client certificates and basic auth of `gpuscope serve` through an
exporter-toolkit web-config file, checked with curl:
  - basic auth (bcrypt from `htpasswd -nbBC 10`): no or wrong password 401,
    right password 200;
  - TLS: the server certificate verifies against our CA; plain HTTP to the TLS
    port fails;
  - mTLS (RequireAndVerifyClientCert): a request without a client certificate
    is rejected, one with a certificate signed by the client CA gets 200.
Certificates come from openssl in a temporary folder.
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import Serve, check, main, temp_dir  # noqa: E402


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, timeout=60)


def make_ca(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".crt")
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
       "-subj", "/CN=" + name, "-keyout", key, "-out", crt)
    return key, crt


def make_cert(d, name, ca_key, ca_crt, san=None):
    key, csr, crt = (os.path.join(d, name + ext) for ext in (".key", ".csr", ".crt"))
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
       "-keyout", key, "-out", csr)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\n" % (san or "DNS:" + name))
    sh("openssl", "x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
       "-CAcreateserial", "-days", "2", "-out", crt, "-extfile", ext)
    return key, crt


def curl(url, *extra):
    """HTTP status as an int; 0 when the connection or handshake failed."""
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                        "--max-time", "10"] + list(extra) + [url],
                       capture_output=True, text=True, timeout=30)
    try:
        return int(p.stdout.strip() or "0")
    except ValueError:
        return 0


def bcrypt(user, password):
    p = subprocess.run(["htpasswd", "-nbBC", "10", user, password], capture_output=True,
                       text=True, check=True)
    return p.stdout.strip().split(":", 1)[1]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def agent_web_config(d, user="ops", password="s3cret"):
    """An agent's web config as an operator writes it: a certificate for 127.0.0.1 signed by
    a new CA, and one basic-auth user. Returns (CA certificate, web config, password file)."""
    ca_key, ca = make_ca(d, "ca")
    key, cert = make_cert(d, "server", ca_key, ca, "IP:127.0.0.1")
    pw = write(os.path.join(d, "pw"), password + "\n")
    web = write(os.path.join(d, "web.yml"),
                "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                "basic_auth_users:\n  %s: '%s'\n" % (cert, key, user, bcrypt(user, password)))
    return ca, web, pw


class ServeTlsTest(unittest.TestCase):
    def setUp(self):
        self.d = temp_dir(self, "gpuscope-tls-")

    def test_basic_auth(self):
        config = write(os.path.join(self.d, "auth.yml"),
                       "basic_auth_users:\n  prometheus: '%s'\n" % bcrypt("prometheus", "s3cret"))
        with Serve(["--simulate", "training-8xh100", "--web-config-file", config]) as s:
            url = s.base + "/metrics"
            check(curl(url) == 401, "no credentials")
            check(curl(url, "-u", "prometheus:wrong") == 401, "wrong password")
            check(curl(url, "-u", "nobody:s3cret") == 401, "unknown user")
            check(curl(url, "-u", "prometheus:s3cret") == 200, "right password")

    def test_tls_and_mtls(self):
        ca_key, ca_crt = make_ca(self.d, "server-ca")
        key, crt = make_cert(self.d, "localhost", ca_key, ca_crt, "DNS:localhost,IP:127.0.0.1")
        client_ca_key, client_ca_crt = make_ca(self.d, "client-ca")
        client_key, client_crt = make_cert(self.d, "scraper", client_ca_key, client_ca_crt)
        tls = write(os.path.join(self.d, "tls.yml"),
                    "tls_server_config:\n  cert_file: localhost.crt\n  key_file: localhost.key\n")
        with Serve(["--simulate", "training-8xh100", "--web-config-file", tls],
                   scheme="https") as s:
            check(curl(s.base + "/metrics", "--cacert", ca_crt) == 200, "TLS with our CA")
            check(curl(s.base + "/metrics") == 0, "untrusted certificate accepted")
            check(curl("http://127.0.0.1:%d/metrics" % s.port) != 200, "plain HTTP served")
        mtls = write(os.path.join(self.d, "mtls.yml"),
                     "tls_server_config:\n  cert_file: localhost.crt\n  key_file: localhost.key\n"
                     "  client_ca_file: client-ca.crt\n"
                     "  client_auth_type: RequireAndVerifyClientCert\n")
        with Serve(["--simulate", "training-8xh100", "--web-config-file", mtls],
                   scheme="https") as s:
            url = s.base + "/metrics"
            check(curl(url, "--cacert", ca_crt) != 200, "no client certificate accepted")
            wrong_key, wrong_crt = make_cert(self.d, "intruder", ca_key, ca_crt)
            check(curl(url, "--cacert", ca_crt, "--cert", wrong_crt, "--key", wrong_key) != 200,
                  "client certificate from another CA accepted")
            check(curl(url, "--cacert", ca_crt, "--cert", client_crt, "--key", client_key) == 200,
                  "right client certificate refused")


if __name__ == "__main__":
    main()
