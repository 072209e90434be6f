#!/usr/bin/env python3
"""Real-GPU bench: on a machine with an NVIDIA GPU and
PyTorch, prints in one run
  1. the driver's limit: kill -9 of a process holding MIB of GPU memory to
     the GPU's memory back at its idle level (NVML, polled every 5 ms);
  2. fleetreap --local's time to verified clean for an orphan that exits on
     SIGTERM (the default playbook);
  3. the same for an orphan that ignores SIGTERM (the default playbook with
     term_grace TERM_GRACE), so it is KILLed after term_grace.
Targets: (2) within 0.3 s of (1); (3) within term_grace + 0.3 s of (1)
(the worst run against the slowest driver's limit). NVML is polled every
5 ms through each fleetreap run too: "memory idle" is when the GPU's memory
came back during the run, so "after idle" is the time fleetreap spent past
the driver (the verify's read and its exit). The last lines say PASS or
FAIL for each target.
Each holder is started by this script (tests/gpu/gpu_holder.py,
orphaned: its reaper is this machine's PID 1). Before each real run a dry
run must plan to signal exactly that holder, else the bench stops (and kills
its holder by PID). Never resets a GPU.
Usage: real_gpu_bench.py --fleetreap BIN [--mib 40960] [--runs 2]
       [--term-grace 2s] [--out DIR]
"""
import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HOLDER = os.path.join(ROOT, "tests", "gpu", "gpu_holder.py")


class Nvml:
    """nvmlDeviceGetMemoryInfo of GPU 0 through libnvidia-ml (no CUDA context)."""

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.handle = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.handle)) == 0

    def used_mib(self):
        memory = Nvml.Memory()
        assert self.lib.nvmlDeviceGetMemoryInfo(self.handle, ctypes.byref(memory)) == 0
        return memory.used / 2**20


def start_holder(tmp, mib, ignore=False):
    pidfile = os.path.join(tmp, f"holder-{time.monotonic_ns()}.pid")
    argv = [sys.executable, HOLDER, "fd", str(mib), pidfile]
    if ignore:
        argv += ["--on-term", "ignore"]
    subprocess.run(argv, check=True)
    for _ in range(600):
        if os.path.exists(pidfile + ".ready"):
            return int(open(pidfile).read())
        time.sleep(0.1)
    raise RuntimeError("holder did not start: " + open(pidfile + ".log").read())


def wait_idle(nvml, idle, start, limit=30.0):
    while time.monotonic() - start < limit:
        if nvml.used_mib() <= idle + 64:
            return time.monotonic() - start
        time.sleep(0.005)
    return None


class IdleWatch:
    """Polls NVML every 5 ms from its start, in a thread, until stopped;
    "at" is the first time (s after "start") the memory read idle."""

    def __init__(self, nvml, idle, start):
        self.nvml, self.idle, self.start, self.at = nvml, idle, start, None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopped.is_set() and self.at is None:
            if self.nvml.used_mib() <= self.idle + 64:
                self.at = time.monotonic() - self.start
            time.sleep(0.005)

    def stop(self):
        self.stopped.set()
        self.thread.join()
        return self.at


def driver_limit(nvml, tmp, mib, idle):
    pid = start_holder(tmp, mib)
    time.sleep(0.5)
    start = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    return wait_idle(nvml, idle, start)


def fleetreap_run(args, tmp, nvml, idle, ignore, playbook):
    pid = start_holder(tmp, args.mib, ignore)
    time.sleep(0.5)
    base = [args.fleetreap, "--local", "--quiet", "--color", "never"]
    if playbook:
        base += ["--playbook", playbook]
    dry = os.path.join(tmp, "dry.json")
    subprocess.run(base + ["--dry-run", "--json", dry], capture_output=True)
    host = json.load(open(dry))["hosts"][0]
    targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
    if targets != {pid}:
        os.kill(pid, signal.SIGKILL)
        sys.exit(f"the plan is {sorted(targets)}, not our holder {pid}: stopping")
    report = os.path.join(args.out, f"bench-{'ignore' if ignore else 'term'}-{pid}.json")
    start = time.monotonic()
    watch = IdleWatch(nvml, idle, start)
    rc = subprocess.run(base + ["--json", report], capture_output=True).returncode
    wall = time.monotonic() - start
    freed = watch.stop()
    host = json.load(open(report))["hosts"][0]
    alive = os.path.exists(f"/proc/{pid}")
    if alive:
        os.kill(pid, signal.SIGKILL)
    steps = ", ".join(f"{t['step']} {t['duration_ms']}" for t in host["timings"])
    return wall, rc, host["status"], freed, steps


def parse_seconds(text):
    """ "2s", "500ms", "1.5" (seconds) -> seconds."""
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    return float(text[:-1] if text.endswith("s") else text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fleetreap", required=True)
    parser.add_argument("--mib", type=int, default=40960)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--term-grace", default="2s")
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    nvml = Nvml()
    tmp = tempfile.mkdtemp(prefix="real-gpu-bench-")
    idle = nvml.used_mib()
    print(f"GPU 0 idle: {idle:.0f} MiB used; holders of {args.mib} MiB, orphaned")
    limits = [driver_limit(nvml, tmp, args.mib, idle) for _ in range(args.runs)]
    print("driver's limit, kill -9 to idle memory: " +
          ", ".join("-" if x is None else f"{x:.3f} s" for x in limits))
    with open(os.path.join(ROOT, "playbooks", "default.yaml")) as f:
        text = f.read().replace("term_grace: 10s", f"term_grace: {args.term_grace}")
    grace = os.path.join(tmp, "grace.yaml")
    with open(grace, "w") as f:
        f.write(text)
    grace_s = parse_seconds(args.term_grace)
    limit = max((x for x in limits if x is not None), default=None)
    verdicts = []
    for ignore, playbook, label, allowed in (
            (False, None, "TERM-responsive orphan, default playbook", 0.3),
            (True, grace, f"TERM-ignoring orphan, term_grace {args.term_grace}", grace_s + 0.3)):
        walls, ok = [], True
        for _ in range(args.runs):
            wall, rc, status, freed, steps = fleetreap_run(args, tmp, nvml, idle, ignore,
                                                           playbook)
            walls.append(wall)
            ok = ok and rc == 0 and status == "clean"
            after = "-" if freed is None else f"{wall - freed:.3f} s"
            print(f"fleetreap --local to verified clean, {label}: {wall:.3f} s "
                  f"(exit {rc}, {status}; memory idle "
                  f"{'-' if freed is None else f'{freed:.3f} s'} after the start, "
                  f"fleetreap done {after} after idle; steps ms: {steps})")
        if limit is None:
            verdicts.append(f"FAIL {label}: no driver's limit measured")
            continue
        target = limit + allowed
        worst = max(walls)
        verdicts.append(f"{'PASS' if ok and worst <= target else 'FAIL'} {label}: worst "
                        f"{worst:.3f} s against the target {target:.3f} s (driver's limit "
                        f"{limit:.3f} s + {allowed:.1f} s; worst - limit {worst - limit:.3f} s)"
                        f"{'' if ok else '; a run was not clean'}")
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
