"""A real one-controller Slurm on this host for the tests that need one
(test_slurm_real.py, test_remediate_slurm.py): Debian's munged, slurmctld and
slurmd in the foreground under a temp folder, node `NODE` with GPUs in
gres.conf backed by character devices made with mknod. Needs root. Every
daemon is waited for when stopped, so the folder can be removed after."""
import os
import shutil
import subprocess
import tempfile
import time

from gpuscope_testlib import check, free_port, need, need_tool, stop_process, wait_until

NODE = "gpunode1"


class StartError(Exception):
    """A daemon exited as soon as it started."""


class LocalSlurm:
    def __init__(self, root, gpus, extra_conf=()):
        """extra_conf: slurm.conf lines (Prolog=, more NodeName= lines);
        "{root}" in them is the cluster's folder."""
        self.root, self.gpus, self.extra_conf = root, gpus, list(extra_conf)
        self.procs, self.logs = [], []
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    @classmethod
    def started(cls, gpus, extra_conf=()):
        """A running cluster in a new temp folder, or the test skips (fails
        under CI=true) with the reason it could not start."""
        for tool, pkg in (("slurmctld", "slurmctld"), ("slurmd", "slurmd"),
                          ("munged", "munge"), ("scontrol", "slurm-client"),
                          ("sbatch", "slurm-client")):
            need_tool(tool, pkg)
        need(os.geteuid() == 0, "slurmctld/slurmd/munged need root here (not root)",
             setup_installs=False)
        slurm = cls(tempfile.mkdtemp(prefix="gpuscope-slurm-"), gpus, extra_conf)
        try:
            slurm.start()
        except Exception as e:  # whatever failed, no daemon may outlive the test
            slurm.close()
            need(False, "a local Slurm could not start: %s" % e, setup_installs=False)
        return slurm

    def start(self):
        r = self.root
        munge = os.path.join(r, "munge")
        os.makedirs(munge)
        for d in ("state", "spool", "dev"):
            os.makedirs(os.path.join(r, d))
        os.chmod(r, 0o755)
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        shutil.chown(munge, "munge", "munge")
        shutil.chown(key, "munge", "munge")
        os.chmod(munge, 0o700)
        os.chmod(key, 0o400)
        socket = os.path.join(munge, "munge.socket")
        self.spawn("munged", ["munged", "--foreground", "--force", "--key-file=" + key,
                              "--socket=" + socket, "--pid-file=" + os.path.join(munge, "pid"),
                              "--seed-file=" + os.path.join(munge, "seed"),
                              "--log-file=" + os.path.join(munge, "log")], user="munge")
        wait_until(lambda: os.path.exists(socket), "munged's socket", timeout=10)
        for minor in range(self.gpus):
            dev = os.path.join(r, "dev", "nvidia%d" % minor)
            os.mknod(dev, 0o666 | 0o020000, os.makedev(195, minor))
        with open(os.path.join(r, "gres.conf"), "w") as f:
            f.write("NodeName=%s Name=gpu File=%s/dev/nvidia[0-%d]\n"
                    % (NODE, r, self.gpus - 1))
        # A port free when chosen may be taken before slurmctld binds it: try again.
        for attempt in range(3):
            self.write_conf(socket)
            try:
                self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
                self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", NODE])
                break
            except StartError as e:
                self.stop(keep=1)  # munged stays
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
        wait_until(lambda: self.node(NODE)[0] == "idle", "%s idle in sinfo" % NODE, timeout=20)

    def write_conf(self, socket):
        r = self.root
        ctld_port = free_port()
        slurmd_port = free_port()
        while slurmd_port == ctld_port:
            slurmd_port = free_port()
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=gpuscopetest",
                "SlurmctldHost=localhost(127.0.0.1)",
                "SlurmctldPort=%d" % ctld_port,
                "SlurmdPort=%d" % slurmd_port,
                "AuthType=auth/munge", "CredType=cred/munge",
                "AuthInfo=socket=" + socket,
                "SlurmUser=root", "SlurmdUser=root",
                "StateSaveLocation=" + os.path.join(r, "state"),
                "SlurmdSpoolDir=" + os.path.join(r, "spool"),
                "SlurmctldPidFile=" + os.path.join(r, "slurmctld.pid"),
                "SlurmdPidFile=" + os.path.join(r, "slurmd.pid"),
                "SlurmctldLogFile=" + os.path.join(r, "slurmctld.log"),
                "SlurmdLogFile=" + os.path.join(r, "slurmd.log"),
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
                "GresTypes=gpu", "ReturnToService=2",
                "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core", "MpiDefault=none",
                "JobAcctGatherType=jobacct_gather/none", "JobCompType=jobcomp/none",
                "AccountingStorageType=accounting_storage/none",
                "NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 "
                "Gres=gpu:%d State=UNKNOWN" % (NODE, self.gpus)] + [line.format(root=r) for line in self.extra_conf] + [
                "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP", ""]))

    def spawn(self, name, argv, user=None):
        log = open(os.path.join(self.root, name + ".out"), "w")
        self.logs.append(log)
        ids = {"user": user, "group": user, "extra_groups": []} if user else {}
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           env=self.env, **ids))
        time.sleep(0.3)
        if self.procs[-1].poll() is not None:
            raise StartError("%s exited at once: %s" % (name, self.tail(name + ".out")))

    def tail(self, name, size=800):
        """The end of a file in the cluster's folder (a daemon's log)."""
        path = os.path.join(self.root, name)
        if not os.path.exists(path):
            return "(no %s)" % name
        with open(path, errors="replace") as f:
            return f.read()[-size:]

    def stop(self, keep=0):
        """Stops (and waits for) the daemons started after the first `keep`."""
        for p in reversed(self.procs[keep:]):
            stop_process(p, timeout=5)
        for log in self.logs[keep:]:
            log.close()
        self.procs, self.logs = self.procs[:keep], self.logs[:keep]

    def close(self):
        """Stops every daemon, then removes the folder."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def cmd(self, *args):
        p = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=20)
        return p.returncode, p.stdout + p.stderr

    def node(self, name):
        """(state, reason) of `name`, as sinfo shows them; ("", "") if unknown."""
        code, out = self.cmd("sinfo", "--noheader", "--Node", "--format=%N|%T|%E")
        for line in out.splitlines() if code == 0 else []:
            f = line.split("|", 2)
            if len(f) == 3 and f[0] == name:
                return f[1].rstrip("*~#$@^-!"), ("" if f[2] == "none" else f[2])
        return "", ""

    def drain(self, name, reason):
        code, out = self.cmd("scontrol", "update", "nodename=" + name, "state=drain",
                             "reason=" + reason)
        check(code == 0, "scontrol drain %s: %s" % (name, out))

    def resume(self, name):
        code, out = self.cmd("scontrol", "update", "nodename=" + name, "state=resume")
        check(code == 0 or "Invalid node state" in out, "scontrol resume %s: %s" % (name, out))
