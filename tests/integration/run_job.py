#!/usr/bin/env python3
"""The command test_run_command.py runs under `gpuscope run`: a stand-in for a
training script, built from steps given on its command line, in order:

  attach GPU[/MIG] MEMORY_GIB SM   show this process as a GPU process
                                   (the simulator's control file, sim/README.md)
  attach-pid PID GPU MEMORY SM     the same for another process
  sleep SECONDS
  grandchild SECONDS GPU MEMORY SM  start a child that starts a grandchild and exits
                                   at once (the grandchild reparents to
                                   gpuscope); the grandchild attaches itself and
                                   lives SECONDS
  trap FILE STATUS                 on SIGTERM: write FILE and exit STATUS
  ready FILE                       write FILE (the test waits for it)
  exit STATUS | kill SIGNAL        end so

Needs GPUSCOPE_SIM_CONTROL. stdlib only.
"""
import os
import signal
import subprocess
import sys
import time


def send(line):
    """Appends a control line and waits until the simulator applied it."""
    control = os.environ["GPUSCOPE_SIM_CONTROL"]
    with open(control, "a") as f:
        f.write(line + "\n")
        size = f.tell()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with open(control + ".ack") as f:
                if int(f.read() or 0) >= size:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    sys.exit("run_job: the simulator never applied %r" % line)


def attach(pid, gpu, memory, sm):
    send("attach %s %d memory=%s sm=%s" % (gpu, pid, memory, sm))


def main(steps):
    i = 0
    while i < len(steps):
        step = steps[i]
        if step == "attach":
            attach(os.getpid(), *steps[i + 1:i + 4])
            i += 4
        elif step == "attach-pid":
            attach(int(steps[i + 1]), *steps[i + 2:i + 5])
            i += 5
        elif step == "sleep":
            time.sleep(float(steps[i + 1]))
            i += 2
        elif step == "grandchild":
            seconds, gpu, memory, sm = steps[i + 1:i + 5]
            grandchild = [sys.executable, __file__, "attach", gpu, memory, sm, "sleep", seconds]
            # The middle process starts the grandchild and exits without waiting.
            subprocess.run([sys.executable, "-c",
                            "import subprocess, sys; subprocess.Popen(sys.argv[1:])"]
                           + grandchild, check=True)
            i += 5
        elif step == "trap":
            path, status = steps[i + 1], int(steps[i + 2])

            def on_term(signum, _frame, path=path, status=status):
                with open(path, "w") as f:
                    f.write("got signal %d\n" % signum)
                os._exit(status)
            signal.signal(signal.SIGTERM, on_term)
            i += 3
        elif step == "ready":
            with open(steps[i + 1], "w") as f:
                f.write("%d\n" % os.getpid())
            i += 2
        elif step == "exit":
            sys.exit(int(steps[i + 1]))
        elif step == "kill":
            os.kill(os.getpid(), getattr(signal, steps[i + 1]))
            time.sleep(5)
        else:
            sys.exit("run_job: unknown step %r" % step)


if __name__ == "__main__":
    main(sys.argv[1:])
