"""cgroups: the simulated fleet's cgroup plumbing on this machine (the
cgroup v2 mount, the probe that says whether hosts get real cgroups, the
removal of a fleet's trees, deepest first) and the cgroup paths inside a
host that owners use (a login session, a pod container, a Docker
container). The probe runs once per process; the rest is stateless.
"""

import hashlib
import os
import time

import procfs

CGROUP_DIR = "fleetreap-sim"   # every cgroup the sim makes is under CGROUP_ROOT/CGROUP_DIR


def cgroup2_mount():
    """Where this machine's cgroup v2 hierarchy is mounted
    (/sys/fs/cgroup/unified in hybrid mode, /sys/fs/cgroup on v2-only
    machines), or None."""
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                sep = fields.index("-")
                if fields[sep + 1] == "cgroup2":
                    return fields[4]
    except (OSError, ValueError):
        pass
    return None


_CGROUPS = None


def cgroups_status():
    """(True, base) when simulated hosts get real cgroups under 'base'
    (CGROUP_ROOT/fleetreap-sim), else (False, why). Off with
    FLEETREAP_SIM_CGROUPS=0. Probed once per process (mkdir + rmdir of a
    scratch cgroup; nothing is moved)."""
    global _CGROUPS
    if _CGROUPS is None:
        _CGROUPS = _probe_cgroups()
    return _CGROUPS


def cgroups_available():
    """Whether simulated hosts get real cgroups (a bool, for skipUnless;
    cgroups_status() says why not)."""
    return cgroups_status()[0]


def _probe_cgroups():
    if os.environ.get("FLEETREAP_SIM_CGROUPS", "1") == "0":
        return False, "FLEETREAP_SIM_CGROUPS=0"
    if not os.path.exists("/proc/self/ns/cgroup"):
        return False, "the kernel has no cgroup namespaces"
    mount = cgroup2_mount()
    if mount is None:
        return False, "no cgroup v2 hierarchy is mounted"
    base = os.path.join(mount, CGROUP_DIR)
    probe = os.path.join(base, f"probe-{os.getpid()}")
    try:
        os.makedirs(base, exist_ok=True)
        os.mkdir(probe)
        writable = os.access(os.path.join(probe, "cgroup.procs"), os.W_OK)
        os.rmdir(probe)
    except OSError as e:
        return False, f"cannot make cgroups under {base}: {e.strerror}"
    if not writable:
        return False, f"{base}: cgroup.procs is not writable"
    return True, base


def remove_cgroup_tree(path, timeout=5.0):
    """rmdir 'path' and every cgroup below it, deepest first, retrying while
    processes that were just killed are still leaving (EBUSY). Returns the
    cgroups that could not be removed."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for root, dirs, _ in os.walk(path, topdown=False):
            for d in dirs:
                _rmdir(os.path.join(root, d), left)
        if os.path.isdir(path):
            _rmdir(path, left)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _rmdir(path, left):
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        left.append(path)


def populated(path):
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return "populated 1" in f.read()
    except OSError:
        return False


def remove_stale_cgroups():
    """Removes every fleet cgroup tree under fleetreap-sim/ that holds no
    process any more (fleets that crashed or were ended without their
    cgroups); returns the trees removed. Trees with live processes stay."""
    ok, base = cgroups_status()
    removed = []
    if not ok or not os.path.isdir(base):
        return removed
    for entry in sorted(procfs.list_dir(base)):
        path = os.path.join(base, entry)
        if os.path.isdir(path) and not populated(path):
            if not remove_cgroup_tree(path, timeout=1.0):
                removed.append(path)
    return removed


# ---- paths inside a host ----------------------------------------------


def _hex(*parts, length=64):
    """Deterministic hex digits (container IDs, pod UIDs) from 'parts'."""
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def pod_uid(host, pod):
    """The Kubernetes UID of pod 'pod' on 'host' (with dashes)."""
    h = _hex(host, pod, length=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def pod_cgroup(host, pod, container, qos="besteffort"):
    """The cgroup of container 'container' of pod 'pod' (systemd cgroup
    driver, containerd): /kubepods.slice/kubepods-QOS.slice/
    kubepods-QOS-pod<uid with _>.slice/cri-containerd-<64 hex>.scope
    (guaranteed pods sit directly under kubepods.slice)."""
    uid = pod_uid(host, pod).replace("-", "_")
    cid = _hex(host, pod, container)
    if qos == "guaranteed":
        return f"/kubepods.slice/kubepods-pod{uid}.slice/cri-containerd-{cid}.scope"
    return (f"/kubepods.slice/kubepods-{qos}.slice/kubepods-{qos}-pod{uid}.slice/"
            f"cri-containerd-{cid}.scope")


def docker_cgroup(host, name):
    """/system.slice/docker-<64 hex>.scope for container 'name' on 'host'."""
    return f"/system.slice/docker-{_hex(host, 'docker', name)}.scope"


def session_cgroup(uid):
    """The login session scope of user 'uid' (root: session-1, gpuops:
    session-3, researcher: session-4), where a user's own commands run."""
    return f"/user.slice/user-{uid}.slice/session-{ {0: 1, 1000: 3}.get(uid, uid - 997) }.scope"
