"""slurm_cluster: a real Slurm (Debian's slurmctld, slurmd, munge) over a
simulated fleet, for the Slurm integration tests.

    with Fleet(workdir) as fleet:
        fleet.up(specs, slurm=True)          # hosts get the real slurmd, not the fake
        cluster = fleet.slurm                # a started SlurmCluster
        cluster.run(["sbatch", "--wrap", "..."])   # any client, as on a login node
        cluster.node("gpu01")["State"]       # scontrol show node, as a dict
    # fleet.down() stops it; nothing is left running

Shape (README "Slurm" in tests/sim):
  * one munge key per fleet (FLEET/slurm/munge.key, root 0600);
  * the controller: its own PID + mount + UTS namespace (hostname
    "slurmctl", tini as PID 1, a private /run), with a munged and slurmctld
    listening on 127.0.N.254:PORT; clients (sinfo, scontrol, sbatch, srun)
    run there too, through run();
  * each host: a munged (/system.slice/munge.service) and a slurmd
    (/system.slice/slurmd.service) inside the host's namespaces, its own
    node name, NodeAddr the host's address, a port of its own (the hosts
    share the machine's network), Gres=gpu:N backed by /dev/nvidia[0-N-1];
  * slurm.conf, cgroup.conf, gres.conf, state, spool, logs and PID files
    under FLEET/slurm and FLEET/hosts/NAME/slurm (cgroup/v2 with
    IgnoreSystemd=yes, proctrack/cgroup, task/cgroup, no constraints: the
    hosts' cgroup2 has no controllers); Epilog and Prolog are the shipped
    contrib/slurm scripts, with the fleetreap binary under test.
Ports: 10000 + 80 * N (+1 + host index for slurmd), N the fleet's first net,
unique among live fleets; so at most 79 nodes. Only PIDs started here are
ever signalled (the controller's init, by recorded PID and start time; the
hosts' daemons die with their hosts).
"""

import json
import os
import shlex
import subprocess
import time

from reaper import die_with_parent, end_recorded, start_time, wait_gone

CONTROLLER = "slurmctl"
MAX_NODES = 79
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTRIB = os.path.join(SOURCE_DIR, "contrib", "slurm")
# In each host: nvidia0.. as NVIDIA's character devices (195:K, never opened;
# slurmd's gres/gpu refuses the sim's plain /dev/nvidiaK files), for Slurm's
# GPU indexes only.
GRES_DIR = "/run/slurm-gres"
CGROUP_MOUNT = "/run/slurm-cgroup"   # in each host: CgroupMountpoint, with HIERARCHIES
HIERARCHIES = ("freezer", "devices")  # proctrack/cgroup, task/cgroup's ConstrainDevices
DAEMONS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged")


def v1_mount(controller):
    """Where the machine's cgroup v1 hierarchy of 'controller' is mounted, or None."""
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                sep = fields.index("-")
                if fields[sep + 1] == "cgroup" and controller in fields[-1].split(","):
                    return fields[4]
    except (OSError, ValueError):
        pass
    return None


def v1_cgroups(fleet_cgroup, host=None):
    """The fleet's (or a host's) subtrees of the machine's v1 hierarchies
    that Slurm's cgroup/v1 plugin uses (HIERARCHIES), beside its cgroup v2
    tree: V1MOUNT/fleetreap-sim/netN[/HOST]; those that exist here."""
    paths = []
    for controller in HIERARCHIES:
        mount = v1_mount(controller)
        if mount and fleet_cgroup:
            parts = fleet_cgroup.rstrip("/").split("/")[-2:]   # fleetreap-sim, netN
            paths.append(os.path.join(mount, *parts, *([host] if host else [])))
    return paths


def make_v1_cgroups(fleet_cgroup, host):
    """Makes and returns a host's v1 cgroups (see v1_cgroups)."""
    paths = v1_cgroups(fleet_cgroup, host)
    if len(paths) != len(HIERARCHIES):
        raise SlurmError(f"Slurm's cgroup/v1 plugin needs the v1 hierarchies {HIERARCHIES}")
    for path in paths:
        os.makedirs(path, exist_ok=True)
    return paths


class SlurmError(Exception):
    """The simulated Slurm cluster could not be started or asked."""


def slurm_status():
    """(True, "") when Debian's Slurm and munge are installed, else (False, why)."""
    missing = [p for p in DAEMONS if not os.access(p, os.X_OK)]
    if missing:
        return False, f"not installed: {', '.join(missing)} (scripts/setup.sh installs them)"
    return True, ""


class SlurmCluster:
    """A real Slurm cluster over 'fleet' (hosts already up, brought up with
    slurm=True so that their /usr/sbin/slurmd is the real one). fleetreap:
    the binary the epilog and prolog run (default $FLEETREAP_BIN)."""

    def __init__(self, fleet, fleetreap=None, partition="gpu", epilog=True, prolog=False,
                 proctrack="cgroup"):
        self.fleet = fleet
        self.dir = os.path.join(fleet.workdir, "slurm")
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.reports = os.path.join(self.dir, "reports")   # the epilogs' FLEETREAP_REPORT_DIR/NODE
        self.fleetreap = os.path.abspath(fleetreap or os.environ.get("FLEETREAP_BIN", "fleetreap"))
        self.partition = partition
        self.epilog = epilog
        self.prolog = prolog
        self.proctrack = proctrack
        first = next(iter(fleet.hosts.values())).address.split(".")
        self.address = f"127.0.{first[2]}.254"
        self.port = 10000 + 80 * int(first[2])
        self.node_ports = {name: self.port + 1 + i for i, name in enumerate(fleet.hosts)}
        self.ctl_pid = None
        self.ctl_start = None
        self.popen = None

    # ---- start and stop -------------------------------------------------

    def start(self, timeout=60):
        """Writes the key and configuration, starts the controller and every
        host's munged and slurmd, and waits until every node is idle.
        Raises SlurmError (the logs' last lines in it) on failure."""
        ok, why = slurm_status()
        if not ok:
            raise SlurmError(why)
        if not self.fleet.cgroup:
            raise SlurmError("Slurm's job cgroups need the sim's cgroups: "
                             + str(self.fleet.cgroup_note))
        if len(self.fleet.hosts) > MAX_NODES:
            raise SlurmError(f"at most {MAX_NODES} Slurm nodes per fleet")
        os.makedirs(os.path.join(self.dir, "state"), exist_ok=True)
        os.makedirs(self.reports, exist_ok=True)
        self._write_key()
        self._write_conf()
        self._start_controller()
        for name in self.fleet.hosts:
            self._start_node(name)
        self.wait_nodes(lambda n: n["State"] == "IDLE", timeout,
                        what="every node idle after start")
        return self

    def stop(self):
        """Ends the controller's namespace (slurmctld, its munged, any
        client left running) by recorded PID; the hosts' slurmd and munged
        end with their hosts."""
        if self.ctl_pid:
            end_recorded(self.ctl_pid, self.ctl_start)
            if self.popen is not None:
                try:
                    self.popen.wait(timeout=10)   # reaped: no zombie left behind
                except subprocess.TimeoutExpired:
                    pass
            wait_gone([self.ctl_pid])
            self.ctl_pid = None
        self._save()

    @staticmethod
    def cleanup(workdir):
        """Ends the controller a crashed or persistent fleet left in 'workdir'."""
        try:
            with open(os.path.join(workdir, "slurm", "cluster.json")) as f:
                record = json.load(f)
        except (OSError, ValueError):
            return
        if record.get("ctl_pid"):
            end_recorded(record["ctl_pid"], record.get("ctl_start"))
            wait_gone([record["ctl_pid"]])

    @classmethod
    def attach(cls, fleet):
        """The cluster a persistent fleet ('scripts/fleet up --slurm') runs."""
        try:
            with open(os.path.join(fleet.workdir, "slurm", "cluster.json")) as f:
                record = json.load(f)
        except (OSError, ValueError):
            raise SlurmError(f"{fleet.workdir}: no Slurm cluster (up --slurm)")
        cluster = cls(fleet, fleetreap=record.get("fleetreap"))
        if not record.get("ctl_pid") or start_time(record["ctl_pid"]) != record.get("ctl_start"):
            raise SlurmError(f"{fleet.workdir}: the Slurm controller is not running")
        cluster.ctl_pid, cluster.ctl_start = record["ctl_pid"], record["ctl_start"]
        return cluster

    def _save(self):
        with open(os.path.join(self.dir, "cluster.json"), "w") as f:
            json.dump({"ctl_pid": self.ctl_pid, "ctl_start": self.ctl_start,
                       "address": self.address, "port": self.port,
                       "fleetreap": self.fleetreap}, f)

    def _write_key(self):
        key = os.path.join(self.dir, "munge.key")
        if not os.path.exists(key):
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
        os.chmod(key, 0o600)

    def _write_conf(self):
        d, fleet = self.dir, self.fleet
        hosts = os.path.join(fleet.workdir, "hosts")
        lines = [
            "# A simulated fleet's Slurm, written by tests/sim/slurm_cluster.py",
            "ClusterName=fleetsim",
            f"SlurmctldHost={CONTROLLER}({self.address})",
            f"SlurmctldPort={self.port}",
            f"SlurmdPort={self.port + 1}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={hosts}/%n/slurm/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            "SlurmdPidFile=/run/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={hosts}/%n/slurm/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "MailProg=/bin/true",
            "MpiDefault=none",
            f"ProctrackType=proctrack/{self.proctrack}",
            "TaskPlugin=task/cgroup",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "GresTypes=gpu",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "KillWait=2",
            "MinJobAge=30",
        ]
        if self.epilog:
            lines.append(f"Epilog={CONTRIB}/fleetreap-epilog")
        if self.prolog:
            lines.append(f"Prolog={CONTRIB}/fleetreap-prolog")
        gres = []
        for name, host in fleet.hosts.items():
            gpus = host.spec.gpus
            node = (f"NodeName={name} NodeAddr={host.address} Port={self.node_ports[name]} "
                    f"CPUs=16 State=UNKNOWN")
            if gpus:
                node += f" Gres=gpu:{gpus}"
                gres.append(f"NodeName={name} Name=gpu File={GRES_DIR}/nvidia[0-{gpus - 1}]")
            lines.append(node)
        lines.append(f"PartitionName={self.partition} Nodes=ALL Default=YES "
                     "MaxTime=INFINITE State=UP")
        _write(self.conf, "\n".join(lines) + "\n")
        _write(os.path.join(d, "cgroup.conf"),
               f"CgroupPlugin=cgroup/v1\nCgroupMountpoint={CGROUP_MOUNT}\n"
               "ConstrainCores=no\nConstrainRAMSpace=no\nConstrainSwapSpace=no\n"
               "ConstrainDevices=yes\n")
        _write(os.path.join(d, "gres.conf"), "AutoDetect=off\n" + "".join(g + "\n" for g in gres))

    def _munged(self, log, origin):
        return (f"mkdir -p /run/munge && munged --force --origin={origin} "
                f"--key-file={shlex.quote(self.dir)}/munge.key --log-file={shlex.quote(log)} "
                "--pid-file=/run/munge/munged.pid --seed-file=/run/munge/munged.seed")

    def _start_controller(self):
        log = os.path.join(self.dir, "controller.log")
        script = (f"hostname {CONTROLLER} && mount -t tmpfs -o mode=755,size=4m tmpfs /run && "
                  + self._munged(os.path.join(self.dir, "munged.log"), self.address)
                  + f" && slurmctld -f {shlex.quote(self.conf)} && exec sleep infinity")
        with open(log, "wb") as out:
            popen = subprocess.Popen(
                ["unshare", "--pid", "--mount", "--uts", "--fork", "--kill-child",
                 "--mount-proc", "--propagation", "private", "tini", "-s", "--",
                 "/bin/sh", "-c", script],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                preexec_fn=None if self.fleet.persistent else die_with_parent)
        self.popen = popen
        self.ctl_pid, self.ctl_start = popen.pid, start_time(popen.pid)
        self._save()
        deadline = time.monotonic() + 30
        while self.run(["scontrol", "ping"], timeout=10).stdout.find("UP") < 0:
            if popen.poll() is not None or time.monotonic() > deadline:
                raise SlurmError("slurmctld did not start: " + _tail(log)
                                 + _tail(os.path.join(self.dir, "slurmctld.log")))
            time.sleep(0.2)

    def _start_node(self, name):
        host = self.fleet.hosts[name]
        logdir = os.path.join(host.dir, "slurm")
        os.makedirs(os.path.join(logdir, "spool"), exist_ok=True)
        gres = "".join(f" && mknod -m 600 {GRES_DIR}/nvidia{k} c 195 {k}"
                       for k in range(host.spec.gpus))
        env = (f"FLEETREAP_BIN={shlex.quote(self.fleetreap)}\n"
               f"FLEETREAP_REPORT_DIR={shlex.quote(self.reports)}/{name}\n"
               f"FLEETREAP_TIMEOUT=60s\n")
        mounts = " && ".join(f"mkdir -p {CGROUP_MOUNT}/{c} && mount -t cgroup -o {c} cgroup "
                             f"{CGROUP_MOUNT}/{c}" for c in HIERARCHIES)
        setup = self.fleet.exec(
            name, f"mkdir -p {GRES_DIR} && {mounts}{gres} && "
                  f"printf %s {shlex.quote(env)} > /etc/fleetreap/slurm.env")
        if setup.returncode:
            raise SlurmError(f"{name}: cannot set up for slurmd: {setup.stderr}")
        # Into the host's own v1 roots first (Fleet.exec starts outside them).
        v1_root = "".join(f"echo $$ > {CGROUP_MOUNT}/{c}/cgroup.procs && " for c in HIERARCHIES)
        munge = self.fleet.exec(name, v1_root + self._munged(os.path.join(logdir, "munged.log"),
                                                   host.address),
                                cgroup="/system.slice/munge.service")
        slurmd = self.fleet.exec(
            name, v1_root + f"slurmd -f {shlex.quote(self.conf)} "
                            f">>{shlex.quote(logdir)}/slurmd.out 2>&1",
            cgroup="/system.slice/slurmd.service")
        if munge.returncode or slurmd.returncode:
            raise SlurmError(f"{name}: munged/slurmd did not start: {munge.stderr}"
                             + _tail(os.path.join(logdir, "slurmd.log")))

    # ---- use ------------------------------------------------------------

    def run(self, argv, timeout=60, check=False, input=None, env=None):
        """Runs a Slurm client (argv, a list, or a shell command string) on
        the controller, as on a login node (root; SLURM_CONF set). Returns
        subprocess.CompletedProcess (text)."""
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        settings = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                    "SLURM_CONF": self.conf, **(env or {})}
        full = (["nsenter", "-t", str(self.ctl_pid), "-p", "-m", "-u", "--", "/usr/bin/env", "-i"]
                + [f"{k}={v}" for k, v in settings.items()] + list(argv))
        return subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                              check=check, input=input)

    def nodes(self):
        """{name: {"State": "IDLE", "Reason": ..., ...}} from scontrol show node."""
        out = self.run(["scontrol", "--oneliner", "show", "node"], timeout=30).stdout
        nodes = {}
        for line in out.splitlines():
            fields = _scontrol_fields(line)
            if "NodeName" in fields:
                nodes[fields["NodeName"]] = fields
        return nodes

    def node(self, name):
        return self.nodes()[name]

    def wait_nodes(self, predicate, timeout=60, names=None, what="nodes"):
        """Waits until predicate(node dict) holds for every node of 'names'
        (default all); returns the nodes. Raises SlurmError with the states."""
        deadline = time.monotonic() + timeout
        while True:
            nodes = self.nodes()
            wanted = [nodes.get(n) for n in (names or self.fleet.hosts)]
            if all(n is not None and predicate(n) for n in wanted):
                return nodes
            if time.monotonic() > deadline:
                states = {k: (v.get("State"), v.get("Reason")) for k, v in nodes.items()}
                raise SlurmError(f"timed out waiting for {what}: {states}")
            time.sleep(0.25)

    def job(self, job_id):
        """scontrol show job as a dict ({} once slurmctld forgot it)."""
        out = self.run(["scontrol", "--oneliner", "show", "job", str(job_id)], timeout=30)
        return _scontrol_fields(out.stdout) if out.returncode == 0 else {}

    def wait_job(self, job_id, states=("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"),
                 timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job.get("JobState") in states:
                return job
            if time.monotonic() > deadline:
                raise SlurmError(f"job {job_id} not {states} after {timeout}s: {job}")
            time.sleep(0.25)


def _scontrol_fields(line):
    """scontrol --oneliner's KEY=VALUE pairs (values may hold spaces only in
    Reason=, which runs up to the next ' KEY=')."""
    fields, key = {}, None
    for word in line.strip().split(" "):
        if "=" in word and word.split("=", 1)[0].replace("/", "").replace(":", "").isalnum():
            key, value = word.split("=", 1)
            fields[key] = value
        elif key is not None:
            fields[key] += " " + word
    return fields


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _tail(path, lines=8):
    try:
        with open(path, errors="replace") as f:
            return "\n" + "".join(f.readlines()[-lines:])
    except OSError:
        return ""
