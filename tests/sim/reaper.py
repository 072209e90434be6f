"""reaper: ends simulated hosts, and only them: every signal goes to a PID
that this package recorded, after checking that its kernel start time still
matches (so a reused PID is never hit). Stateless functions; thread-safe.
"""

import ctypes
import os
import signal
import socket
import subprocess
import time

import procfs
from procfs import start_time  # noqa: F401  (kernel start time of a PID, or None)


def end_recorded(pid, started):
    """SIGKILLs PID only if it is still the process that was recorded."""
    if pid and started is not None and start_time(pid) == started:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def end_hosts(hosts):
    """Ends each host's init (the kernel then ends its whole PID namespace
    and unshare reaps it and exits); unshare itself only if init is unknown
    ("--kill-child" then ends init)."""
    hosts = list(hosts)
    for h in hosts:
        if h.init_pid and h.init_start is not None:
            end_recorded(h.init_pid, h.init_start)
        else:
            end_recorded(h.unshare_pid, h.unshare_start)
    for h in hosts:
        if h.popen is not None:
            try:
                h.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    wait_gone([h.unshare_pid for h in hosts if h.popen is None], timeout=2)
    for h in hosts:
        if h.popen is None or h.popen.returncode is None:
            end_recorded(h.unshare_pid, h.unshare_start)


def listening(address):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((address, 22)) == 0


def wait_gone(pids, timeout=10):
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            fields = procfs.stat_fields(pid)
            if fields is None or fields[0] == "Z":   # gone, or only a zombie left
                break
            time.sleep(0.01)
