"""procfs: reading the machine's /proc, and any directory that other
processes change (a fleet's files, the net claims), while entries vanish
under the walk.

On a busy machine a process can exit, and a file can be removed, between
listing a directory and opening an entry, or between opening a file and
reading it. Every function here treats that as "gone": a read gives None, a
listing gives [] (or leaves the entry out), and a walk goes on. What counts
as gone is GONE: ENOENT, ESRCH, ENOTDIR, and EACCES, which root gets too for
processes it may not inspect (the sandbox's own PID 1 here: its ns/pid link);
anything else (EISDIR, EIO, ...) still raises, so a real problem is not hidden.

    for pid in procfs.list_pids():
        status = procfs.read_proc_file(pid, "status")   # None: it exited
        if status is None:
            continue

Every function takes the /proc to read as 'proc' (default PROC), so that
tests can walk a fake tree. Stateless; thread-safe.
"""

import os

PROC = "/proc"

# What a vanished process or file raises: ENOENT (open, listdir, readlink
# after it left), ESRCH (read of an open /proc/PID/* file after the process
# left), ENOTDIR (the name became something else); and EACCES, a process
# that is not ours to inspect, which a walk leaves out as well.
GONE = (FileNotFoundError, ProcessLookupError, NotADirectoryError, PermissionError)


def read_file(path, binary=False):
    """The file's bytes ('binary') or text (UTF-8, undecodable bytes
    replaced: /proc's names may hold any byte), or None when it is gone."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except GONE:
        return None
    return data if binary else data.decode("utf-8", errors="replace")


def read_link(path):
    """The symlink's text, or None when it is gone."""
    try:
        return os.readlink(path)
    except GONE:
        return None


def list_dir(path):
    """The names in directory 'path' (unsorted), [] when it is gone."""
    try:
        return os.listdir(path)
    except GONE:
        return []


def list_pids(proc=None):
    """The PIDs that /proc lists now (ascending). Any of them may be gone by
    the time it is read."""
    return sorted(int(e) for e in list_dir(proc or PROC) if e.isdigit())


def proc_path(pid, name="", proc=None):
    """/proc/PID, or /proc/PID/NAME."""
    return os.path.join(proc or PROC, str(pid), *([name] if name else []))


def read_proc_file(pid, name, binary=False, proc=None):
    """/proc/PID/NAME (e.g. "status", "cmdline", "task/PID/children"), as
    read_file; None when the process is gone."""
    return read_file(proc_path(pid, name, proc), binary)


def read_proc_link(pid, name, proc=None):
    """The target of /proc/PID/NAME (e.g. "exe", "ns/pid", "fd/3"), or None
    when the process or the descriptor is gone."""
    return read_link(proc_path(pid, name, proc))


def list_proc_dir(pid, name, proc=None):
    """The names in /proc/PID/NAME (e.g. "fd", "task"), [] when the process
    is gone."""
    return list_dir(proc_path(pid, name, proc))


def stat_fields(pid, proc=None):
    """/proc/PID/stat split after the command name: [state, ppid, pgrp, ...]
    (field 3 of proc(5) first, so field N is [N - 3]); None when the process
    is gone or the text is not a stat line."""
    text = read_proc_file(pid, "stat", proc=proc)
    if not text or ")" not in text:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields or None


def start_time(pid, proc=None):
    """The kernel start time of PID (field 22 of /proc/PID/stat), or None."""
    fields = stat_fields(pid, proc)
    if fields is None or len(fields) < 20 or not fields[19].isdigit():
        return None
    return int(fields[19])


def status_fields(pid, proc=None):
    """/proc/PID/status as {key: value} (values stripped), or None when the
    process is gone."""
    text = read_proc_file(pid, "status", proc=proc)
    if text is None:
        return None
    fields = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields[key] = value.strip()
    return fields


def task_count(proc=None):
    """How many tasks (threads) the machine runs now: each takes a PID.
    Processes that exit during the count count as none."""
    return sum(len(list_proc_dir(pid, "task", proc)) for pid in list_pids(proc))
