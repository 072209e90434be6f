"""simfleet: a simulated fleet of GPU hosts on loopback, for fleetreap's demo
and integration tests.

Each simulated host is a real OpenSSH sshd on its own 127.0.N.X:22, living in
its own PID + mount + UTS namespace (tini is PID 1), with its own /dev/nvidia*
(plain files), /dev/shm, /etc/passwd|shadow|group|sudoers, root and gpuops
accounts, and a fake nvidia-smi and systemctl first on PATH. GPU workloads are
real processes (gpuload) that really receive signals. Nothing is written to
the machine's /etc, /usr or /dev, and only processes started here are ended,
by PID.

API (stdlib only):

    from simfleet import Fleet, HostSpec
    with Fleet(workdir) as fleet:            # down() on exit, even on failure
        fleet.up([HostSpec("gpu01", scenario="vllm_incident"),
                  HostSpec("gpu02", scenario="clean", gpus=8, sudo=False,
                           user="gpuops")])
        # writes workdir/inventory.yaml, workdir/known_hosts, workdir/keys/
        fleet.inventory, fleet.known_hosts, fleet.key     # absolute paths
        fleet.hosts["gpu01"].address                      # "127.0.N.1"
        fleet.exec("gpu01", "ps -e")    # CompletedProcess, run inside the host
        fleet.exec("gpu01", "cat /proc/self/cgroup", cgroup="/system.slice/x.service")
        fleet.exec_nested_pidns("gpu01", "fleetreap --local ...")  # a pod without hostPID
        fleet.exec_epilog("gpu01", 41, "fleetreap --local ...")    # slurm_shared's job 41
        fleet.ssh_argv("gpu01", "nvidia-smi -L")  # plain OpenSSH client argv
        truth = fleet.ground_truth()    # {host: {...}}, see ground_truth.py
    Fleet.cleanup(workdir)              # ends whatever a crashed run left

HostSpec(name, scenario="clean", gpus=8, sudo=True, user="root",
         bystanders=None, shape=None):
  sudo: whether gpuops has passwordless sudo on that host;
  user: the inventory's ansible_user ("root", or "gpuops" with become);
  shape: "realistic" (default, or $FLEETREAP_SIM_SHAPE), "simple" (the
      old shape: workers hold only their own GPU, argv = [title], no
      bystanders) or "lean" (realistic with 10 bystanders, for fleets of
      1,000 hosts), see host_shape();
  bystanders: unrelated sleeping processes on the host (default
      $FLEETREAP_SIM_BYSTANDERS, else 100 in the realistic shape, 10 in the
      lean one, 0 in the simple one). up() refuses a fleet whose processes would not fit in
      the machine's free PIDs (pid_max is global: 32768 here).
Scenarios are functions in scenarios.py, registered by name.

cgroups (where the machine's cgroup v2 hierarchy is writable, see
cgroups_available() and cgroups_status()): each host runs in its own subtree
CGROUP2/fleetreap-sim/netN/HOST and cgroup namespace, laid out like a
systemd host (README "cgroups"); fleet.cgroup is the fleet's tree (None
without cgroups), removed by down() and cleanup().

Process-count probe: fleet.pid_counter(name) is the last PID allocated in
the host's PID namespace (/proc/sys/kernel/ns_last_pid, read by a process
inside it), less what the probes themselves used, so that
after - before = processes (and threads) created in the host in between.

Hosts of a fleet run under "unshare --kill-child": ending the unshare process
(the only PID recorded in workdir/fleet.json) ends the whole host. With
Fleet(workdir, persistent=False) (the default), hosts also die with the
Python process that started them (PR_SET_PDEATHSIG), so a crashed test leaves
nothing running; scripts/fleet uses persistent=True.
"""

import atexit
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

import ground_truth
import host_setup
import procfs
from address_pool import REGISTRY, claim_net, release_nets  # noqa: F401


def scratch_dir(prefix):
    """A new directory under /tmp for one test, removed when the process
    exits (after its fleets are down), so test runs leave no files behind."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path
from reaper import (die_with_parent, end_hosts, end_recorded, listening,  # noqa: F401
                    start_time, wait_gone)

SIM_DIR = os.path.dirname(os.path.abspath(__file__))
DAEMON_NAMES = tuple(host_setup.DAEMONS)
GPUOPS_UID = 1000
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


def _populated(path):
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
        if os.path.isdir(path) and not _populated(path):
            if not remove_cgroup_tree(path, timeout=1.0):
                removed.append(path)
    return removed


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
SIM_TOOLS = ("gpuload", "nvidia-smi", "tarpit", "bystanders")


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


class Fleet:
    def __init__(self, workdir, bin_dir=None, persistent=False):
        self.workdir = os.path.abspath(workdir)
        self.bin_dir = bin_dir or default_bin_dir()
        self.persistent = persistent
        self.hosts = {}
        self.inventory = os.path.join(self.workdir, "inventory.yaml")
        self.known_hosts = os.path.join(self.workdir, "known_hosts")
        self.key = os.path.join(self.workdir, "keys", "id_ed25519")
        self.timings = {}
        self.probe_cost = None        # PIDs one pid_counter read uses (measured)
        self._pid_reads = {}
        self.cgroup = None            # the fleet's cgroup (machine path), None: no cgroups
        self.cgroup_note = None       # why hosts have no cgroups, when they have none
        self.real_slurm = False       # hosts run Debian's slurmd (up(slurm=True))
        self.slurm = None             # the SlurmCluster over the hosts, if any

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.down()
        return False

    # ---- bring-up -------------------------------------------------------

    def up(self, specs, timeout=60, slurm=False):
        """Starts every host, applies its scenario, writes inventory and
        known_hosts. slurm=True: the hosts get Debian's real slurmd (not
        the fake one) and, after the scenarios, a real Slurm cluster starts
        over them (self.slurm, a slurm_cluster.SlurmCluster; slurm may also
        be a dict of its options). Raises SimError (after cleaning up) on
        failure."""
        import scenarios
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise SimError("duplicate host names")
        for s in specs:
            scenarios.get(s.scenario)  # fail early on unknown names
        missing = missing_tools(self.bin_dir)
        if missing:
            raise SimError(f"sim tools missing in {self.bin_dir}: {', '.join(missing)} (build "
                           "them: bash scripts/build.sh normal --target sim_tools)")
        _check_pid_budget(specs)
        t0 = time.monotonic()
        os.makedirs(self.workdir, exist_ok=True)
        self.real_slurm = bool(slurm)
        first_net = claim_net(self.workdir, (len(specs) + 249) // 250, Fleet.cleanup)
        if first_net is None:
            raise SimError("no free 127.0.N.0/24 left for a simulated fleet")
        try:
            self._make_fleet_cgroup(first_net)
            self._install_tools()
            self._make_key(self.key, "fleetreap-sim")
            self._make_key(os.path.join(self.workdir, "keys", "other_ed25519"), "refused")
            for i, spec in enumerate(specs):
                address = f"127.0.{first_net + i // 250}.{i % 250 + 1}"
                host = Host(spec, address, os.path.join(self.workdir, "hosts", spec.name))
                if self.cgroup:
                    host.cgroup = os.path.join(self.cgroup, spec.name)
                    os.mkdir(host.cgroup)
                host_setup.prepare_host_dir(host, self)
                self.hosts[spec.name] = host
            self.timings["prepare_s"] = time.monotonic() - t0
            for host in self.hosts.values():
                self._start(host)
            self._save()
            self._wait_ready(timeout)
            self._move_unshares_out()
            self.timings["boot_s"] = time.monotonic() - t0
            with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
                staged = [pool.submit(_stage, scenarios.get(h.spec.scenario),
                                      host_setup.HostSetup(self, h))
                          for h in self.hosts.values()]
                for future in staged:
                    future.result()
            self._write_inventory()
            self._write_known_hosts()
            self._save()
            if slurm:
                from slurm_cluster import SlurmCluster
                self.slurm = SlurmCluster(self, **(slurm if isinstance(slurm, dict) else {}))
                self.slurm.start()
            self.timings["up_s"] = time.monotonic() - t0
        except BaseException:
            self.down()
            raise
        return self

    def _make_fleet_cgroup(self, first_net):
        """CGROUP_ROOT/fleetreap-sim/netN (N: the fleet's first claimed net,
        unique among live fleets), or a note why hosts get no cgroups."""
        ok, base = cgroups_status()
        if not ok:
            self.cgroup_note = base
            print(f"simfleet: hosts run without cgroups ({base}); /proc/PID/cgroup "
                  "reads the machine's own paths and units are found by environment",
                  file=sys.stderr)
            return
        path = os.path.join(base, f"net{first_net}")
        if os.path.isdir(path):
            if _populated(path) or remove_cgroup_tree(path, timeout=1.0):
                raise SimError(f"{path} still holds processes of another fleet")
        os.mkdir(path)
        self.cgroup = path

    def _move_unshares_out(self):
        """Each host's unshare process (outside the host's PID namespace)
        leaves the host's root cgroup for the fleet's, so that the host's
        cgroup tree holds only the host's own processes."""
        if not self.cgroup:
            return
        for host in self.hosts.values():
            try:
                with open(os.path.join(self.cgroup, "cgroup.procs"), "w") as f:
                    f.write(str(host.unshare_pid))
            except OSError:
                pass

    def _install_tools(self):
        bindir = os.path.join(self.workdir, "bin")
        os.makedirs(bindir, exist_ok=True)
        for tool in SIM_TOOLS:
            shutil.copy(os.path.join(self.bin_dir, tool), os.path.join(bindir, tool))
        for script in ("systemctl", "unitd"):
            shutil.copy(os.path.join(SIM_DIR, script), os.path.join(bindir, script))
            os.chmod(os.path.join(bindir, script), 0o755)
        os.chmod(os.path.join(bindir, "nvidia-smi"), 0o4755)   # sees every process
        daemons = os.path.join(self.workdir, "daemons")
        os.makedirs(daemons, exist_ok=True)
        for path in set(host_setup.INSTALLED.values()):
            target = os.path.join(daemons, os.path.basename(path))
            shutil.copy(os.path.join(self.bin_dir, "gpuload"), target)
            os.chmod(target, 0o755)

    @staticmethod
    def _make_key(path, comment):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment,
                            "-f", path], check=True)

    def _start(self, host):
        log = open(os.path.join(host.dir, "init.log"), "wb")
        argv = ["unshare", "--pid", "--mount", "--uts", "--fork", "--kill-child",
                "--mount-proc", "--propagation", "private",
                "tini", "-s", "--", "/bin/sh", os.path.join(SIM_DIR, "host_init.sh"),
                host.dir, os.path.join(self.workdir, "bin"), host.name, "yes",
                "yes" if host.cgroup else "no"]
        if host.cgroup:
            # Into the host's cgroup first: the new cgroup namespace is rooted
            # where unshare stands when it makes it.
            argv = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', host.cgroup,
                    argv[0], "--cgroup"] + argv[1:]
        if host.cgroup and self.real_slurm:
            # Slurm's cgroup/v1 hierarchies, rooted at the host's own subtrees too.
            import slurm_cluster
            for path in slurm_cluster.make_v1_cgroups(self.cgroup, host.name):
                argv = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', path] + argv
        host.popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            preexec_fn=None if self.persistent else die_with_parent)
        log.close()
        host.unshare_pid = host.popen.pid
        host.unshare_start = start_time(host.popen.pid)

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        pending = dict(self.hosts)
        while pending:
            for name, host in list(pending.items()):
                if host.popen.poll() is not None:
                    with open(os.path.join(host.dir, "init.log")) as f:
                        raise SimError(f"{name}: host init failed: {f.read()[-500:]}")
                if host.init_pid is None:
                    children = (procfs.read_proc_file(
                        host.unshare_pid, f"task/{host.unshare_pid}/children") or "").split()
                    if children:
                        host.init_pid = int(children[0])
                        host.init_start = start_time(host.init_pid)
                if host.init_pid and os.path.exists(os.path.join(host.state, "ready")) \
                        and listening(host.address):
                    del pending[name]
            if time.monotonic() > deadline:
                raise SimError(f"hosts not ready after {timeout}s: {sorted(pending)}")
            if pending:
                time.sleep(0.02)

    def _write_inventory(self):
        lines = ["# Simulated fleet written by tests/sim/simfleet.py", "all:", "  hosts:"]
        for h in self.hosts.values():
            lines += [f"    {h.name}:",
                      f"      ansible_host: {h.address}",
                      "      ansible_port: 22",
                      f"      ansible_user: {h.spec.user}",
                      f"      ansible_ssh_private_key_file: {self.key}",
                      f"      fleetreap_expected_gpus: {h.spec.gpus}"]
            if h.spec.user != "root":
                lines.append("      ansible_become: true")
        lines.append("  children:")
        groups = {}
        for h in self.hosts.values():
            groups.setdefault("scenario_" + h.spec.scenario, []).append(h.name)
        for group, members in sorted(groups.items()):
            lines += [f"    {group}:", "      hosts:"]
            lines += [f"        {m}: {{}}" for m in members]
        with open(self.inventory, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _write_known_hosts(self):
        with open(self.known_hosts, "w") as f:
            for h in self.hosts.values():
                key_file = h.host_key_override or os.path.join(h.dir, "etc",
                                                               "ssh_host_ed25519_key.pub")
                with open(key_file) as k:
                    keytype, blob = k.read().split()[:2]
                f.write(f"{h.address} {keytype} {blob}\n")

    def _save(self):
        tmp = os.path.join(self.workdir, "fleet.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"hosts": [h.record() for h in self.hosts.values()],
                       "cgroup": self.cgroup, "key": self.key, "inventory": self.inventory,
                       "known_hosts": self.known_hosts}, f, indent=1)
        os.replace(tmp, os.path.join(self.workdir, "fleet.json"))

    # ---- use ------------------------------------------------------------

    def host(self, name):
        return self.hosts[name]

    def exec(self, name, command, user=None, timeout=30, check=False, cgroup=None):
        """Runs 'command' with /bin/sh inside the host's namespaces (as root,
        or as 'user': "gpuops", "researcher"), in the host's cgroup 'cgroup'
        (a path inside the host, made if missing; default the user's login
        session, host_setup.session_cgroup: root's is
        /user.slice/user-0.slice/session-1.scope). Returns
        subprocess.CompletedProcess (text)."""
        host = self.hosts[name]
        uid = 0 if user in (None, "root") else host_setup._uid(user)
        argv = []
        if host.cgroup:
            target = host.cgroup + (cgroup or host_setup.session_cgroup(uid)).rstrip("/")
            os.makedirs(target, exist_ok=True)
            argv = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', target]
        argv += ["nsenter", "-t", str(host.init_pid), "-p", "-m", "-u"]
        argv += ["-C", "--wd=/"] if host.cgroup else ["--wd=/"]
        if uid:
            argv += ["-S", str(uid), "-G", str(uid)]
        argv += ["--", "/usr/bin/env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:"
                 "/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "/bin/sh", "-c", command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=check)

    def exec_nested_pidns(self, name, command, user=None, timeout=30, check=False,
                          cgroup=None):
        """Runs 'command' inside host 'name' in a new PID namespace nested in
        the host's, with its own /proc (unshare --pid --fork --mount, then a
        new proc mount), as in a Kubernetes pod without hostPID:
        /proc/self/ns/pid is neither the initial namespace nor the one
        /etc/fleetreap/host-pid-namespace names, and the host's PIDs, which
        the fake nvidia-smi still reports as the real driver does (it reads
        the host's /proc, bound at /run/fakegpu-hostproc in the nested mount
        namespace only), name other processes or none.
        Default cgroup: a pod container's (pod "fleetreap-agent"). As root,
        or as 'user' (setpriv after the unshare)."""
        if user not in (None, "root"):
            uid = host_setup._uid(user)
            command = (f"exec setpriv --reuid={uid} --regid={uid} --clear-groups "
                       f"/bin/sh -c {shlex.quote(command)}")
        inner = ("mount --bind /proc /run/fakegpu-hostproc && mount -t proc proc /proc && "
                 'exec /bin/sh -c "$1"')
        wrapped = ("mkdir -p /run/fakegpu-hostproc && exec unshare --pid --fork --mount "
                   f"--propagation private /bin/sh -c {shlex.quote(inner)} sh "
                   f"{shlex.quote(command)}")
        if cgroup is None:
            cgroup = host_setup.pod_cgroup(name, "fleetreap-agent", "fleetreap")
        return self.exec(name, wrapped, timeout=timeout, check=check, cgroup=cgroup)

    def exec_epilog(self, name, job_id, command, timeout=120):
        """Runs 'command' on host 'name' as Slurm runs a job's epilog: as
        root, in slurmd's cgroup (/system.slice/slurmd.service, outside every
        job cgroup), with the job's environment (SLURM_JOB_ID, SLURM_JOB_GPUS
        as host indexes, SLURM_JOB_USER, SLURM_JOB_UID, CUDA_VISIBLE_DEVICES,
        SLURM_SCRIPT_CONTEXT=epilog_slurmd) from h.slurm_job."""
        env = self.hosts[name].jobs[str(job_id)]["epilog_env"]
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        return self.exec(name, f"export {assignments}; {command}", timeout=timeout,
                         cgroup="/system.slice/slurmd.service")

    def ssh_argv(self, name, command, user="root", key=None):
        """The plain OpenSSH client command line for 'command' on host 'name'."""
        host = self.hosts[name]
        return ["ssh", "-T", "-i", key or self.key, "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR",
                f"{user}@{host.address}", command]

    def ground_truth(self):
        return ground_truth.collect(self)

    def _read_ns_last_pid(self, name):
        host = self.hosts[name]
        r = subprocess.run(["nsenter", "-t", str(host.init_pid), "-p", "--",
                            "cat", "/proc/sys/kernel/ns_last_pid"],
                           capture_output=True, text=True, timeout=30, check=True)
        self._pid_reads[name] = self._pid_reads.get(name, 0) + 1
        return int(r.stdout)

    def pid_counter(self, name):
        """The host's PID-namespace counter: /proc/sys/kernel/ns_last_pid as
        read by a 'cat' that nsenter forks into the namespace (the file
        answers for the reader's PID namespace, whatever /proc is mounted).
        Every read costs the probe's own PIDs (1: the cat); the result
        subtracts all reads made on this host so far, so that
        pid_counter(h) after - pid_counter(h) before = PIDs (processes and
        threads) allocated in the host by whatever ran in between. The cost
        is measured on the first call (the smallest difference of three pairs
        of back-to-back reads) and kept in self.probe_cost."""
        if self.probe_cost is None:
            costs = []
            for _ in range(3):
                first = self._read_ns_last_pid(name)
                costs.append(self._read_ns_last_pid(name) - first)
            self.probe_cost = min(costs)
        raw = self._read_ns_last_pid(name)
        return raw - self.probe_cost * self._pid_reads[name]

    def kill_sshd(self, name):
        """Ends the host's sshd listener now (the host stays up)."""
        # Returns once the listener is closed: the kernel closes a killed
        # process's sockets before it turns zombie.
        self.exec(name, "p=$(cat /run/fakegpu/sshd.pid); kill -KILL $p 2>/dev/null; "
                        "for i in $(seq 500); do "
                        "  s=$(cut -d')' -f2 /proc/$p/stat 2>/dev/null | cut -d' ' -f2); "
                        "  [ -z \"$s\" ] || [ \"$s\" = Z ] && break; sleep 0.01; done")
        self.hosts[name].listener = "none"

    # ---- tear-down ------------------------------------------------------

    def down(self):
        """Ends every host (by recorded PID), removes files, frees the net."""
        if self.slurm:
            self.slurm.stop()
            self.slurm = None
        end_hosts(self.hosts.values())
        for host in self.hosts.values():
            if host.popen is not None:
                try:
                    host.popen.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        wait_gone([h.init_pid for h in self.hosts.values() if h.init_pid])
        self.hosts = {}
        if self.cgroup:
            _remove_slurm_v1(self.cgroup)
            remove_cgroup_tree(self.cgroup)
        _remove_created(self.workdir)
        release_nets(self.workdir)

    @classmethod
    def cleanup(cls, workdir):
        """Ends what a crashed or persistent fleet left in 'workdir'."""
        workdir = os.path.abspath(workdir)
        try:
            with open(os.path.join(workdir, "fleet.json")) as f:
                record = json.load(f)
            records = record["hosts"]
        except (OSError, ValueError, KeyError):
            record, records = {}, []
        from slurm_cluster import SlurmCluster
        SlurmCluster.cleanup(workdir)
        hosts = [Host.from_record(r) for r in records]
        end_hosts(hosts)
        wait_gone([h.unshare_pid for h in hosts] + [h.init_pid for h in hosts if h.init_pid])
        cgroup = record.get("cgroup")
        ok, base = cgroups_status()
        if cgroup and ok and os.path.dirname(cgroup) == base:   # only ever ours
            _remove_slurm_v1(cgroup)
            remove_cgroup_tree(cgroup)
        _remove_created(workdir)
        release_nets(workdir)
        return len(hosts)

    @classmethod
    def attach(cls, workdir, bin_dir=None):
        """A Fleet object for hosts that a persistent 'up' left running."""
        fleet = cls(workdir, bin_dir=bin_dir or os.path.join(workdir, "bin"), persistent=True)
        with open(os.path.join(fleet.workdir, "fleet.json")) as f:
            record = json.load(f)
        fleet.cgroup = record.get("cgroup")
        for r in record["hosts"]:
            h = Host.from_record(r)
            fleet.hosts[h.name] = h
        return fleet


def _stage(scenario_fn, setup):
    """Bystanders first (a host's system processes are older than its jobs,
    and have lower PIDs), then the scenario."""
    setup.bystanders(setup.host.bystanders)
    scenario_fn(setup)


def _check_pid_budget(specs):
    """Refuses a fleet that would take most of the machine's free PIDs:
    every process of every host also takes a PID in the machine's namespace,
    and pid_max (32768 by default) is shared with everyone on the machine."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    used = procfs.task_count()   # processes may exit under the count (issue 22)
    # 20: init, sshd, workers, a daemon; more for the scenarios with many.
    extra = {"gpu_node_daemons": 25, "slurm_shared": 5, "realistic_host": 400}
    need = sum(host_shape(s)[1] + 20 + extra.get(s.scenario, 0) for s in specs)
    spare = 2048
    if need > pid_max - used - spare:
        raise SimError(f"{len(specs)} hosts need about {need} PIDs; the machine has "
                       f"{pid_max - used} free of pid_max {pid_max} (and keeps {spare} "
                       "spare): set FLEETREAP_SIM_BYSTANDERS lower")


def _remove_slurm_v1(fleet_cgroup):
    """Removes the fleet's v1 cgroup trees a real Slurm used (up(slurm=True))."""
    import slurm_cluster
    for path in slurm_cluster.v1_cgroups(fleet_cgroup):
        if os.path.isdir(path):
            remove_cgroup_tree(path)


def _remove_created(workdir):
    for entry in ("hosts", "bin", "daemons", "keys", "slurm", "inventory.yaml", "known_hosts",
                  "fleet.json", "fleet.json.tmp"):
        path = os.path.join(workdir, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            try:
                os.remove(path)
            except FileNotFoundError:   # another fleet reclaimed this dead fleet's net meanwhile
                pass
    try:
        os.rmdir(workdir)
    except OSError:
        pass
