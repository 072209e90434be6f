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
import shutil
import subprocess
import sys
import tempfile
import time

import host_files
import procfs
from address_pool import REGISTRY, claim_net, release_nets  # noqa: F401
from cgroups import (CGROUP_DIR, cgroup2_mount, cgroups_available,  # noqa: F401
                     cgroups_status, populated, remove_cgroup_tree, remove_stale_cgroups)
from daemons import INSTALLED
from host_access import FleetAccessMixin
from host_setup import HostSetup
from hosts import (DEFAULT_BYSTANDERS, LEAN_BYSTANDERS, SHAPES, SIM_DIR,  # noqa: F401
                   SIM_TOOLS, Host, HostSpec, SimError, check_pid_budget, default_bin_dir,
                   host_shape, missing_tools)
from reaper import (die_with_parent, end_hosts, end_recorded, listening,  # noqa: F401
                    start_time, wait_gone)

_check_pid_budget = check_pid_budget   # the older name (procfs_test)


def scratch_dir(prefix):
    """A new directory under /tmp for one test, removed when the process
    exits (after its fleets are down), so test runs leave no files behind."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


class Fleet(FleetAccessMixin):
    """A simulated fleet in 'workdir': up() brings it up, down() ends it
    (API in the module docstring; exec and the other verbs on running hosts
    are in host_access.py)."""

    def __init__(self, workdir, bin_dir=None, persistent=False):
        self.workdir = os.path.abspath(workdir)
        self.bin_dir = bin_dir or default_bin_dir()
        self.persistent = persistent
        self.hosts = {}
        self.inventory = os.path.join(self.workdir, "inventory.yaml")
        self.known_hosts = os.path.join(self.workdir, "known_hosts")
        self.key = os.path.join(self.workdir, "keys", "id_ed25519")
        self.timings = {}
        self.groups = {}              # inventory groups beside scenario_*: {group: [host]}
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
        check_pid_budget(specs)
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
                host_files.prepare_host_dir(host, self)
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
                                      HostSetup(self, h))
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
            if populated(path) or remove_cgroup_tree(path, timeout=1.0):
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
        for path in set(INSTALLED.values()):
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
        for group, members in self.groups.items():
            groups[group] = [m for m in members if m in self.hosts]
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
