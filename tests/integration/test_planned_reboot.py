#!/usr/bin/env python3
"""The planned-reboot drill (issue 42), 4x faster than real time:
  - planned-reboot.yaml: gpuscope starts with the node, the 18 NVLink links of
    each GPU train up over the first minute (15 s here). While they train no
    gpuscope_nvlink_link_failure is 1 and the NVLink check stays ok; then every
    link is up and the series (and gpuscope_gpu_up_since_seconds) are gone.
  - nvlink-fails-training.yaml: GPU 1's link 5 never trains, GPU 0's link 2 goes
    down at 100 s (25 s here) after it trained. With --nvlink-training 20s
    (training time in real seconds), link 5 reads 0 (training) and then 1 once
    20 s have passed; link 2 reads 1 as soon as it goes down.
"""
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpuscope_testlib import SOURCE_DIR, Serve, check, main  # noqa: E402

SCENARIOS = os.path.join(SOURCE_DIR, "sim", "scenarios", "health")
FAST = {"GPUSCOPE_SIM_TIME_SCALE": "4"}


def link_failures(text):
    """{(gpu, link): value} of gpuscope_nvlink_link_failure."""
    return {(m.group(1), m.group(2)): float(m.group(3)) for m in re.finditer(
        r'^gpuscope_nvlink_link_failure\{gpu="(\d+)",uuid="[^"]+",link="(\d+)"\} (\S+)$', text,
        re.M)}


def nvlink_health(text):
    return [float(v) for v in re.findall(
        r'^gpuscope_gpu_health\{gpu="\d+",uuid="[^"]+",check="nvlink"\} (\S+)$', text, re.M)]


class PlannedRebootTest(unittest.TestCase):
    def test_training_raises_nothing(self):
        with Serve(["--simulate", os.path.join(SCENARIOS, "planned-reboot.yaml"),
                    "--nvlink-training", "20s"], env=FAST) as s:
            start, saw_training = time.time(), False
            while time.time() - start < 24:  # 96 scenario seconds: past training and its time
                _, _, text = s.get("/metrics")
                failures = link_failures(text)
                if failures:  # the time the GPU came up is served beside them
                    saw_training = True
                    check(re.search(r'^gpuscope_gpu_up_since_seconds\{gpu="0",uuid="[^"]+"\} '
                                    r'\S+$', text, re.M), "gpuscope_gpu_up_since_seconds")
                check(all(v == 0 for v in failures.values()), "a training link reads down: %s"
                      % {k: v for k, v in failures.items() if v})
                check(all(v == 0 for v in nvlink_health(text)), "the NVLink check warned")
                time.sleep(0.5)
            check(saw_training, "no link was seen training")
            check(link_failures(text) == {}, "links still not up: %s" % link_failures(text))
            check("gpuscope_gpu_up_since_seconds{" not in text, "up_since without a link down")

    def test_link_down_past_training_or_on_a_running_node(self):
        with Serve(["--simulate", os.path.join(SCENARIOS, "nvlink-fails-training.yaml"),
                    "--nvlink-training", "20s"], env=FAST) as s:
            text = s.wait_metrics(lambda t: ("1", "5") in link_failures(t), "link 5 training")
            check(link_failures(text)[("1", "5")] == 0, "link 5 reads training first")
            text = s.wait_metrics(lambda t: link_failures(t).get(("1", "5")) == 1,
                                  "link 5 down past training", timeout=40)
            text = s.wait_metrics(lambda t: link_failures(t).get(("0", "2")) == 1,
                                  "link 2 down on the running node", timeout=40)
            check(max(nvlink_health(text)) == 1, "the NVLink check warns")


if __name__ == "__main__":
    main()
