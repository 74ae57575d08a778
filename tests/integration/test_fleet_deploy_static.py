#!/usr/bin/env python3
"""deploy/fleet without running it (the 200-node run is `make fleet`):
Prometheus's agent-mode config passes `promtool check config`, the vmagent
scrape config has the gpuscope job with file_sd and a sample limit, run-local.sh
parses, and the Kubernetes kustomization renders the agents in info mode with
a PodMonitor that selects them instead of the ServiceMonitor.
"""
import os
import shutil
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, check, main, need, promtool  # noqa: E402

FLEET = os.path.join(SOURCE_DIR, "deploy", "fleet")


class FleetDeployStaticTest(unittest.TestCase):
    def test_prometheus_agent_config(self):
        rc, out = promtool(["check", "config", os.path.join(FLEET, "prometheus-agent.yml")])
        self.assertEqual(rc, 0, out)
        with open(os.path.join(FLEET, "prometheus-agent.yml")) as f:
            config = yaml.safe_load(f)
        check(config["remote_write"][0]["url"].endswith("/api/v1/write"), config["remote_write"])
        check("collector" in config["global"]["external_labels"], "shards need a collector label")

    def test_vmagent_scrape_config(self):
        with open(os.path.join(FLEET, "scrape.yml")) as f:
            config = yaml.safe_load(f)
        jobs = {j["job_name"]: j for j in config["scrape_configs"]}
        check("gpuscope" in jobs, jobs)
        job = jobs["gpuscope"]
        check(job["sample_limit"] >= 5000, "an 8-GPU node sends ~700 series")
        # vmagent 1.79 refuses keys it does not know (refresh_interval in file_sd).
        check(set(job["file_sd_configs"][0]) == {"files"}, job["file_sd_configs"])

    def test_run_local_parses(self):
        r = subprocess.run(["sh", "-n", os.path.join(FLEET, "run-local.sh")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([os.path.join(FLEET, "run-local.sh")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_kustomization_renders_info_mode_and_a_pod_monitor(self):
        need(shutil.which("kubectl"), "kubectl (for kustomize) not installed", setup_installs=False)
        r = subprocess.run(["kubectl", "kustomize", os.path.join(FLEET, "k8s")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(r.stdout) if d}
        kinds = {k for k, _ in docs}
        check("PodMonitor" in kinds and "PrometheusRule" in kinds, kinds)
        check("ServiceMonitor" not in kinds, "scraped twice: %s" % kinds)
        ds = docs[("DaemonSet", "gpuscope")]
        env = {e["name"]: e.get("value") for e in ds["spec"]["template"]["spec"]["containers"][0]["env"]}
        self.assertEqual(env.get("GPUSCOPE_ATTRIBUTION_LABELS"), "info")
        selector = docs[("PodMonitor", "gpuscope")]["spec"]["selector"]["matchLabels"]
        pod_labels = ds["spec"]["template"]["metadata"]["labels"]
        check(all(pod_labels.get(k) == v for k, v in selector.items()), (selector, pod_labels))


if __name__ == "__main__":
    main()
