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

import os
import signal
import subprocess
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def _status_fields(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Threads", "VmRSS"):
                fields[key] = int(value.split()[0])
    return fields


def run_sampled(argv, timeout=900, interval=0.1):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"fds": 0, "threads": 0, "vmrss_kib": 0, "samples": 0,
            "last_fds": 0, "last_threads": 0}
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
                fields = _status_fields(proc.pid)
            except (OSError, ValueError):
                fds, fields = None, {}
            if fds is not None and fields:
                peak["fds"] = max(peak["fds"], fds)
                peak["threads"] = max(peak["threads"], fields.get("Threads", 0))
                peak["vmrss_kib"] = max(peak["vmrss_kib"], fields.get("VmRSS", 0))
                peak["last_fds"], peak["last_threads"] = fds, fields.get("Threads", 0)
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


def sshd_children_cpu(workdir):
    """CPU seconds the fleet's sshd listeners' reaped children used so far
    (each listener's cutime + cstime: every session and the commands it ran)."""
    total = 0.0
    key = workdir.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
            # The listener retitles itself "sshd: /usr/sbin/sshd -D -f ... [listener]".
            if not cmdline or b"sshd" not in cmdline[0] or not any(key in a for a in cmdline):
                continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[13]) + int(fields[14])) / TICKS  # cutime, cstime
        except OSError:
            continue
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
