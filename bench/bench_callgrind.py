"""Instruction counts from valgrind's callgrind, for bench/harness.py.

Method: gpuscope_bench zeroes callgrind's counters (client request) right
before the measured work and dumps them right after, so a dump holds exactly
that work: N sampling cycles (sampler + serve's publish hook), N renders, or N
scrapes served over loopback. Instruction counts do not depend on the load of
the machine, so they stay comparable across runs where timings do not.

The simulator runs inside the process; its instructions are split off: every
call edge from code outside libnvidia-ml.so.1 into it carries the inclusive
cost of that call (the simulator's own work and what it calls), and that sum
is subtracted from the total to give the agent's share.
"""

import glob
import os
import re
import subprocess
import time

SIM_OBJECT = "libnvidia-ml.so.1"


def parse(path):
    """Total Ir and Ir inside the simulator (inclusive, entered from outside)."""
    names = {"ob": {}, "fn": {}}
    total = None
    summary = None
    current_ob = ""
    call_ob = None
    pending_call = False
    sim_inclusive = 0
    desc = ""
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger:"):
                desc = line.split(":", 2)[2].strip()
            if line.startswith("totals:"):
                total = int(line.split()[1])
                continue
            if line.startswith("summary:"):
                summary = int(line.split()[1])
                continue
            m = re.match(r"^(c?ob)=(?:\((\d+)\))?\s*(.*)$", line.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                if ident is not None and name:
                    names["ob"][ident] = name
                resolved = names["ob"].get(ident, name) if ident is not None else name
                if kind == "ob":
                    current_ob = resolved
                else:
                    call_ob = resolved
                continue
            if line.startswith("fn="):
                call_ob = None
                continue
            if line.startswith("calls="):
                pending_call = True
                continue
            if pending_call:
                pending_call = False
                target = call_ob if call_ob is not None else current_ob
                call_ob = None
                parts = line.split()
                if len(parts) >= 2 and target.endswith(SIM_OBJECT) and not current_ob.endswith(
                        SIM_OBJECT):
                    sim_inclusive += int(parts[1])
    total = total if total is not None else summary or 0
    return {"trigger": desc, "total_ir": total, "sim_ir": sim_inclusive,
            "agent_ir": total - sim_inclusive}


def dumps(prefix):
    """Parsed dumps of one run, by the name given to the dump request."""
    out = {}
    for path in sorted(glob.glob(prefix + "*")):
        parsed = parse(path)
        m = re.search(r"Client Request:\s*(\S+)", parsed["trigger"])
        if m:
            out[m.group(1)] = parsed
    return out


def valgrind(out_prefix):
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_prefix}.%p",
            "--collect-systime=no"]


def cycles(bench_bin, workdir, gpus, count):
    prefix = os.path.join(workdir, f"callgrind-cycles-{gpus}")
    run = subprocess.run(valgrind(prefix) + [bench_bin, "--mode=cycles", f"--gpus={gpus}",
                                             f"--cycles={count}"],
                         capture_output=True, text=True, check=True)
    parts = dumps(prefix)
    out = {"gpus": gpus, "cycles": count, "stdout": run.stdout.strip().splitlines()[-1]}
    for name in ("cycles", "render"):
        if name in parts:
            p = parts[name]
            out[name] = {k: p[k] / count for k in ("total_ir", "sim_ir", "agent_ir")}
    return out


def scrapes(bench_bin, workdir, gpus, count):
    """Instructions of the server process per /metrics scrape (keep-alive, as
    Prometheus scrapes), minus an idle period of the same length."""
    import http.client

    prefix = os.path.join(workdir, f"callgrind-scrape-{gpus}")
    proc = subprocess.Popen(valgrind(prefix) + [bench_bin, "--mode=serve", f"--gpus={gpus}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(proc.stdout.readline().split()[1])

        def command(text):
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "ok"

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/metrics")
        body = conn.getresponse().read()  # connection set up outside the count
        command("zero")
        start = time.monotonic()
        for _ in range(count):
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            body = resp.read()
            assert resp.status == 200
        elapsed = time.monotonic() - start
        command("dump scrapes")
        command("zero")
        time.sleep(elapsed)
        command("dump idle")
        conn.close()
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    parts = dumps(prefix)
    scraped = parts["scrapes"]["total_ir"]
    idle = parts["idle"]["total_ir"] if "idle" in parts else 0
    return {"gpus": gpus, "scrapes": count, "body_bytes": len(body),
            "ir_per_scrape": (scraped - idle) / count, "idle_ir": idle}
