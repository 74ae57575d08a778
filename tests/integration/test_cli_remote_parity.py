#!/usr/bin/env python3
"""Remote parity (issue 44, item 8): a read command answers the same against a
running agent (--agent URL) as here on the same node.

`gpuscope serve --simulate mixed-node` with the simulator frozen at t=120 s
(GPUSCOPE_SIM_FROZEN_TIME), and the same commands run locally on the same
frozen scenario:

- `health --agent URL` prints what a local `health` prints (text, --json,
  --verbose, -i), with the same exit code (the JSON less its time and the
  process names, which the agent keeps without --process-names); a GPU id that
  matches nothing is NotFound (exit 6), as in query;
- `diagnose --agent URL -i 0,1` (HTTP 400 before) lists GPUs 0 and 1, as
  locally; every MIG instance is listed, and one is named by its MIG UUID, as
  locally; `-i 9` fails with the same exit code. The verdicts themselves differ
  by design (the agent's trailing window against a fresh local one), so the
  devices listed and their titles are compared;
- every -i form (index, list, GPU UUID, MIG UUID, PCI bus id, in any case, and ids that
  name nothing) gives the same output, stderr and exit code to health and diagnose here and
  remote; a MIG UUID names its GPU in health (judged per whole GPU), the instance in diagnose;
- an agent run with -d i (MIG instances only) takes GPU 7's own ids in health -i, as here;
- on a moving clock (GPUSCOPE_SIM_START_TIME, --at) the agent and a local diagnose of the same
  span find the same kinds on every GPU and MIG instance of diagnosis/mig-throttle.

Env: GPUSCOPE_BUILD_DIR, GPUSCOPE_SOURCE_DIR. ~90 s.
"""
import json
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, Serve, check, main, run  # noqa: E402

FROZEN = {"GPUSCOPE_SIM_FROZEN_TIME": "120"}
LOCAL = ["--simulate", "mixed-node"]
PROGRESS = re.compile(r"^gpuscope diagnose: simulated [^\n]*\n", re.M)  # slow steps only


def masked_health(out):
    """A health --json report less the evaluation time and the process names, which an
    agent serves only with --process-names (privacy, docs/api.md)."""
    doc = json.loads(out)
    doc.pop("timestamp")
    for gpu in doc["gpus"]:
        for p in gpu["processes"]:
            p["name"] = ""
    return doc


def local(*args):
    return run(list(args) + LOCAL, env=FROZEN)


def remote(agent, *args):
    return run(list(args) + ["--agent", agent.base])


def titles(text):
    """The device titles of a diagnose text report, without the window part."""
    return [re.sub(r"\s+window .*$", "", line) for line in text.splitlines()
            if line.startswith("GPU ")]


class RemoteParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.agent = Serve(["--simulate", "mixed-node", "-c", "100"], env=FROZEN)
        cls.agent.wait_healthy()
        time.sleep(1.0)  # several cycles: the frozen state has reached its fixed point

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()

    def same(self, *args, compare=lambda out: out):
        """Runs args locally and against the agent: (code, out, err) of both, equal."""
        here = local(*args)
        there = remote(self.agent, *args)
        check(here[0] == there[0], "%s: exit %s here, %s remote\n%s\n%s" % (
            args, here[0], there[0], here[2], there[2]))
        check(compare(here[1]) == compare(there[1]),
              "%s: here and remote differ:\n--- here\n%s\n--- remote\n%s" % (
                  args, here[1], there[1]))
        return here, there

    def test_health(self):
        for args in (["health"], ["health", "--verbose"], ["health", "-i", "6"],
                     ["health", "-i", "0,7", "--strict"]):
            self.same(*args)

        here, there = self.same("health", "--json", compare=masked_health)
        remote_doc = json.loads(there[1])
        check(len(remote_doc["gpus"]) == 8 and
              all(p["name"] == "" for g in remote_doc["gpus"] for p in g["processes"]), there[1])
        # An id that matches nothing is NotFound (exit 6) here and there, as in query.
        code, out, err = remote(self.agent, "health", "-i", "9")
        check(code == 6 and out == "" and 'no GPU matches id "9"' in err, (code, out, err))
        code, _, err = local("health", "-i", "9")
        check(code == 6 and 'no GPU matches id "9"' in err, ("local", code, err))
        # --watch asks the agent again every interval: two reports, one second apart.
        code, out, err = remote(self.agent, "health", "--watch", "1s", "--count", "2")
        check(code == 0 and out.count(" GPUs: ") == 2, (code, out, err))
        code, out, _ = remote(self.agent, "health", "--json", "--watch", "1s", "--count", "2")
        check(code == 0 and out.count('"timestamp"') == 2, (code, out))
        print("health --agent: same report and exit code as here")

    def test_every_id_form_on_mig(self):
        """Every -i form a local health or diagnose takes, on the MIG GPU 7 too: the same
        output, stderr and exit code here and against the agent."""
        listing = run(["-L"] + LOCAL, env=FROZEN)[1]
        migs = re.findall(r"UUID: (MIG-[0-9a-f-]+)", listing)
        gpu7 = re.findall(r"UUID: (GPU-[0-9a-f-]+)", listing)[7]
        check(len(migs) == 3, listing)
        known = ["0", "0,1", "7,0", " 7", gpu7, gpu7.lower(), "00000000:DB:00.0", "0000:db:00.0",
                 "DB:00.0", migs[0], migs[0].lower(), "7," + migs[1], migs[1] + "," + migs[2]]
        unknown = ["9", "1-2", "GPU-00000000-0000-0000-0000-000000000000", "ZZ:00.0",
                   "MIG-00000000-0000-0000-0000-000000000000", "0," + migs[0][:-1]]

        def ids_of(out):
            return [(g["index"], g.get("gpu_instance_id")) for g in json.loads(out)["gpus"]]

        for ids in known + unknown:
            for args, compare in ((["health"], lambda out: out),
                                  (["health", "--verbose", "--strict"], lambda out: out),
                                  (["health", "--json"], masked_health), (["diagnose"], titles),
                                  (["diagnose", "--json"], ids_of)):
                if ids in unknown:
                    if "--verbose" in args or args == ["diagnose", "--json"]:
                        continue  # the same path as their siblings
                    compare = lambda out: out  # noqa: E731 (nothing on stdout either side)
                here, there = self.same(*(args + ["-i", ids]), compare=compare)
                # An id that names nothing: one message, the same here and there. A local
                # diagnose that steps for over a second (a slow or sanitized build) also
                # shows its progress on stderr: not part of the answer.
                here_err = PROGRESS.sub("", here[2])
                check(here_err == there[2], "%s -i %r: stderr here %r, remote %r" % (
                    args, ids, here_err, there[2]))
                check((here[0] == 6) == (ids in unknown), (args, ids, here))
        # A list no GPU id could be (a control character, over 4096 characters) is a usage
        # error, here and before the agent is asked.
        for ids in ("0\x1b[2J", ",".join(["7"] * 2100)):
            for args in (["health"], ["diagnose"]):
                here, there = self.same(*(args + ["-i", ids]))
                check(here[0] == 2 and here[2] == there[2], (args, here, there))
        # A MIG instance's health is its GPU's (health judges whole GPUs): the same as -i 7,
        # every check evaluated.
        by_index = local("health", "--verbose", "-i", "7")
        for ids in (migs[0], "7," + migs[1]):
            check(local("health", "--verbose", "-i", ids) == by_index, (ids, by_index))
            check(remote(self.agent, "health", "--verbose", "-i", ids) == by_index, ids)
        check("thermal  OK" in by_index[1], by_index[1])
        # diagnose keeps naming the instance itself, each with its own title and findings.
        code, out, _ = remote(self.agent, "diagnose", "-i", migs[2] + "," + migs[0])
        check(code == 0 and [t.split(":")[0] for t in titles(out)] == [
            "GPU 7 MIG 3g.40gb (GI 1)", "GPU 7 MIG 1g.10gb (GI 7)"], out)
        print("-i: %d forms, health and diagnose, the same here and remote" % (
            len(known) + len(unknown)))

    def test_diagnose_ids_and_mig(self):
        here, there = self.same("diagnose", "-i", "0,1", compare=titles)
        check(there[0] == 0 and [t.split(":")[0] for t in titles(there[1])] == ["GPU 0", "GPU 1"],
              there)
        here, there = self.same("diagnose", compare=titles)
        check(len(titles(there[1])) == 11, there[1])  # 8 GPUs and GPU 7's 3 MIG instances
        # A MIG instance by its UUID (the agent took one GPU index before), and its GPU.
        mig_uuid = re.search(r"\((MIG-[0-9a-f-]+)\)", there[1]).group(1)
        here, there = self.same("diagnose", "-i", "7," + mig_uuid, compare=titles)
        check([t.split(":")[0] for t in titles(there[1])] == ["GPU 7", "GPU 7 MIG 3g.40gb (GI 1)"],
              there[1])
        def gpus(out):
            return [(g["index"], g.get("gpu_instance_id")) for g in json.loads(out)["gpus"]]
        here, there = self.same("diagnose", "-i", mig_uuid, "--json", compare=gpus)
        check(gpus(there[1]) == [(7, 1)], there[1])
        here, there = self.same("diagnose", "-i", "9", compare=titles)
        check(here[0] == 6 and "no GPU matches id" in there[2] and "9" in there[2], there[2])
        here, there = self.same("diagnose", "-i", "0,", compare=titles)
        check(here[0] == 2 and "empty entry" in there[2], there[2])
        print("diagnose --agent -i: the same devices as here, MIG instances included")

    def test_health_ids_on_an_instances_only_agent(self):
        """An agent run with -d i (dcgm-exporter's MIG instances only) lists no whole GPU, but
        health judges GPU 7, the one with instances (its XID and driver checks: the others
        need the whole GPU's readings): its index, UUID and bus id name it there, as its MIG
        UUIDs did (exit 6 before), and a GPU the agent does not sample stays unknown."""
        listing = run(["-L"] + LOCAL, env=FROZEN)[1]
        gpu7 = re.findall(r"UUID: (GPU-[0-9a-f-]+)", listing)[7]
        mig = re.findall(r"UUID: (MIG-[0-9a-f-]+)", listing)[0]
        with Serve(["--simulate", "mixed-node", "-c", "100", "-d", "i"], env=FROZEN) as agent:
            agent.wait_healthy()
            time.sleep(1.0)
            whole = remote(agent, "health", "--verbose")
            check(whole[0] == 0 and whole[1].count("\nGPU ") == 1 and "\nGPU 7 " in whole[1] and
                  "xid      OK" in whole[1], whole)
            for ids in ("7", gpu7, "DB:00.0", mig):
                there = remote(agent, "health", "--verbose", "-i", ids)
                check(there == whole, (ids, there, whole))
            code, out, err = remote(agent, "health", "-i", "0")
            check(code == 6 and out == "" and 'no GPU matches id "0"' in err, (code, out, err))
        print("health --agent -i on a -d i agent: GPU 7 by index, UUID, bus id and MIG UUID")


class MigFindingsParityTest(unittest.TestCase):
    """Findings per MIG instance, here and remote, on a moving clock: the agent runs
    sim/scenarios/diagnosis/mig-throttle.yaml (four MIG GPUs under a thermal fault, a power
    cap, a late fault and none) from t=120 s; after 40 s a local diagnose of the same span
    (--at 120+elapsed --window elapsed) finds the same kinds on every GPU and instance."""

    def test_same_findings_per_instance(self):
        scenario = os.path.join(SOURCE_DIR, "sim", "scenarios", "diagnosis", "mig-throttle.yaml")
        started = time.time()
        with Serve(["--simulate", scenario], env={"GPUSCOPE_SIM_START_TIME": "120"}) as agent:
            agent.wait_healthy()
            time.sleep(max(0.0, 40 - (time.time() - started)))
            elapsed = int(round(time.time() - started))
            moment = ["--simulate", scenario, "--at", "%ds" % (120 + elapsed),
                      "--window", "%ds" % elapsed]

            def kinds(out):
                return [(g["index"], g.get("gpu_instance_id"),
                         [f["kind"] for f in g.get("findings", [])])
                        for g in json.loads(out)["gpus"]]
            there = remote(agent, "diagnose", "--json")
            here = run(["diagnose", "--json"] + moment)
            check(here[0] == there[0] == 0, (here[0], here[2], there[0], there[2]))
            check(kinds(here[1]) == kinds(there[1]), "findings differ:\n%s\n%s" % (
                kinds(here[1]), kinds(there[1])))
            check(titles(run(["diagnose"] + moment)[1]) == titles(remote(agent, "diagnose")[1]),
                  "the text lists other devices")
            found = kinds(there[1])
            check(len(found) == 14 and (0, 1, ["thermal_throttle"]) in found and
                  (1, 3, ["power_cap"]) in found and (0, 7, ["idle"]) in found, found)
            # One instance by its MIG UUID: itself, with its finding, here and there.
            listing = run(["-L", "--simulate", scenario])[1]
            mig = re.findall(r"UUID: (MIG-[0-9a-f-]+)", listing)[3]  # GPU 1's 3g.71gb
            there = remote(agent, "diagnose", "--json", "-i", mig)
            here = run(["diagnose", "--json", "-i", mig] + moment)
            check(kinds(here[1]) == kinds(there[1]) == [(1, 1, ["power_cap"])],
                  (kinds(here[1]), there))
        print("diagnose: the same findings on %d GPUs and MIG instances here and remote" %
              len(found))


if __name__ == "__main__":
    main()
