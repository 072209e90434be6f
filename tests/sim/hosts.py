"""hosts: what a simulated host is: HostSpec (what a fleet is asked for),
its shape (host_shape), Host (one running host, as kept in fleet.json),
the built tools a fleet copies (SIM_TOOLS) and the PID budget check.
Stateless functions; a Host belongs to its Fleet.
"""

import os
from dataclasses import dataclass
from typing import Optional

import procfs

SIM_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass
class HostSpec:
    name: str
    scenario: str = "clean"
    gpus: int = 8
    sudo: bool = True
    user: str = "root"
    bystanders: Optional[int] = None
    shape: Optional[str] = None


DEFAULT_BYSTANDERS = 100
LEAN_BYSTANDERS = 10   # the lean shape: realistic hosts for 1,000-host fleets
SHAPES = ("realistic", "simple", "lean")


def host_shape(spec):
    """(shape, bystanders) of a host: the spec's, else the environment's
    (FLEETREAP_SIM_SHAPE, FLEETREAP_SIM_BYSTANDERS), else realistic, 100."""
    shape = spec.shape or os.environ.get("FLEETREAP_SIM_SHAPE") or "realistic"
    if shape not in SHAPES:
        raise SimError(f"unknown shape {shape!r}; known: {', '.join(SHAPES)}")
    count = spec.bystanders
    if count is None:
        env = os.environ.get("FLEETREAP_SIM_BYSTANDERS")
        count = int(env) if env else {"realistic": DEFAULT_BYSTANDERS,
                                      "lean": LEAN_BYSTANDERS}.get(shape, 0)
    return shape, max(0, int(count))


class SimError(Exception):
    """The simulated fleet could not be brought up as asked."""


# The built tools a fleet copies from its bin_dir: what the CMake target
# sim_tools builds (tests/sim/CMakeLists.txt; sim.tools checks the two agree).
SIM_TOOLS = ("gpuload", "nvidia-smi", "tarpit", "bystanders", "devlog")


def missing_tools(bin_dir):
    """The SIM_TOOLS that 'bin_dir' lacks (or holds not executable)."""
    return [t for t in SIM_TOOLS if not os.access(os.path.join(bin_dir, t), os.X_OK)]


def default_bin_dir():
    """Where the built sim tools are (SIM_TOOLS): FLEETREAP_SIM_BIN_DIR, else
    the first build*/tests/sim of the source tree that holds gpuload."""
    env = os.environ.get("FLEETREAP_SIM_BIN_DIR")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(SIM_DIR))
    for build in sorted(os.listdir(root)):
        candidate = os.path.join(root, build, "tests", "sim")
        if build.startswith("build") and os.path.exists(os.path.join(candidate, "gpuload")):
            return candidate
    raise SimError("built sim tools not found: set FLEETREAP_SIM_BIN_DIR or build them "
                   "(bash scripts/build.sh normal --target sim_tools)")


class Host:
    """One running simulated host (runtime state, kept in fleet.json)."""

    def __init__(self, spec, address, hostdir):
        self.spec = spec
        self.name = spec.name
        self.address = address
        self.dir = hostdir
        self.unshare_pid = None
        self.unshare_start = None
        self.init_pid = None          # tini, PID 1 inside, as seen outside
        self.init_start = None
        self.listener = "sshd"        # sshd | tarpit | none
        self.protected = {}           # inner PID -> daemon name, at setup
        self.shm_keep = []
        self.shm_remove = []
        self.host_key_override = None
        self.popen = None
        self.shape, self.bystanders = host_shape(spec)
        self.containers = []          # inner PIDs of container_job workers
        self.cgroup = None            # the host's cgroup (machine path), None: no cgroups
        self.daemons = {}             # name -> {pid, exe, cgroup, unit, pidfile}
        self.jobs = {}                # "41", "docker:NAME", "pod:NAME" -> {cgroup, gpus, ...}
        self.impostors = []           # [{pid, named_like, exe, user, gpus, mode}]
        self.restart_units = {}       # unit -> {first_pid, gpus}

    @property
    def state(self):
        return os.path.join(self.dir, "state")

    def record(self):
        return {"spec": self.spec.__dict__, "address": self.address, "dir": self.dir,
                "unshare_pid": self.unshare_pid, "unshare_start": self.unshare_start,
                "init_pid": self.init_pid, "init_start": self.init_start, "listener": self.listener,
                "protected": self.protected, "shm_keep": self.shm_keep,
                "shm_remove": self.shm_remove, "containers": self.containers,
                "cgroup": self.cgroup, "daemons": self.daemons, "jobs": self.jobs,
                "impostors": self.impostors, "restart_units": self.restart_units}

    @classmethod
    def from_record(cls, r):
        h = cls(HostSpec(**r["spec"]), r["address"], r["dir"])
        for key in ("unshare_pid", "unshare_start", "init_pid", "init_start", "listener",
                    "shm_keep", "shm_remove"):
            setattr(h, key, r[key])
        h.protected = {int(k): v for k, v in r["protected"].items()}
        h.containers = r.get("containers", [])
        for key in ("cgroup", "daemons", "jobs", "impostors", "restart_units"):
            if key in r:
                setattr(h, key, r[key])
        return h


def check_pid_budget(specs):
    """Refuses a fleet that would take most of the machine's free PIDs:
    every process of every host also takes a PID in the machine's namespace,
    and pid_max (32768 by default) is shared with everyone on the machine."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    used = procfs.task_count()   # processes may exit under the count
    # 20: init, sshd, workers, a daemon; more for the scenarios with many.
    extra = {"gpu_node_daemons": 25, "slurm_shared": 5, "realistic_host": 400}
    need = sum(host_shape(s)[1] + 20 + extra.get(s.scenario, 0) for s in specs)
    spare = 2048
    if need > pid_max - used - spare:
        raise SimError(f"{len(specs)} hosts need about {need} PIDs; the machine has "
                       f"{pid_max - used} free of pid_max {pid_max} (and keeps {spare} "
                       "spare): set FLEETREAP_SIM_BYSTANDERS lower")
