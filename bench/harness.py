#!/usr/bin/env python3
"""Whole-process benchmarks of gpuscope and its peers; writes docs/performance.md.

Usage: bench/harness.py BUILD_DIR [--out FILE] [--json FILE] [--smoke]
                                  [--soak-seconds N] [--no-callgrind] [--no-soak]
                                  [--short-window]

It starts everything itself on loopback ports: `gpuscope serve --simulate` on
the bench scenarios (sim/scenarios/bench/{8,64}xh100.yaml, every DCGM-named
metric on through a generated counters file), nginx serving the same body as a
static file, and prometheus-node-exporter. Load comes from wrk
(`wrk -c32 --latency`, one thread per two CPUs), CPU and memory from /proc/<pid>/stat and status,
instruction counts from valgrind's callgrind on gpuscope_bench's modes.

--smoke runs every stage for a second or two and checks nothing about speed:
the test suite uses it to check that the harness works. Python stdlib only.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_callgrind  # noqa: E402
import bench_report  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


# --------------------------------------------------------------------------
# Processes and /proc


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_kib(pid):
    """VmRSS and VmHWM (peak RSS) in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    return out


class Proc:
    """A child process with its output in a temp file; stopped on exit."""

    def __init__(self, name, argv, workdir, env=None):
        self.name = name
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "wb")
        self.started = time.monotonic()
        self.popen = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                      env=env, start_new_session=True)

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def stop(self):
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.log.close()

    def tail(self):
        with open(self.log_path, "rb") as f:
            return f.read()[-2000:].decode(errors="replace")


def http_get(port, path="/metrics", timeout=5.0, attempts=5):
    """(status, body). Right after wrk the agent may still hold wrk's 32
    connections, its limit per client address, and reset a new one: retried."""
    for attempt in range(attempts):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read()
        except ConnectionResetError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)
        finally:
            conn.close()


def wait_serving(proc, port, path="/metrics", timeout=30.0, poll=0.001):
    """Seconds from launch until `path` answers 200 with a body."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited: {proc.tail()}")
        try:
            status, body = http_get(port, path, timeout=1.0)
            if status == 200 and body:
                return time.monotonic() - proc.started
        except OSError:
            pass
        time.sleep(poll)
    raise RuntimeError(f"{proc.name} not serving {path} after {timeout} s: {proc.tail()}")


# --------------------------------------------------------------------------
# The processes under test


class Bench:
    def __init__(self, build, workdir, smoke):
        self.build = os.path.abspath(build)
        self.workdir = workdir
        self.smoke = smoke
        self.gpuscope = os.path.join(self.build, "gpuscope")
        self.bench_bin = os.path.join(self.build, "gpuscope_bench")
        self.counters = os.path.join(workdir, "all-counters.csv")
        with open(self.counters, "w") as f:
            f.write(subprocess.check_output([self.bench_bin, "--mode=counters"], text=True))
        self.procs = []

    def scenario(self, gpus):
        return os.path.join(self.build, "sim", "scenarios", "bench", f"{gpus}xh100.yaml")

    def start(self, name, argv, env=None):
        proc = Proc(name, argv, self.workdir, env)
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in self.procs:
            proc.stop()
        self.procs = []

    def gpuscope_argv(self, gpus, port, interval_ms=1000, window="10m", counters=True):
        # Each agent its own OTLP port: on the default :4318 only the first would have a receiver.
        return [self.gpuscope, "serve", "--simulate", self.scenario(gpus),
                "-a", f"127.0.0.1:{port}", "--otlp-listen-address", f"127.0.0.1:{free_port()}",
                "-c", str(interval_ms), "--window", window,
                "--log-level", "warn"] + (["-f", self.counters] if counters else [])

    def start_gpuscope(self, name, gpus, interval_ms=1000, window="10m", env=None):
        port = free_port()
        proc = self.start(name, self.gpuscope_argv(gpus, port, interval_ms, window), env)
        proc.port = port
        proc.startup_s = wait_serving(proc, port)
        return proc

    def start_nginx(self, name, body):
        root = os.path.join(self.workdir, name)
        os.makedirs(os.path.join(root, "www"), exist_ok=True)
        os.chmod(self.workdir, 0o755)  # nginx workers may run as another user (root's nobody)
        with open(os.path.join(root, "www", "metrics"), "wb") as f:
            f.write(body)
        port = free_port()
        temps = "\n".join(f"  {kind}_temp_path {root}/{kind};"
                          for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = os.path.join(root, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes auto;
daemon off;
pid {root}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  default_type text/plain;
{temps}
  server {{
    listen 127.0.0.1:{port};
    root {root}/www;
  }}
}}
""")
        proc = self.start(name, ["/usr/sbin/nginx", "-p", root, "-c", conf, "-e", "stderr"])
        proc.port = port
        proc.startup_s = wait_serving(proc, port)
        return proc

    def start_node_exporter(self, name):
        port = free_port()
        proc = self.start(name, ["/usr/bin/prometheus-node-exporter",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=error"])
        proc.port = port
        proc.startup_s = wait_serving(proc, port)
        return proc


def tree_cpu_seconds(pid):
    """CPU of a process and its children (nginx workers)."""
    total = cpu_seconds(pid)
    try:
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        children = []
    for child in children:
        try:
            total += cpu_seconds(int(child))
        except OSError:
            pass
    return total


def tree_rss_kib(pid):
    total = memory_kib(pid).get("VmRSS", 0)
    try:
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        children = []
    for child in children:
        try:
            total += memory_kib(int(child)).get("VmRSS", 0)
        except OSError:
            pass
    return total


# --------------------------------------------------------------------------
# wrk

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def parse_duration_ms(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"wrk duration {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_size_bytes(text):
    m = re.fullmatch(r"([\d.]+)([KMGT]?B)", text.strip())
    if not m:
        raise ValueError(f"wrk size {text!r}")
    scale = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}[m.group(2)]
    return float(m.group(1)) * scale


def parse_wrk(text):
    out = {"errors": 0, "non2xx": 0}
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", text, re.M)
        if m:
            out[f"p{pct}_ms"] = parse_duration_ms(m.group(1))
    m = re.search(r"^\s+(\d+) requests in ([\d.]+\w+), (\S+) read", text, re.M)
    if m:
        out["requests"] = int(m.group(1))
        out["seconds"] = parse_duration_ms(m.group(2)) / 1e3
        out["bytes_read"] = parse_size_bytes(m.group(3))
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if m:
        out["rps"] = float(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["errors"] = sum(int(g) for g in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        out["non2xx"] = int(m.group(1))
    for key in ("p99_ms", "rps", "requests"):
        if key not in out:
            raise ValueError(f"wrk output without {key}:\n{text}")
    return out


# The load generator takes half the CPUs and leaves the rest to the server. wrk measures latency in
# its own threads, so a thread waiting for a CPU counts the wait as the server's: with -t2 on two
# CPUs the p99 of the lean gzip body read 4.2 ms even with the agent alone on the other CPU, and
# 0.55 ms with -t1 (bench/performance-notes.md).
WRK_THREADS = max(1, (os.cpu_count() or 2) // 2)


def run_wrk(proc, seconds, connections=32, threads=WRK_THREADS, gzip=False):
    threads = min(threads, connections)
    url = f"http://127.0.0.1:{proc.port}/metrics"
    cpu0 = tree_cpu_seconds(proc.pid)
    header = ["-H", "Accept-Encoding: gzip"] if gzip else []
    text = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
                          + header + [url], capture_output=True, text=True, check=True).stdout
    result = parse_wrk(text)
    result["server_cpu_s"] = tree_cpu_seconds(proc.pid) - cpu0
    result["server_rss_kib"] = tree_rss_kib(proc.pid)
    return result


# --------------------------------------------------------------------------
# Stages


def stage_micro(b, smoke):
    argv = [b.bench_bin, "--benchmark_format=json"]
    if smoke:
        argv += ["--benchmark_min_time=0.01"]
    else:
        argv += ["--benchmark_min_time=0.3", "--benchmark_repetitions=5",
                 "--benchmark_report_aggregates_only=true"]
    data = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    results = {}
    for bm in data["benchmarks"]:
        agg = bm.get("aggregate_name", "")
        if agg not in ("", "median", "cv"):
            continue
        name = bm.get("run_name", bm["name"])
        entry = results.setdefault(name, {})
        if agg == "cv":
            entry["cv"] = bm["real_time"]
            continue
        entry["time_us"] = bm["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[
            bm["time_unit"]]
        entry["cpu_us"] = bm["cpu_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[
            bm["time_unit"]]
        for key in ("body_bytes", "nvml_calls_per_gpu"):
            if key in bm:
                entry[key] = bm[key]
    return {"context": data.get("context", {}), "results": results}


def stage_detection(b):
    """Detection latency per finding kind, onset to finding, for diagnose and for serve's
    exported gpuscope_bottleneck (gpuscope_bench --mode=detection: scenario time, not
    wall-clock, so the figures do not depend on the machine)."""
    out = subprocess.run([b.bench_bin, "--mode=detection"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def scrape_pair(b, out, label, agent, seconds, smoke, connections=32):
    """wrk against the agent, then against nginx serving the agent's body."""
    status, body = http_get(agent.port)
    assert status == 200
    nginx = b.start_nginx(f"scrape-nginx-{label}", body)
    for name, proc in ((f"gpuscope-{label}", agent), (f"nginx-{label}", nginx)):
        if not smoke:
            run_wrk(proc, 2, connections)  # warm-up
        result = run_wrk(proc, seconds, connections)
        result["body_bytes"] = len(body)
        result["connections"] = connections
        out[name] = result
    b.stop_all()


def series_per_gpu(text):
    """Largest number of series carrying one gpu label value."""
    counts = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.search(r'[{,]gpu="(\d+)"', line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return max(counts.values()) if counts else 0


def stage_wire(b, smoke):
    """What Prometheus receives from the default agent (lean and full profile,
    default counters file): series per GPU, body bytes plain and gzipped (as
    served), and the scrape p99 at 32 connections asking for gzip."""
    seconds = 1 if smoke else 10
    out = {}
    for gpus in (8, 64):
        for profile in ("lean", "full"):
            port = free_port()
            proc = b.start(f"wire-{gpus}-{profile}", [
                b.gpuscope, "serve", "--simulate", b.scenario(gpus), "-a", f"127.0.0.1:{port}",
                "--profile", profile, "--log-level", "warn"])
            proc.port = port
            wait_serving(proc, port)
            time.sleep(3 if smoke else 35)  # the diagnosis has run: its series are there
            plain = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
            req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                         headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(req, timeout=10) as r:
                gz = r.read()
                encoding = r.headers.get("Content-Encoding")
            text = plain.decode()
            res = {"series": sum(1 for l in text.splitlines() if l and not l.startswith("#")),
                   "series_per_gpu": series_per_gpu(text), "plain_bytes": len(plain),
                   "gzip_bytes": len(gz), "content_encoding": encoding}
            if profile == "lean":
                if not smoke:
                    run_wrk(proc, 2, 32, gzip=True)
                res["wrk_gzip"] = run_wrk(proc, seconds, 32, gzip=True)
                # For reference: the same with a wrk thread per CPU, the machine shared.
                res["wrk_gzip_shared"] = run_wrk(proc, seconds, 32, os.cpu_count() or 2, gzip=True)
            out[f"{gpus}-{profile}"] = res
            b.stop_all()
    return out


def stage_scrape(b, smoke):
    seconds = 1 if smoke else 10
    out = {}
    for gpus in (8, 64):
        agent = b.start_gpuscope(f"scrape-gpuscope-{gpus}", gpus)
        scrape_pair(b, out, str(gpus), agent, seconds, smoke)
    # One connection: the service time without queueing (Little's law: with 32
    # connections always busy, mean latency = 32 / throughput).
    agent = b.start_gpuscope("scrape-gpuscope-8-c1", 8)
    scrape_pair(b, out, "8-c1", agent, max(1, seconds // 2), smoke, connections=1)
    # What a dcgm-exporter drop-in serves by default: its default counters,
    # DCGM families only.
    argv = ["--metrics", "dcgm"]
    port = free_port()
    agent = b.start("scrape-gpuscope-8-dcgm", b.gpuscope_argv(8, port, counters=False) + argv)
    agent.port = port
    agent.startup_s = wait_serving(agent, port)
    scrape_pair(b, out, "8-dcgm-default", agent, seconds, smoke)
    ne = b.start_node_exporter("scrape-node-exporter")
    status, body = http_get(ne.port)
    if not smoke:
        run_wrk(ne, 2)
    result = run_wrk(ne, seconds)
    result["body_bytes"] = len(body)
    result["startup_s"] = ne.startup_s
    result["connections"] = 32
    out["node-exporter"] = result
    b.stop_all()
    return out


def gpu_uuids(port):
    """The GPU UUIDs an agent serves, by index."""
    status, body = http_get(port)
    assert status == 200
    found = dict(re.findall(rb'gpuscope_gpu_info\{gpu="(\d+)",uuid="([^"]+)"', body))
    return [found[k].decode() for k in sorted(found, key=int)]


def stage_attribution(b, smoke):
    """/metrics latency with attribution on against off, 8 GPUs: a fake kubelet
    (tests/integration/fake_kubelet.py) answering 110 pods, every GPU granted,
    GPU 0 time-sliced by 4 pods, refreshed every second (so scrapes run while
    the mapping refreshes), and a Slurm mapping directory; a third agent has
    the same labels refreshed once an hour. The three alternate, three rounds
    each; the medians are reported."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "integration"))
    try:
        import fake_kubelet  # noqa: E402 (python3-grpcio)
    except ImportError as e:
        return {"error": f"no fake kubelet: {e} (python3-grpcio, installed by scripts/setup.sh)"}
    seconds = 1 if smoke else 8
    rounds = 1 if smoke else 3
    port = free_port()
    off = b.start("attr-off", b.gpuscope_argv(8, port))
    off.port = port
    wait_serving(off, port)
    uuids = gpu_uuids(port)
    pods = [("ml", f"trainer-7d9f8c6b4-x2kq{i}", "main", "nvidia.com/gpu", [f"{uuids[0]}::{i}"])
            for i in range(4)]
    pods += [("ml", f"worker-7d9f8c6b4-{i}", "main", "nvidia.com/gpu", [uuids[i]])
             for i in range(1, 8)]
    pods += [(f"team-{i % 7}", f"web-b2c4d-{i}", "srv", "example.com/nic", [f"nic{i}"])
             for i in range(110 - len(pods))]
    kubelet = fake_kubelet.FakeKubelet(os.path.join(b.workdir, "kubelet.sock"), pods)
    kubelet.start()
    jobs = os.path.join(b.workdir, "jobs")
    os.makedirs(jobs, exist_ok=True)
    for i in range(4, 8):
        with open(os.path.join(jobs, str(i)), "w") as f:
            f.write(f"{4200 + i}\n")

    def attributed(name, refresh):
        port = free_port()
        proc = b.start(name, b.gpuscope_argv(8, port) + [
            "-k", "--pod-resources-kubelet-socket", kubelet.socket_path, "--hpc-job-mapping-dir",
            jobs, "--attribution-refresh", refresh])
        proc.port = port
        wait_serving(proc, port)
        deadline = time.monotonic() + 30
        while b"pod=\"trainer-" not in http_get(port)[1] and time.monotonic() < deadline:
            time.sleep(0.1)
        return proc

    # "static": the same labels, fetched once (refresh 1 h), so that "on"
    # against "static" is the refresh's own effect and "static" against
    # "off" the cost of the larger body.
    on, static = attributed("attr-on", "1s"), attributed("attr-static", "1h")
    runs = {"off": [], "static": [], "on": []}
    try:
        for proc in (off, static, on):
            if not smoke:
                run_wrk(proc, 2)  # warm-up
        for _ in range(rounds):
            for name, proc in (("off", off), ("static", static), ("on", on)):
                result = run_wrk(proc, seconds)
                result["body_bytes"] = len(http_get(proc.port)[1])
                runs[name].append(result)
    finally:
        b.stop_all()
        kubelet.stop()
    out = {"rounds": rounds, "seconds": seconds, "kubelet_calls": kubelet.calls}
    for name, results in runs.items():
        out[name] = {key: statistics.median(r[key] for r in results)
                     for key in ("p50_ms", "p90_ms", "p99_ms", "rps", "body_bytes",
                                 "server_cpu_s", "server_rss_kib") if key in results[0]}
        out[name]["p99_ms_each"] = [r["p99_ms"] for r in results]
    return out


def stage_startup(b, smoke):
    runs = 1 if smoke else 7
    out = {}
    for gpus in (8, 64):
        times, rss = [], []
        for i in range(runs):
            proc = b.start_gpuscope(f"startup-{gpus}-{i}", gpus)
            times.append(proc.startup_s)
            rss.append(memory_kib(proc.pid)["VmRSS"])
            b.stop_all()
        out[str(gpus)] = {"runs_s": times, "median_s": statistics.median(times),
                          "rss_kib_at_start": statistics.median(rss)}
    return out


def sim_stats(control, path):
    """Asks the simulator (through its control file) for its call counts."""
    if os.path.exists(path):
        os.remove(path)
    with open(control, "a") as f:
        f.write(f"stats {path}\n")
    for _ in range(300):
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        time.sleep(0.01)
    raise RuntimeError(f"simulator wrote no stats to {path}")


def thread_cpu_ns(pid):
    """Run time (ns, from schedstat) of each thread, by thread id."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except OSError:
            pass
    return out


def stage_sampling(b, smoke, full_window=True):
    """Idle agents (no scrapes) at 1 s and 100 ms, 8 and 64 GPUs, side by side.

    Every agent keeps the default 10-minute window, and the stage waits until
    it has filled (over 10 minutes) before measuring, so RSS is the
    full-window figure. No simulator control file here: its polling thread
    would count as agent CPU. With --short-window (and in smoke runs) the
    100 ms agents keep a 60 s window and the stage starts measuring after 5 s:
    quicker, and the window's tiers are already all in use."""
    seconds = 2 if smoke else 60
    full_window = full_window and not smoke
    configs = [(8, 100)] if smoke else [(8, 1000), (8, 100), (64, 1000), (64, 100)]
    runs = []
    for gpus, ms in configs:
        window = "60s" if ms == 100 and not full_window else "10m"
        runs.append((gpus, ms, window, b.start_gpuscope(f"sampling-{gpus}-{ms}", gpus, ms, window)))
    started = time.monotonic()
    time.sleep(1 if smoke else (600 if full_window else 5))
    marks = [(time.monotonic(), thread_cpu_ns(p.pid)) for *_, p in runs]
    time.sleep(seconds)
    out = {}
    for (gpus, ms, window, proc), (t0, th0) in zip(runs, marks):
        th1 = thread_cpu_ns(proc.pid)
        elapsed = time.monotonic() - t0
        mem = memory_kib(proc.pid)
        # Threads in creation order (thread ids grow), CPU ms per second each.
        threads = [[rank, (th1[tid] - th0.get(tid, 0)) / 1e6 / elapsed]
                   for rank, tid in enumerate(sorted(th1))]
        out[f"{gpus}-{ms}"] = {
            "gpus": gpus, "interval_ms": ms, "window": window, "seconds": elapsed,
            # schedstat counts nanoseconds; /proc/PID/stat's clock ticks
            # read 0 for an agent that idles below one tick in a smoke run.
            "cpu_percent": sum(ms for _, ms in threads) / 10.0,
            "threads_ms_per_s": threads,
            "rss_kib": mem["VmRSS"], "hwm_kib": mem["VmHWM"],
            # With --short-window the 1 s agents are read long before their window is full.
            "filled": time.monotonic() - started >= {"10m": 600, "60s": 60}[window],
        }
    b.stop_all()
    return out


def least_squares_slope(points):
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


class Soak(threading.Thread):
    """8 GPUs at 100 ms with a window of half the soak: it fills half-way, the
    second half shows whether memory stays flat."""

    def __init__(self, b, seconds):
        super().__init__(daemon=True)
        self.b, self.seconds = b, seconds
        self.window_s = max(1, seconds // 2)
        self.samples = []
        self.error = None
        self.stopping = threading.Event()

    def run(self):
        try:
            port = free_port()
            proc = Proc("soak", self.b.gpuscope_argv(8, port, 100, f"{self.window_s}s"),
                        self.b.workdir)
            try:
                wait_serving(proc, port)
                start = time.monotonic()
                while time.monotonic() - start < self.seconds and not self.stopping.is_set():
                    mem = memory_kib(proc.pid)
                    self.samples.append((time.monotonic() - start, mem["VmRSS"], mem["VmHWM"]))
                    self.stopping.wait(min(5.0, self.seconds / 20))
                mem = memory_kib(proc.pid)
                self.samples.append((time.monotonic() - start, mem["VmRSS"], mem["VmHWM"]))
            finally:
                proc.stop()
        except Exception as e:  # reported, not raised from the thread
            self.error = str(e)

    def result(self):
        after = [(t, rss) for t, rss, _ in self.samples if t >= self.window_s]
        filling = [(t, rss) for t, rss, _ in self.samples if 0.2 * self.window_s <= t <= self.window_s]
        # RSS growth per window point while the window fills (8 GPUs, 10 points/s).
        per_point = least_squares_slope(filling) * 1024 / (8 * 10) if len(filling) > 2 else None
        return {
            "bytes_per_gpu_point": per_point,
            "seconds": self.seconds, "interval_ms": 100, "window_s": self.window_s,
            "samples": self.samples, "error": self.error,
            "rss_kib_at_fill": after[0][1] if after else None,
            "rss_kib_end": self.samples[-1][1] if self.samples else None,
            "hwm_kib_end": self.samples[-1][2] if self.samples else None,
            "slope_kib_per_min_after_fill": 60 * least_squares_slope(after),
            "slope_kib_per_min_last_half": 60 * least_squares_slope(after[len(after) // 2:]),
        }


def stage_callgrind(b, smoke):
    if shutil.which("valgrind") is None:
        return {"skipped": "valgrind not installed"}
    out = {}
    for gpus, cycles in ((8, 20), (64, 10)):
        out[f"cycles-{gpus}"] = bench_callgrind.cycles(b.bench_bin, b.workdir, gpus, cycles)
    out["scrape-8"] = bench_callgrind.scrapes(b.bench_bin, b.workdir, 8, 50 if smoke else 200)
    out["scrape-64"] = bench_callgrind.scrapes(b.bench_bin, b.workdir, 64, 20 if smoke else 100)
    return out


def nvml_calls(b, gpus, cycles, interval):
    """Exact NVML calls per GPU per cycle, by function, over `cycles` cycles
    `interval` seconds apart (so slow and PCIe tiers come in their real
    proportion): the simulator's counters around gpuscope_bench's cycles."""
    control = os.path.join(b.workdir, f"control-calls-{gpus}-{interval}")
    open(control, "w").close()
    env = dict(os.environ, GPUSCOPE_SIM_CONTROL=control)
    line = subprocess.run([b.bench_bin, "--mode=cycles", f"--gpus={gpus}", f"--cycles={cycles}",
                           f"--interval={interval}"],
                          capture_output=True, text=True, check=True, env=env).stdout
    info = json.loads(line.strip().splitlines()[-1])
    with open(control + ".before.json") as f:
        before = json.load(f)
    with open(control + ".after.json") as f:
        after = json.load(f)
    per = info["gpus"] * info["cycles"]
    functions = {}
    for name, count in after["functions"].items():
        delta = count - before["functions"].get(name, 0)
        if delta:
            functions[name] = delta / per
    return {"gpus": info["gpus"], "cycles": info["cycles"], "interval_s": interval,
            "per_gpu_cycle": (after["total"] - before["total"]) / per,
            "agent_count_per_gpu_cycle": info["nvml_calls"] / per,
            "functions": dict(sorted(functions.items(), key=lambda kv: -kv[1]))}


def stage_nvml_calls(b):
    return {"8-1000": nvml_calls(b, 8, 20, 1.0), "64-1000": nvml_calls(b, 64, 20, 1.0),
            "8-100": nvml_calls(b, 8, 200, 0.1)}


# --------------------------------------------------------------------------
# Machine


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    return {
        "nproc": os.cpu_count(), "wrk_threads": WRK_THREADS, "cpu": model,
        "memory_gib": round(mem_kib / 1048576, 1),
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_start": os.getloadavg(),
        "tools": {name: tool_version(argv) for name, argv in (
            ("wrk", ["wrk", "--version"]), ("nginx", ["/usr/sbin/nginx", "-v"]),
            ("node-exporter", ["/usr/bin/prometheus-node-exporter", "--version"]),
            ("valgrind", ["valgrind", "--version"]))},
    }


def tool_version(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except OSError:
        return "missing"
    text = (r.stdout + r.stderr).strip().splitlines()
    return text[0][:80] if text else "?"


def write_report(results, args):
    if not args.out:
        return
    notes = ""
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            notes = f.read()
    with open(args.out, "w") as f:
        f.write(bench_report.render(results, notes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--out", help="markdown report (default: none)")
    ap.add_argument("--json", help="raw results as JSON")
    ap.add_argument("--notes", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "performance-notes.md"))
    ap.add_argument("--smoke", action="store_true", help="seconds per stage, no assertions")
    # The soak's window is half of it: 1200 s fill the default 10 min window at 100 ms.
    ap.add_argument("--soak-seconds", type=int, default=1200)
    ap.add_argument("--no-soak", action="store_true")
    ap.add_argument("--short-window", action="store_true",
                    help="sampling stage: 60 s windows at 100 ms instead of filling the default "
                         "10 min window (which takes 10+ min)")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--from-json", help="only re-render --out from results saved with --json")
    ap.add_argument("--stages",
                    default="micro,nvml,startup,scrape,wire,sampling,callgrind,attribution,"
                            "detection",
                    help="comma list of stages to run")
    args = ap.parse_args()
    stages = set(args.stages.split(","))
    if args.from_json:
        with open(args.from_json) as f:
            write_report(json.load(f), args)
        return

    results = {"machine": machine(), "smoke": args.smoke}
    workdir = tempfile.mkdtemp(prefix="gpuscope-bench-")
    b = Bench(args.build, workdir, args.smoke)
    soak = None
    if not args.no_soak:
        soak = Soak(b, 6 if args.smoke else args.soak_seconds)
        soak.start()
    plan = [("micro", lambda: stage_micro(b, args.smoke)),
            ("nvml", lambda: stage_nvml_calls(b)),
            ("startup", lambda: stage_startup(b, args.smoke)),
            ("scrape", lambda: stage_scrape(b, args.smoke)),
            ("wire", lambda: stage_wire(b, args.smoke)),
            ("sampling", lambda: stage_sampling(b, args.smoke, not args.short_window)),
            ("callgrind", lambda: stage_callgrind(b, args.smoke)),
            ("attribution", lambda: stage_attribution(b, args.smoke)),
            ("detection", lambda: stage_detection(b))]
    try:
        for name, fn in plan:
            if name not in stages or (name == "callgrind" and args.no_callgrind):
                continue
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            t = time.monotonic()
            results[name] = fn()
            print(f"[bench] {name} done in {time.monotonic() - t:.0f} s", file=sys.stderr,
                  flush=True)
        if soak is not None:
            print("[bench] waiting for the soak ...", file=sys.stderr, flush=True)
            soak.join()
            results["soak"] = soak.result()
    finally:
        if soak is not None and soak.is_alive():
            soak.stopping.set()
            soak.join()
        b.stop_all()
    results["machine"]["load_end"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    write_report(results, args)
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"[bench] done{': ' + args.out if args.out else ''}", file=sys.stderr)


if __name__ == "__main__":
    main()
