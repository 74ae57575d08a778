"""What the remediation tests share (not a test itself: ctest registers only
test_*.py): the simulator scenario they run, the agent's action log lines and
the fault injection through the simulator's control file."""
import os
import re

from gpuscope_testlib import wait_until

# Two healthy H100s; faults come from the control file.
SCENARIO = """description: two healthy H100s for the remediation tests
seed: 29
gpus:
  - model: h100-sxm
    count: 2
    workload:
      - {at: 0, kind: training, noise: 0.01}
"""
ACTION = re.compile(r"remediation action=(\w+) result=(\w+) ")
XID79_ON_GPU1 = ("inject 1 xid 79", "inject 1 lost")
RECOVER_GPU1 = ("clear 1 all",)
# Serve flags: a fast cycle, XIDs counted for 2 s, resume after 3 s healthy.
FAST = ["-c", "250", "-x", "2000", "--remediate-resume-after", "3s"]


def write_scenario(folder):
    path = os.path.join(folder, "two-h100.yaml")
    with open(path, "w") as f:
        f.write(SCENARIO)
    return path


def inject(control, lines):
    with open(control, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def actions(serve):
    """(action, result) of every remediation log line so far."""
    return ACTION.findall(serve.output())


def wait_action(serve, action, result, timeout=30):
    wait_until(lambda: (action, result) in actions(serve),
               "action=%s result=%s in the log:\n%s" % (action, result, serve.output()[-2000:]),
               timeout)
