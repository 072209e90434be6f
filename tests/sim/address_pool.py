"""address_pool: which 127.0.N.0/24 a fleet may use. Each fleet claims whole
/24s by creating /run/fleetreap-sim/nets/N (mkdir is atomic, so two fleets
started at once never share a net); the claim holds the fleet's workdir.
Claims of fleets whose hosts are all dead are reclaimed. Process-safe.
"""

import json
import os
import shutil
import time

import procfs
from procfs import start_time

REGISTRY = "/run/fleetreap-sim/nets"   # one claimed 127.0.N.0/24 per fleet
FIRST_NET, LAST_NET = 100, 250


def claim_net(workdir, count, cleanup):
    """Claims 'count' consecutive 127.0.N.0/24 nets; returns the first N, or
    None when none are free. 'cleanup(workdir)' ends a dead fleet found in
    the way."""
    os.makedirs(REGISTRY, exist_ok=True)
    for first in range(FIRST_NET, LAST_NET - count + 2):
        claimed = []
        for n in range(first, first + count):
            path = os.path.join(REGISTRY, str(n))
            _drop_stale_claim(path, cleanup)
            try:
                os.mkdir(path)
            except FileExistsError:
                break
            with open(os.path.join(path, "owner"), "w") as f:
                f.write(os.path.abspath(workdir))
            with open(os.path.join(path, "claimer"), "w") as f:
                f.write(f"{os.getpid()} {start_time(os.getpid())}")
            claimed.append(n)
        if len(claimed) == count:
            return first
        for n in claimed:
            shutil.rmtree(os.path.join(REGISTRY, str(n)), ignore_errors=True)
    return None


def _drop_stale_claim(path, cleanup):
    owner = procfs.read_file(os.path.join(path, "owner"))
    if owner is None:   # no claim, one being made, or one another fleet just dropped
        return
    owner = owner.strip()
    record = os.path.join(owner, "fleet.json")
    if not os.path.exists(record):
        # up() writes the record once every host is up: minutes for 1,000
        # hosts. A claim stays while the process that made it lives.
        if claimer_alive(path):
            return
        try:
            stale = time.time() - os.path.getmtime(path) > 60
        except procfs.GONE:   # another fleet dropped it meanwhile
            return
        if stale:
            shutil.rmtree(path, ignore_errors=True)
        return
    try:
        hosts = json.loads(procfs.read_file(record) or "null")["hosts"]
    except (ValueError, KeyError, TypeError):
        return
    if hosts and all(start_time(h["unshare_pid"]) != h["unshare_start"] for h in hosts):
        cleanup(owner)   # its hosts died with a crashed test: reclaim the net


def claimer_alive(path):
    """Whether the process that made the claim at 'path' still runs (the
    same PID with the same start time)."""
    try:
        pid, started = (procfs.read_file(os.path.join(path, "claimer")) or "").split()
        return start_time(int(pid)) == int(started)
    except ValueError:
        return False


def release_nets(workdir):
    if not os.path.isdir(REGISTRY):
        return
    for n in procfs.list_dir(REGISTRY):
        owner = procfs.read_file(os.path.join(REGISTRY, n, "owner"))
        if owner is not None and owner.strip() == os.path.abspath(workdir):
            shutil.rmtree(os.path.join(REGISTRY, n), ignore_errors=True)
