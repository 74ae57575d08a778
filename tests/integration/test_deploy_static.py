#!/usr/bin/env python3
"""Static checks of the deployable stack in deploy/ (no agent, no network).

- promtool: the Prometheus configuration, every rule file, every rule unit
  test (deploy/prometheus/tests/*.yml), and the PromQL of every dashboard panel;
- amtool: the Alertmanager configuration;
- docker compose config (or Debian's docker-compose where the plugin is
  missing) and a structural check of the compose file that always runs;
- the Dockerfile: multi-stage, slim runtime with only the runtime libraries,
  non-root user;
- Kubernetes manifests: required fields, selectors that match, the generated
  PrometheusRule up to date and equal to the rule files;
- Grafana: dashboards up to date with their generator, variables, health and
  efficiency never on one dashboard, provisioning consistent with compose;
- the systemd unit's hardening (and systemd-analyze verify where present).

Run: GPUSCOPE_SOURCE_DIR=. python3 tests/integration/test_deploy_static.py
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import need, need_tool, main  # noqa: E402

SRC = os.path.abspath(os.environ.get(
    "GPUSCOPE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
DEPLOY = os.path.join(SRC, "deploy")
PROM = os.path.join(DEPLOY, "prometheus")
K8S = os.path.join(DEPLOY, "k8s")
DASHBOARDS = os.path.join(DEPLOY, "grafana", "dashboards")

# What Grafana puts in place of the dashboard variables (All = .*).
GRAFANA_VARS = {
    "$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h", "$__range_s": "3600",
    "$instance": ".*", "$gpu": ".*", "$training_job": ".*",
    "$namespace": ".*", "$workload": ".*", "$model": ".*",
}


def substitute(expr):
    for name in sorted(GRAFANA_VARS, key=len, reverse=True):
        expr = expr.replace(name, GRAFANA_VARS[name])
    return expr


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def load_yaml_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def panels_of(dashboard):
    for p in dashboard.get("panels", []):
        yield p
        yield from p.get("panels", [])  # collapsed rows


class Prometheus(unittest.TestCase):
    def setUp(self):
        need_tool("promtool", "prometheus")

    def test_config(self):
        r = run(["promtool", "check", "config", os.path.join(PROM, "prometheus.yml")])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # The config loads every shipped rule file.
        for path in glob.glob(os.path.join(PROM, "rules", "*.yml")):
            self.assertIn(os.path.relpath(path, PROM), r.stdout)

    def test_rules(self):
        files = sorted(glob.glob(os.path.join(PROM, "rules", "*.yml")))
        self.assertIn(os.path.join(PROM, "rules", "gpu-fleet.yml"), files)
        r = run(["promtool", "check", "rules", *files])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_rule_unit_tests(self):
        tests = sorted(glob.glob(os.path.join(PROM, "tests", "*.yml")))
        self.assertIn(os.path.join(PROM, "tests", "gpu-fleet-test.yml"), tests)
        for path in tests:
            with self.subTest(test=os.path.basename(path)):
                r = run(["promtool", "test", "rules", os.path.basename(path)],
                        cwd=os.path.dirname(path))
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_straggler_rule_shape(self):
        # The shipped alert waits 10 minutes and reads the grouping label.
        doc = load_yaml_docs(os.path.join(PROM, "rules", "gpu-fleet.yml"))[0]
        alerts = {r["alert"]: r for g in doc["groups"] for r in g["rules"] if "alert" in r}
        self.assertEqual(alerts["GpuStraggler"]["for"], "10m")
        self.assertIn("training_job", alerts["GpuStraggler"]["expr"])

    def test_dashboard_promql_parses(self):
        # Every panel query, variables substituted, as a recording rule: a
        # PromQL syntax error fails promtool check rules.
        rules = []
        for path in sorted(glob.glob(os.path.join(DASHBOARDS, "*.json"))):
            with open(path, encoding="utf-8") as f:
                dash = json.load(f)
            for p in panels_of(dash):
                for t in p.get("targets", []):
                    rules.append({"record": "dashboard:query:%d" % len(rules),
                                  "expr": substitute(t["expr"])})
        self.assertGreater(len(rules), 40)
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}, f)
        try:
            r = run(["promtool", "check", "rules", f.name])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        finally:
            os.unlink(f.name)


class Alertmanager(unittest.TestCase):
    def test_config(self):
        need_tool("amtool", "prometheus-alertmanager")
        r = run(["amtool", "check-config", os.path.join(DEPLOY, "alertmanager", "alertmanager.yml")])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Compose(unittest.TestCase):
    PATH = os.path.join(DEPLOY, "docker-compose.yml")

    def test_docker_compose_config(self):
        # The compose plugin where installed, else Debian's docker-compose
        # (scripts/setup.sh installs it); neither needs a Docker engine.
        if shutil.which("docker") and run(["docker", "compose", "version"]).returncode == 0:
            compose = ["docker", "compose"]
        elif shutil.which("docker-compose"):
            compose = ["docker-compose"]
        else:
            self.fail("neither `docker compose` nor `docker-compose` is installed "
                      "(scripts/setup.sh installs docker-compose)")
        for profile in ("gpu", "sim"):
            r = run(compose + ["-f", self.PATH, "--profile", profile, "config", "-q"])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_structure(self):
        doc = load_yaml_docs(self.PATH)[0]
        services = doc["services"]
        for name in ("gpuscope", "gpuscope-sim", "prometheus", "alertmanager", "grafana"):
            self.assertIn(name, services)
        self.assertEqual(services["gpuscope"]["profiles"], ["gpu"])
        self.assertEqual(services["gpuscope"]["runtime"], "nvidia")
        self.assertEqual(services["gpuscope-sim"]["profiles"], ["sim"])
        self.assertIn("--simulate", services["gpuscope-sim"]["command"])
        self.assertNotIn("runtime", services["gpuscope-sim"])
        for agent in ("gpuscope", "gpuscope-sim"):
            svc = services[agent]
            self.assertEqual(svc["build"]["dockerfile"], "deploy/Dockerfile")
            self.assertIn("gpuscope-agent", svc["networks"]["default"]["aliases"])
        # Prometheus scrapes the alias both agents answer to.
        with open(os.path.join(PROM, "targets", "gpuscope.yml"), encoding="utf-8") as f:
            self.assertIn("gpuscope-agent:9400", f.read())
        # Every bind mount exists.
        for name, svc in services.items():
            for vol in svc.get("volumes", []):
                src = vol.split(":")[0]
                if src.startswith("."):
                    with self.subTest(service=name, volume=vol):
                        self.assertTrue(os.path.exists(os.path.join(DEPLOY, src)), vol)
        self.assertTrue(any("/etc/prometheus" in v for v in services["prometheus"]["volumes"]))
        prom = load_yaml_docs(os.path.join(PROM, "prometheus.yml"))[0]
        self.assertEqual(prom["global"]["scrape_interval"], "15s")
        self.assertEqual(prom["rule_files"], ["rules/*.yml"])


class Dockerfile(unittest.TestCase):
    def test_multi_stage_slim_non_root(self):
        with open(os.path.join(DEPLOY, "Dockerfile"), encoding="utf-8") as f:
            text = f.read()
        froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
        self.assertEqual(froms[0], "debian:bookworm")
        self.assertEqual(froms[-1], "debian:bookworm-slim")
        runtime = text[text.rindex("\nFROM "):]
        for lib in ("libgnutls30", "libyaml-cpp0.7", "libfmt9", "libcrypt1"):
            self.assertIn(lib, runtime)
        self.assertNotIn("libmicrohttpd12", runtime)  # linked statically
        self.assertNotIn("spdlog", text)  # src/base/log.h replaced it
        # No compilers or -dev packages in the runtime image.
        self.assertNotRegex(runtime, r"-dev\b|\bg\+\+|\bcmake\b")
        self.assertIn("COPY --from=build", runtime)
        user = re.findall(r"^USER\s+(\S+)", runtime, re.M)
        self.assertTrue(user and user[-1].split(":")[0] not in ("0", "root"), user)
        self.assertRegex(runtime, r'ENTRYPOINT \["/usr/bin/gpuscope"\]')


class Kubernetes(unittest.TestCase):
    def setUp(self):
        self.docs = {}
        for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
            for doc in load_yaml_docs(path):
                self.docs.setdefault(doc["kind"], []).append(doc)

    def one(self, kind):
        self.assertEqual(len(self.docs.get(kind, [])), 1, kind)
        return self.docs[kind][0]

    def test_required_fields(self):
        for kind, docs in self.docs.items():
            for doc in docs:
                with self.subTest(kind=kind):
                    self.assertIn("apiVersion", doc)
                    if kind == "Kustomization":
                        continue
                    self.assertTrue(doc["metadata"]["name"])
                    if kind in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
                        # Cluster-scoped: no namespace; RBAC kinds carry rules
                        # or roleRef and subjects, not a spec.
                        self.assertNotIn("namespace", doc["metadata"])
                        self.assertIn({"ClusterRole": "rules", "ClusterRoleBinding": "roleRef",
                                       "Namespace": "metadata"}[kind], doc)
                        continue
                    self.assertEqual(doc["metadata"]["namespace"], "gpuscope")
                    if kind != "ServiceAccount":
                        self.assertIn("spec", doc)

    def test_daemonset(self):
        ds = self.one("DaemonSet")
        self.assertEqual(ds["apiVersion"], "apps/v1")
        spec = ds["spec"]
        pod_labels = spec["template"]["metadata"]["labels"]
        selector = spec["selector"]["matchLabels"]
        self.assertTrue(selector)
        self.assertLessEqual(selector.items(), pod_labels.items())
        pod = spec["template"]["spec"]
        self.assertEqual(pod["runtimeClassName"], "nvidia")
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        self.assertTrue(terms["nodeSelectorTerms"])
        self.assertIn("seccompProfile", pod["securityContext"])
        (c,) = pod["containers"]
        self.assertTrue(c["name"] and c["image"])
        self.assertEqual(c["args"][0], "serve")
        self.assertEqual(c["resources"]["requests"], {"cpu": "50m", "memory": "32Mi"})
        self.assertEqual(c["resources"]["limits"], {"cpu": "500m", "memory": "128Mi"})
        sc = c["securityContext"]
        self.assertIs(sc["allowPrivilegeEscalation"], False)
        self.assertIs(sc["readOnlyRootFilesystem"], True)
        self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
        (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/var/lib/kubelet/pod-resources"]
        self.assertIs(mount["readOnly"], True)
        (vol,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        self.assertEqual(vol["hostPath"]["path"], "/var/lib/kubelet/pod-resources")
        # Host PIDs' cgroups: the host's /proc, read-only, passed as --proc-root.
        (proc,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/host/proc"]
        self.assertIs(proc["readOnly"], True)
        (vol,) = [v for v in pod["volumes"] if v["name"] == proc["name"]]
        self.assertEqual(vol["hostPath"]["path"], "/proc")
        self.assertEqual(c["args"][c["args"].index("--proc-root") + 1], "/host/proc")
        port_names = {p["name"] for p in c["ports"]}
        self.assertIn("metrics", port_names)
        # The readiness probe must pass with basic auth on: /ready is the
        # unauthenticated path (docs/configuration.md, Endpoints).
        probe = c["readinessProbe"]["httpGet"]
        self.assertEqual(probe["path"], "/ready")
        self.assertIn(probe["port"], port_names)
        self.assertIn("tcpSocket", c["livenessProbe"])

    def test_service_and_monitor_select_the_pods(self):
        ds = self.one("DaemonSet")
        pod_labels = ds["spec"]["template"]["metadata"]["labels"]
        svc = self.one("Service")
        self.assertEqual(svc["apiVersion"], "v1")
        self.assertLessEqual(svc["spec"]["selector"].items(), pod_labels.items())
        svc_ports = {p["name"]: p for p in svc["spec"]["ports"]}
        self.assertEqual(svc_ports["metrics"]["port"], 9400)
        sm = self.one("ServiceMonitor")
        self.assertEqual(sm["apiVersion"], "monitoring.coreos.com/v1")
        self.assertLessEqual(sm["spec"]["selector"]["matchLabels"].items(),
                             svc["metadata"]["labels"].items())
        self.assertIn(svc["metadata"]["namespace"], sm["spec"]["namespaceSelector"]["matchNames"])
        for ep in sm["spec"]["endpoints"]:
            self.assertIn(ep["port"], svc_ports)
            self.assertEqual(ep["interval"], "15s")

    def test_kustomization_lists_every_manifest(self):
        k = self.one("Kustomization")
        listed = set(k["resources"])
        present = {os.path.basename(p) for p in glob.glob(os.path.join(K8S, "*.yaml"))}
        self.assertEqual(listed, present - {"kustomization.yaml"})

    def test_kustomize_build(self):
        # Debian 12's kubernetes-client (kubectl 1.20, kustomize built in);
        # scripts/setup.sh installs it unless a kubectl is already on PATH.
        need_tool("kubectl", "kubernetes-client")
        r = run(["kubectl", "kustomize", K8S])
        self.assertEqual(r.returncode, 0, r.stderr)
        kinds = sorted(d["kind"] for d in yaml.safe_load_all(r.stdout) if d)
        self.assertEqual(kinds, ["ClusterRole", "ClusterRoleBinding", "DaemonSet", "Namespace",
                                 "PrometheusRule", "Service", "ServiceAccount",
                                 "ServiceMonitor"])

    def test_prometheusrule_up_to_date(self):
        script = os.path.join(SRC, "scripts", "gen-prometheusrule.py")
        r = run([sys.executable, script, "--check"])
        self.assertEqual(r.returncode, 0, r.stderr + "\nrun scripts/gen-prometheusrule.py")
        # And it carries exactly the rule files' groups.
        groups = []
        for path in sorted(glob.glob(os.path.join(PROM, "rules", "*.yml"))):
            groups += load_yaml_docs(path)[0]["groups"]
        pr = self.one("PrometheusRule")
        self.assertEqual(pr["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(pr["spec"]["groups"], groups)

    def test_generator_detects_staleness(self):
        script = os.path.join(SRC, "scripts", "gen-prometheusrule.py")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "pr.yaml")
            with open(out, "w") as f:
                f.write("stale\n")
            r = run([sys.executable, script, "--check", "--output", out])
            self.assertEqual(r.returncode, 1)
            self.assertEqual(run([sys.executable, script, "--output", out]).returncode, 0)
            self.assertEqual(run([sys.executable, script, "--check", "--output", out]).returncode, 0)


# Families that belong to one side only (DESIGN: health and efficiency split).
HEALTH_ONLY = re.compile(r"gpu_health|xid|ecc_errors|remapped_rows|pcie_replays|nvlink_errors|"
                         r"temperature|throttle|gpu_lost|collector_stale")
EFFICIENCY_ONLY = re.compile(r"sm_active|pipe_active|dram_active|gpu_busy|sm_occupancy|"
                             r"power_usage|sm_clock|bottleneck|memory_used")


class Grafana(unittest.TestCase):
    def load(self):
        out = {}
        for path in sorted(glob.glob(os.path.join(DASHBOARDS, "*.json"))):
            with open(path, encoding="utf-8") as f:
                out[os.path.basename(path)] = json.load(f)
        return out

    def test_generated_up_to_date(self):
        r = run([sys.executable, os.path.join(DEPLOY, "grafana", "generate.py"), "--check"])
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_dashboards(self):
        dashes = self.load()
        self.assertEqual(set(dashes), {"fleet-overview.json", "gpu-health.json",
                                       "gpu-efficiency.json", "training.json", "inference.json",
                                       "tenants.json", "baselines.json"})
        uids = set()
        for name, d in dashes.items():
            with self.subTest(dashboard=name):
                self.assertNotIn(d["uid"], uids)
                uids.add(d["uid"])
                names = [v["name"] for v in d["templating"]["list"]]
                for var in ("datasource", "instance", "gpu", "training_job"):
                    self.assertIn(var, names)
                ids = [p["id"] for p in panels_of(d)]
                self.assertEqual(len(ids), len(set(ids)))
                for p in panels_of(d):
                    if p["type"] == "row":
                        continue
                    self.assertTrue(p["targets"], p["title"])
                    for t in p["targets"]:
                        self.assertTrue(t["expr"].strip())
                        self.assertEqual(t["datasource"]["uid"], "${datasource}")
                    g = p["gridPos"]
                    self.assertLessEqual(g["x"] + g["w"], 24)

    def test_health_and_efficiency_apart(self):
        dashes = self.load()
        for name, forbidden in (("gpu-health.json", EFFICIENCY_ONLY),
                                ("gpu-efficiency.json", HEALTH_ONLY),
                                ("tenants.json", HEALTH_ONLY)):
            for p in panels_of(dashes[name]):
                for t in p["targets"]:
                    self.assertNotRegex(t["expr"], forbidden, f"{name}: {p['title']}")

    def test_baselines_rows_keep_health_and_efficiency_apart(self):
        # The baselines dashboard has both, each on its own row.
        section, seen = None, set()
        for p in self.load()["baselines.json"]["panels"]:
            if p["type"] == "row":
                section = p["title"]
                continue
            seen.add(section)
            forbidden = {"Efficiency": HEALTH_ONLY, "Health": EFFICIENCY_ONLY}.get(section)
            for t in p["targets"]:
                self.assertRegex(t["expr"], r"gpuscope:workload_|ALERTS")
                if forbidden:
                    self.assertNotRegex(t["expr"], forbidden, p["title"])
        self.assertEqual(seen, {"Baselines", "Efficiency", "Health"})

    def test_inference_convention(self):
        exprs = " ".join(t["expr"] for p in panels_of(self.load()["inference.json"])
                         for t in p["targets"])
        self.assertIn("histogram_quantile(0.95", exprs)
        self.assertIn("histogram_quantile(0.99", exprs)
        self.assertIn("inference_request_duration_seconds_bucket", exprs)
        self.assertIn('"gpu_uuid"', exprs)
        with open(os.path.join(SRC, "docs", "dashboards.md"), encoding="utf-8") as f:
            doc = f.read()
        self.assertIn("inference_request_duration_seconds", doc)
        self.assertIn("gpu_uuid", doc)

    def test_provisioning(self):
        prov = os.path.join(DEPLOY, "grafana", "provisioning")
        ds = load_yaml_docs(os.path.join(prov, "datasources", "prometheus.yml"))[0]
        (source,) = ds["datasources"]
        self.assertEqual(source["type"], "prometheus")
        self.assertEqual(source["url"], "http://prometheus:9090")
        dp = load_yaml_docs(os.path.join(prov, "dashboards", "gpuscope.yml"))[0]
        (provider,) = dp["providers"]
        compose = load_yaml_docs(os.path.join(DEPLOY, "docker-compose.yml"))[0]
        mounts = compose["services"]["grafana"]["volumes"]
        self.assertIn("./grafana/dashboards:" + provider["options"]["path"] + ":ro", mounts)


class Systemd(unittest.TestCase):
    PATH = os.path.join(DEPLOY, "systemd", "gpuscope.service")

    def test_hardening(self):
        with open(self.PATH, encoding="utf-8") as f:
            text = f.read()
        settings = {}
        for line in text.splitlines():
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                settings.setdefault(key.strip(), []).append(value.strip())
        self.assertTrue(settings.get("DynamicUser") == ["yes"] or "User" in settings)
        for key, value in (("ProtectSystem", "strict"), ("NoNewPrivileges", "yes"),
                           ("PrivateTmp", "yes"), ("ProtectHome", "yes"),
                           ("DevicePolicy", "closed")):
            self.assertEqual(settings.get(key), [value], key)
        self.assertTrue(any("nvidia" in v for v in settings["DeviceAllow"]))
        self.assertIn("serve", settings["ExecStart"][0])

    def test_systemd_analyze_verify(self):
        need_tool("systemd-analyze", "systemd")
        with open(self.PATH, encoding="utf-8") as f:
            text = f.read()
        with tempfile.TemporaryDirectory() as tmp:
            # The binary is not installed here; verify the unit around /bin/true.
            path = os.path.join(tmp, "gpuscope.service")
            with open(path, "w") as f:
                f.write(text.replace("/usr/local/bin/gpuscope", "/bin/true"))
            r = run(["systemd-analyze", "verify", path])
            if r.returncode != 0 and "Failed to" in r.stderr and "bus" in r.stderr.lower():
                need(False, "systemd-analyze cannot run here: " + r.stderr.strip(),
                     setup_installs=False)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Scenarios(unittest.TestCase):
    def test_fleet_scenarios_parse(self):
        paths = sorted(glob.glob(os.path.join(SRC, "sim", "scenarios", "fleet", "*.yaml")))
        self.assertEqual(len(paths), 8)
        for path in paths:
            doc = load_yaml_docs(path)[0]
            gpus = sum(g.get("count", 1) for g in doc["gpus"])
            self.assertEqual(gpus, 8, path)


if __name__ == "__main__":
    main()
