#!/usr/bin/env python3
"""deploy/slurm/: the prolog and epilog that write and remove gpuscope's job
mapping files and append the job's report, run as slurmd runs them (its
environment; `scontrol` replaced by a recorder that knows the job's output
file) against a real agent on the simulator. Checks: the prolog maps the job
on its GPUs (a GPU shared by two jobs keeps both lines), by each GPU's device
file minor (its gres index's place in slurmd -G's list) or UUID, never by the
gres index itself (issue 41), the agent counts it,
the epilog unmaps it, waits for the agent to see the end and appends the
report to the output file and the AdminComment; a report that fails (the
job unknown to the agent) writes nothing to Slurm and still exits 0; the
scripts pass shellcheck (scripts/setup.sh installs it).

Run as root, as slurmd runs them (issue 39, item 1): the report is appended
as the job's owner (nobody), so an owner who puts a symbolic link to a file
of root's in place of their output file gets nothing written there; a
mapping directory that others could change (world-writable, a symbolic link)
is refused, a missing one made 0755; GPUSCOPE_REPORT_ARGS is never
glob-expanded (a recording `gpuscope` stands in for the agent there).
"""
import json
import os
import pwd
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import (GPUSCOPE, SOURCE_DIR, Serve, check, main,  # noqa: E402
                              need, need_tool, wait_until)
from jobs_fixture import make_node  # noqa: E402

SLURM = os.path.join(SOURCE_DIR, "deploy", "slurm")

FAKE_SCONTROL = """#!/bin/sh
# `scontrol show job ID` prints the output file; `update` is recorded.
if [ "$1" = show ]; then echo "   StdOut=$FAKE_STDOUT"; exit 0; fi
printf '%s\\n' "$@" >> "$FAKE_UPDATES"
"""

# Records its arguments; says the job ended and prints a one-line report.
FAKE_GPUSCOPE = """#!/bin/sh
printf '%s\\n' "$@" >> "$FAKE_ARGS"
case " $* " in *" --json "*) echo '{"end": 1}' ;; *) echo "Report for job $3" ;; esac
"""


def read(path):
    with open(path) as f:
        return f.read()


def job_owner():
    """(uid, gid) the test's jobs belong to: nobody's when run as root (as
    slurmd runs the epilog), else our own."""
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    nobody = pwd.getpwnam("nobody")
    return nobody.pw_uid, nobody.pw_gid


class SlurmScriptsTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory(prefix="gpuscope-slurm-")
        self.addCleanup(d.cleanup)
        self.dir = d.name
        os.chmod(self.dir, 0o755)  # the job's owner reaches their home below
        self.scenario, self.mapping = make_node(self.dir, start_jobs=False)
        self.uid, self.gid = job_owner()
        self.home = os.path.join(self.dir, "home")
        os.mkdir(self.home)
        os.chown(self.home, self.uid, self.gid)
        self.stdout = os.path.join(self.home, "slurm-4242.out")
        self.write_output("training done\n")
        self.updates = os.path.join(self.dir, "updates")
        self.scontrol = os.path.join(self.dir, "scontrol")
        with open(self.scontrol, "w") as f:
            f.write(FAKE_SCONTROL)
        os.chmod(self.scontrol, 0o755)

    def write_output(self, text):
        """The job's output file, as slurmstepd makes it: the owner's."""
        with open(self.stdout, "w") as f:
            f.write(text)
        os.chown(self.stdout, self.uid, self.gid)

    def script(self, name, job, gpus, agent=None, wait="10", **more):
        env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": job, "SLURM_JOB_GPUS": gpus,
               "SLURM_JOB_UID": str(self.uid), "SLURM_JOB_GID": str(self.gid),
               "GPUSCOPE_HPC_JOB_MAPPING_DIR": self.mapping, "GPUSCOPE_BIN": GPUSCOPE,
               "SCONTROL": self.scontrol, "FAKE_STDOUT": self.stdout,
               "FAKE_UPDATES": self.updates, "GPUSCOPE_REPORT_TO": "both",
               "GPUSCOPE_REPORT_WAIT": wait,
               # Not this host's slurmd -G: index k is /dev/nvidia<k> unless a test says.
               "SLURMD": "/bin/false"}
        if agent:
            env["GPUSCOPE_AGENT"] = agent.base
        env.update(more)
        p = subprocess.run([os.path.join(SLURM, name)], env=env, capture_output=True,
                           text=True, timeout=30, cwd=self.dir)
        check(p.returncode == 0, "%s exited %s: %s" % (name, p.returncode, p.stderr))
        return p.stderr

    def fake_gpuscope(self):
        """A recording `gpuscope`: the epilog without an agent. Returns the
        environment that selects it."""
        path = os.path.join(self.dir, "fake-gpuscope")
        with open(path, "w") as f:
            f.write(FAKE_GPUSCOPE)
        os.chmod(path, 0o755)
        return {"GPUSCOPE_BIN": path, "FAKE_ARGS": os.path.join(self.dir, "args"),
                "GPUSCOPE_REPORT_TO": "output"}

    def mapped(self, gpu):
        path = os.path.join(self.mapping, gpu)
        return read(path).split() if os.path.exists(path) else []

    def test_prolog_epilog_report(self):
        self.script("gpuscope-prolog", "4242", "0,1")
        self.script("gpuscope-prolog", "4243", "1")
        check(self.mapped("nvidia0") == ["4242"] and self.mapped("nvidia1") == ["4242", "4243"],
              "mapping: %s" % os.listdir(self.mapping))
        with Serve(["--simulate", self.scenario, "--hpc-job-mapping-dir", self.mapping,
                    "--attribution-refresh", "200ms"]) as agent:
            agent.wait_healthy()
            wait_until(lambda: agent.get("/api/v1/jobs?kind=job&id=4242")[0] == 200, "job seen")
            time.sleep(3)  # the job runs a few cycles
            self.script("gpuscope-epilog", "4242", "0,1", agent)
            check(self.mapped("nvidia0") == [] and self.mapped("nvidia1") == ["4243"],
                  "after the epilog: %s" % os.listdir(self.mapping))
            out = read(self.stdout)
            check(out.startswith("training done\n") and "Report for job 4242" in out and
                  "ended" in out and "1 of 2 GPUs were never used" in out, out)
            updates = read(self.updates).splitlines()
            check(updates[:2] == ["update", "job=4242"], updates)
            comment = updates[2]
            check(comment.startswith("AdminComment=gpuscope:{"), comment)
            report = json.loads(comment[len("AdminComment=gpuscope:"):])
            check(report["job"] == "job 4242" and report["end"] is not None, report)

            # A failed report (job 999 is unknown to the agent) writes nothing to Slurm.
            os.unlink(self.updates)
            before = read(self.stdout)
            err = self.script("gpuscope-epilog", "999", "0", agent, wait="2")
            check("no report, nothing written" in err and "no job '999'" in err, err)
            check(read(self.stdout) == before, "output file untouched")
            check(not os.path.exists(self.updates), "AdminComment untouched")

    def test_epilog_writes_as_the_job_owner(self):
        need(os.geteuid() == 0, "slurmd runs the epilog as root; not root here",
             setup_installs=False)
        # A file only root may read or write, in a folder only root may enter.
        vault = os.path.join(self.dir, "vault")
        os.mkdir(vault, 0o700)
        secret = os.path.join(vault, "secret")
        with open(secret, "w") as f:
            f.write("root's only\n")
        os.chmod(secret, 0o600)
        fake = self.fake_gpuscope()

        # The owner replaces their output file with a symbolic link to it.
        os.unlink(self.stdout)
        os.symlink(secret, self.stdout)
        err = self.script("gpuscope-epilog", "4242", "0", **fake)
        check(read(secret) == "root's only\n", "the epilog wrote into root's file")
        check("could not append to %s as uid %d" % (self.stdout, self.uid) in err, err)

        # A plain output file still gets its report, and stays the owner's.
        os.unlink(self.stdout)
        self.write_output("training done\n")
        err = self.script("gpuscope-epilog", "4242", "0", **fake)
        check(read(self.stdout) == "training done\n\nReport for job 4242\n",
              "report appended: %r (%s)" % (read(self.stdout), err))
        info = os.stat(self.stdout)
        check((info.st_uid, info.st_gid) == (self.uid, self.gid),
              "the output file changed owner: %d:%d" % (info.st_uid, info.st_gid))

    def test_report_args_are_not_globbed(self):
        for name in ("a.yaml", "b.yaml"):  # what `*` would match in the epilog's folder
            open(os.path.join(self.dir, name), "w").close()
        fake = self.fake_gpuscope()
        self.script("gpuscope-epilog", "4242", "0", GPUSCOPE_REPORT_ARGS="--thresholds *.yaml",
                    **fake)
        args = read(fake["FAKE_ARGS"]).splitlines()
        check("*.yaml" in args and "a.yaml" not in args, "report arguments: %s" % args)

    def test_mapping_dir_others_can_change_is_refused(self):
        os.chmod(self.mapping, 0o777)
        err = self.script("gpuscope-prolog", "4242", "0")
        check("writable by others: refused" in err, err)
        check(os.listdir(self.mapping) == [], "wrote into a world-writable mapping directory")

        real = os.path.join(self.dir, "elsewhere")
        os.mkdir(real)
        link = os.path.join(self.dir, "jobs-link")
        os.symlink(real, link)
        err = self.script("gpuscope-prolog", "4242", "0", GPUSCOPE_HPC_JOB_MAPPING_DIR=link)
        check("is a symbolic link or not a directory: refused" in err, err)
        check(os.listdir(real) == [], "wrote through a symbolic link")

        missing = os.path.join(self.dir, "run", "jobs")
        self.script("gpuscope-prolog", "4242", "0", GPUSCOPE_HPC_JOB_MAPPING_DIR=missing)
        info = os.stat(missing)
        check(stat.S_IMODE(info.st_mode) == 0o755 and info.st_uid == os.geteuid(),
              "made %o uid %d" % (stat.S_IMODE(info.st_mode), info.st_uid))
        check(read(os.path.join(missing, "nvidia0")) == "4242\n", "mapped in the new directory")

    def test_prolog_names_gpus_by_device_file_or_uuid(self):
        # Issue 41: SLURM_JOB_GPUS numbers the node's gres device files (slurmd -G's
        # order), not NVML's GPUs. A node whose gres.conf lists /dev/nvidia4 and
        # /dev/nvidia6 first, then /dev/nvidia2: gres GPUs 1 and 2 are minors 6 and 2.
        fake_slurmd = os.path.join(self.dir, "slurmd")
        with open(fake_slurmd, "w") as f:
            f.write("#!/bin/sh\n[ \"$1 $2 $3\" = \"-G -N gpunode1\" ] || exit 1\ncat <<EOF\n"
                    "slurmd: Gres Name=gpu Type=(null) Count=1 Index=2 ID=7696487 "
                    "File=/dev/nvidia2 (null)\n"
                    "slurmd: Gres Name=gpu Type=(null) Count=2 Index=0 ID=7696487 "
                    "File=/dev/nvidia[4,6] (null)\n"
                    "slurmd: Gres Name=mps Count=100 Index=0 ID=7 File=/dev/nvidia9\nEOF\n")
        os.chmod(fake_slurmd, 0o755)
        self.script("gpuscope-prolog", "501", "1,2", SLURMD=fake_slurmd,
                    SLURMD_NODENAME="gpunode1")
        check(sorted(os.listdir(self.mapping)) == [".lock", "nvidia2", "nvidia6"] and
              self.mapped("nvidia6") == ["501"], "by gres index: %s" % os.listdir(self.mapping))

        # Slurm 25.11 names GPUs by UUID in CUDA_VISIBLE_DEVICES (SLURM_JOB_GPUS
        # stays indexes): the UUIDs name them best. Anything else is refused.
        gpu = "GPU-5e1f2a3b-0000-1111-2222-333344445555"
        mig = "MIG-0a1b2c3d-4444-5555-6666-777788889999"
        err = self.script("gpuscope-prolog", "502", "0,1",
                          CUDA_VISIBLE_DEVICES="%s,%s,GPU-../../etc/x,3x" % (gpu, mig))
        check(self.mapped(gpu) == ["502"] and self.mapped(mig) == ["502"] and
              not any("502" in self.mapped(f) for f in ("nvidia0", "nvidia1")),
              "by UUID: %s" % os.listdir(self.mapping))
        check("ignoring GPU 'GPU-../../etc/x'" in err and "ignoring GPU '3x'" in err, err)

        if os.geteuid() == 0:
            # What the device file is, not its name: a node whose gres.conf names
            # /dev/gpu0 for the device of minor 5 (mknod needs root).
            dev = os.path.join(self.dir, "gpu0")
            os.mknod(dev, 0o600 | stat.S_IFCHR, os.makedev(195, 5))
            self.script("gpuscope-prolog", "503", "0", GPUSCOPE_GRES_GPU_FILES=dev)
            check(self.mapped("nvidia5") == ["503"], "by minor: %s" % os.listdir(self.mapping))

        # The epilog unmaps a job from every file, whatever it is named by (an
        # older prolog's index file too).
        with open(os.path.join(self.mapping, "0"), "w") as f:
            f.write("501\n77\n")
        fake = self.fake_gpuscope()
        self.script("gpuscope-epilog", "501", "1,2", SLURMD="/bin/false", **fake)
        check(self.mapped("0") == ["77"] and not os.path.exists(
            os.path.join(self.mapping, "nvidia6")), "after the epilog: %s" %
            os.listdir(self.mapping))

    def test_shellcheck(self):
        shellcheck = need_tool("shellcheck", "shellcheck")
        p = subprocess.run([shellcheck, "-x", "-s", "bash", "gpuscope-prolog", "gpuscope-epilog",
                            "gpuscope-slurm-lib.sh"], cwd=SLURM, capture_output=True, text=True)
        check(p.returncode == 0, p.stdout + p.stderr)


if __name__ == "__main__":
    main()
