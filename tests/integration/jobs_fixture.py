"""The simulated node of the job-report tests (test_job_reports*.py): GPU 0
trains and GPU 1 idles holding 20 GiB, both for Slurm job 4242; GPU 2 trains
for job 77. Mapping files (dcgm-exporter's convention) name the jobs."""
import os

SCENARIO = """\
description: job reports accuracy
seed: 28
gpus:
  - model: h100-sxm
    workload:
      - {at: 0, kind: training, noise: 0}
    processes:
      - {pid: 5100, name: torchrun, used_memory_gib: 40}
  - model: h100-sxm
    workload:
      - {at: 0, kind: idle}
    processes:
      - {pid: 5101, name: torchrun, used_memory_gib: 20}
  - model: h100-sxm
    workload:
      - {at: 0, kind: training, noise: 0}
    processes:
      - {pid: 5102, name: python3, used_memory_gib: 50}
"""


def make_node(workdir, start_jobs=True):
    """(scenario path, mapping directory) under workdir, jobs 4242 and 77
    running unless start_jobs is false."""
    scenario = os.path.join(workdir, "jobs.yaml")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    mapping = os.path.join(workdir, "jobs")
    os.mkdir(mapping)
    if start_jobs:
        start_jobs_now(mapping)
    return scenario, mapping


def start_jobs_now(mapping):
    """What the Slurm prolog does: write the jobs' mapping files."""
    for gpu, job in (("0", "4242"), ("1", "4242"), ("2", "77")):
        with open(os.path.join(mapping, gpu), "w") as f:
            f.write(job + "\n")


def end_job(mapping, gpus=("0", "1")):
    """What the Slurm epilog does: remove the job's mapping files."""
    for gpu in gpus:
        os.unlink(os.path.join(mapping, gpu))
