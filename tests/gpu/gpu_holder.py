#!/usr/bin/env python3
"""A real GPU holder in one of the shapes an H200 showed (open fds, only
mappings, a zombie leader), for the checks in tests/gpu/. It forks, the
child allocates MIB of GPU memory with PyTorch, takes its shape, writes its
PID to PIDFILE and "ready" to PIDFILE.ready; the parent exits at once, so
the child is an orphan (its reaper is this machine's PID 1).

Shapes:
  fd       holds the device files open, as any CUDA process
  map      closes every fd on an NVIDIA device file after allocating: only
           /proc/PID/maps shows what it holds (fuser says "m")
  threads  the main thread exits (exit(2) of one thread) while worker threads keep
           the CUDA context: state Z, /proc/PID/fd empty, the fds under
           /proc/PID/task/TID/fd
--on-term ignore|exit: what SIGTERM does (exit: the default action).
Usage: gpu_holder.py SHAPE MIB PIDFILE [--on-term ignore]
"""
import ctypes
import os
import signal
import sys
import threading
import time

shape, mib, pidfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ignore = "--on-term" in sys.argv and sys.argv[sys.argv.index("--on-term") + 1] == "ignore"

if os.fork() != 0:
    os._exit(0)  # the parent: the child is orphaned
os.setsid()
out = open(pidfile + ".log", "w")
os.dup2(out.fileno(), 1)
os.dup2(out.fileno(), 2)
if ignore:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

import torch  # noqa: E402


def ready():
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    with open(pidfile + ".ready", "w") as f:
        f.write("ready\n")


def allocate():
    x = torch.empty(mib * 2**20, dtype=torch.uint8, device="cuda")
    x.fill_(1)
    torch.cuda.synchronize()
    return x


if shape == "threads":
    held = []

    def work():
        held.append(allocate())
        ready()
        while True:
            time.sleep(1)

    threading.Thread(target=work).start()
    while not held:
        time.sleep(0.05)
    # The leader exits alone (exit(2), not exit_group; ctypes drops the GIL
    # for the call), as pthread_exit would, without unwinding Python's frames.
    ctypes.CDLL(None, use_errno=True).syscall(60, 0)

x = allocate()
if shape == "map":
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/dev/nvidia"):
            os.close(int(fd))
ready()
while True:
    time.sleep(1)
