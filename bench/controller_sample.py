"""controller_sample: runs one fleetreap process and measures it (shared by
bench/scale_bench.py and bench/soak_bench.py).

run_sampled(argv, timeout) starts fleetreap, samples /proc/PID/fd (open
descriptors) and /proc/PID/status (Threads, VmRSS) every 'interval' seconds
while it runs, and reaps it with wait4 for its rusage. Returns a dict:
exit, wall_s, cpu_s (user + system), user_s, sys_s, maxrss_mib (rusage's
ru_maxrss: exec keeps the forked child's high-water mark, so it includes the
calling Python process's size at the fork; peak_vmrss_mib is fleetreap's own),
peak_fds, peak_threads, peak_vmrss_mib, last_fds, last_threads (the last
sample, taken close to the end, when every host is done), samples, and
timed_out (killed after 'timeout' seconds: a hang).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "sim"))
import procfs  # noqa: E402  (walks of /proc that tolerate processes exiting under them)

TICKS = os.sysconf("SC_CLK_TCK")


def run_sampled(argv, timeout=900, interval=0.1):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"fds": 0, "threads": 0, "vmrss_kib": 0, "samples": 0,
            "last_fds": 0, "last_threads": 0}
    done = threading.Event()

    def sample():
        while not done.is_set():
            fds = len(procfs.list_proc_dir(proc.pid, "fd"))
            fields = procfs.status_fields(proc.pid)   # None once it exited
            if fields:
                threads = _kib_or_count(fields.get("Threads"))
                peak["fds"] = max(peak["fds"], fds)
                peak["threads"] = max(peak["threads"], threads)
                peak["vmrss_kib"] = max(peak["vmrss_kib"], _kib_or_count(fields.get("VmRSS")))
                peak["last_fds"], peak["last_threads"] = fds, threads
                peak["samples"] += 1
            done.wait(interval)

    stderr = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    reader.start()
    sampler.start()
    timer = threading.Timer(timeout, lambda: proc.send_signal(signal.SIGKILL))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    timed_out = not timer.is_alive()
    timer.cancel()
    done.set()
    sampler.join()
    reader.join(5)
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "timed_out": timed_out,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "maxrss_mib": usage.ru_maxrss / 1024.0,
        "peak_fds": peak["fds"],
        "peak_threads": peak["threads"],
        "peak_vmrss_mib": peak["vmrss_kib"] / 1024.0,
        "last_fds": peak["last_fds"],
        "last_threads": peak["last_threads"],
        "samples": peak["samples"],
        "stderr_tail": (stderr[0] if stderr else b"")[-2000:].decode(errors="replace"),
    }


def take_report(path):
    """The JSON report fleetreap wrote at "path" (None when it wrote none),
    removed once read so the next run cannot pass for this one."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        report = json.load(f)
    os.remove(path)
    return report


def _kib_or_count(value):
    """12 for "12", 2048 for "2048 kB", 0 for None (a status line gone)."""
    words = (value or "").split()
    return int(words[0]) if words and words[0].isdigit() else 0


def sshd_children_cpu(workdir):
    """CPU seconds the fleet's sshd listeners' reaped children used so far
    (each listener's cutime + cstime: every session and the commands it ran).
    Processes that exit during the walk count as none."""
    total = 0.0
    key = workdir.encode()
    for pid in procfs.list_pids():
        cmdline = (procfs.read_proc_file(pid, "cmdline", binary=True) or b"").split(b"\0")
        # The listener retitles itself "sshd: /usr/sbin/sshd -D -f ... [listener]".
        if b"sshd" not in cmdline[0] or not any(key in a for a in cmdline):
            continue
        fields = procfs.stat_fields(pid)
        if fields and len(fields) > 14:
            total += (int(fields[13]) + int(fields[14])) / TICKS  # cutime, cstime
    return total


def memory_used_mib():
    """The machine's memory in use (MemTotal - MemAvailable), MiB."""
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            info[key] = int(value.split()[0])
    return (info["MemTotal"] - info["MemAvailable"]) / 1024.0


def load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())
