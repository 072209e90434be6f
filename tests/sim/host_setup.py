"""host_setup: the files of one simulated host, and HostSetup, the verbs a
scenario uses to stage a host (workloads, units, daemons, /dev/shm files,
leaked memory, nvidia-smi modes, network faults).

Every process is started inside the host's namespaces with nsenter, so
fleetreap sees it over SSH with ps, fuser and /proc. PIDs returned here are
PIDs as seen inside the host. Not thread-safe: one HostSetup per host.
"""

import hashlib
import os
import shlex
import shutil
import subprocess
import time

PASSWD = """root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
sshd:x:102:65534::/run/sshd:/usr/sbin/nologin
nvidia-persistenced:x:103:104:NVIDIA Persistence Daemon:/nonexistent:/usr/sbin/nologin
gpuops:x:1000:1000:GPU operator:/home/gpuops:/bin/bash
researcher:x:1001:1001:Slurm user:/home/researcher:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
daemon:x:1:
sudo:x:27:{sudoers}
nvidia-persistenced:x:104:
gpuops:x:1000:
researcher:x:1001:
nogroup:x:65534:
"""
SUDOERS = """Defaults env_reset
Defaults secure_path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
root ALL=(ALL:ALL) ALL
{rule}"""

SSHD_CONFIG = """ListenAddress {address}:22
HostKey {dir}/etc/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile /run/fakegpu/authorized_keys/%u
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 200:30:400
"""


# The protected daemons of real GPU nodes (docs/protected-daemons.md has the
# sources): name -> (executable path, owner, argv after argv[0], PID file).
# owner "NAME.service": the daemon runs in /system.slice/NAME.service and the
# fake systemctl knows the unit; "pod:NAME": in a container cgroup of the
# Kubernetes pod NAME (pod_cgroup). Every daemon holds nvidiactl, nvidia-uvm
# and every GPU at 0 MiB. The executables are root-owned 0755 hard links to
# gpuload installed in every host (INSTALLED), so exe, argv[0] and comm look
# real.
DAEMONS = {
    "nvidia-persistenced": ("/usr/bin/nvidia-persistenced", "nvidia-persistenced.service",
                            ["--user", "nvidia-persistenced", "--verbose"],
                            "/var/run/nvidia-persistenced/nvidia-persistenced.pid"),
    "nv-fabricmanager": ("/usr/bin/nv-fabricmanager", "nvidia-fabricmanager.service",
                         ["-c", "/usr/share/nvidia/nvswitch/fabricmanager.cfg"],
                         "/var/run/nvidia-fabricmanager/nv-fabricmanager.pid"),
    "nvlsm": ("/opt/nvidia/nvlsm/sbin/nvlsm", "nvidia-fabricmanager.service",
              ["-F", "/usr/share/nvidia/nvlsm/nvlsm.conf", "-B", "--pid_file",
               "/var/run/nvidia-fabricmanager/nvlsm.pid"],
              "/var/run/nvidia-fabricmanager/nvlsm.pid"),
    "nvidia-gridd": ("/usr/bin/nvidia-gridd", "nvidia-gridd.service", [],
                     "/var/run/nvidia-gridd/nvidia-gridd.pid"),
    "nvidia-topologyd": ("/usr/bin/nvidia-topologyd", "nvidia-topologyd.service", [],
                         "/var/run/nvidia-topologyd/nvidia-topologyd.pid"),
    "nvidia-powerd": ("/usr/bin/nvidia-powerd", "nvidia-powerd.service", [], None),
    "nv-hostengine": ("/usr/bin/nv-hostengine", "nvidia-dcgm.service",
                      ["-n", "--service-account", "nvidia-dcgm"], "/var/run/nvhostengine.pid"),
    "nvidia-imex": ("/usr/bin/nvidia-imex", "nvidia-imex.service",
                    ["-c", "/etc/nvidia-imex/config.cfg"], None),
    "nvsm-core": ("/usr/bin/nvsm-core", "nvsm-core.service", [], None),
    "dcgm-exporter": ("/usr/bin/dcgm-exporter", "pod:nvidia-dcgm-exporter",
                      ["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"], None),
    "nvidia-device-plugin": ("/usr/bin/nvidia-device-plugin",
                             "pod:nvidia-device-plugin-daemonset", [], None),
    "config-manager": ("/usr/bin/config-manager", "pod:nvidia-device-plugin-daemonset", [], None),
    "gpu-feature-discovery": ("/usr/bin/gpu-feature-discovery", "pod:gpu-feature-discovery",
                              [], None),
    "nvidia-mig-manager": ("/usr/bin/nvidia-mig-manager", "pod:nvidia-mig-manager", [], None),
    "nvidia-validator": ("/usr/bin/nvidia-validator", "pod:nvidia-operator-validator", [], None),
    "mps-control-daemon": ("/usr/bin/mps-control-daemon",
                           "pod:nvidia-device-plugin-mps-control-daemon", [], None),
    "nvidia-cuda-mps-control": ("/usr/bin/nvidia-cuda-mps-control",
                                "pod:nvidia-device-plugin-mps-control-daemon", ["-f"], None),
    "nvidia-cuda-mps-server": ("/usr/bin/nvidia-cuda-mps-server",
                               "pod:nvidia-device-plugin-mps-control-daemon", [], None),
    "gpu-kubelet-plugin": ("/usr/bin/gpu-kubelet-plugin",
                           "pod:nvidia-dra-driver-gpu-kubelet-plugin", [], None),
    "compute-domain-kubelet-plugin": ("/usr/bin/compute-domain-kubelet-plugin",
                                      "pod:nvidia-dra-driver-gpu-kubelet-plugin", [], None),
    "compute-domain-daemon": ("/usr/bin/compute-domain-daemon", "pod:compute-domain-daemon",
                              ["run"], None),
}
# Restart= of the units as their usual unit files set it (shown by the fake
# systemctl; only units made with HostSetup.restarting_service are really
# restarted when their main process dies).
DAEMON_UNIT_RESTART = {"nvidia-persistenced.service": "always"}
# Every executable installed in each host: daemons and other system binaries.
# (Pod daemons come with their image: installed in the host's /usr/bin only
# when run without a container root, see HostSetup.daemon.)
INSTALLED = dict({name: spec[0] for name, spec in DAEMONS.items()
                  if not spec[1].startswith("pod:")},
                 slurmd="/usr/sbin/slurmd", slurmstepd="/usr/sbin/slurmstepd")


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


def _write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def prepare_host_dir(host, fleet):
    """Creates host.dir: etc/ (accounts, sudo, sshd), state/ (read by the
    fake tools at /run/fakegpu), shm/, root/, home/, rootfs/ (the lower
    layers of the host's /etc, /usr/bin, /usr/sbin, /opt, /usr/local/bin
    overlays: every daemon of DAEMONS at its path, root-owned 0755)."""
    d = host.dir
    shutil.rmtree(d, ignore_errors=True)
    for sub in ("etc", "state/authorized_keys", "state/leaked", "state/units", "state/pids", "shm",
                "root", "home/gpuops", "home/researcher", "rootfs/etc", "rootfs/usr/bin",
                "rootfs/usr/sbin", "rootfs/opt", "rootfs/usr/local/bin"):
        os.makedirs(os.path.join(d, sub))
    os.chmod(os.path.join(d, "shm"), 0o1777)
    os.chmod(os.path.join(d, "root"), 0o700)
    os.chown(os.path.join(d, "home/gpuops"), 1000, 1000)
    os.chown(os.path.join(d, "home/researcher"), 1001, 1001)
    spec = host.spec
    _write(f"{d}/etc/passwd", PASSWD)
    _write(f"{d}/etc/shadow", "".join(f"{line.split(':')[0]}:*:19700:0:99999:7:::\n"
                                      for line in PASSWD.splitlines()), 0o640)
    _write(f"{d}/etc/group", GROUP.format(sudoers="gpuops" if spec.sudo else ""))
    rule = "gpuops ALL=(ALL) NOPASSWD: ALL\n" if spec.sudo else ""
    _write(f"{d}/etc/sudoers", SUDOERS.format(rule=rule), 0o440)
    _write(f"{d}/etc/hosts", f"127.0.0.1 localhost\n{host.address} {spec.name}\n")
    _write(f"{d}/etc/sshd_config", SSHD_CONFIG.format(address=host.address, dir=d))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", spec.name,
                    "-f", f"{d}/etc/ssh_host_ed25519_key"], check=True)
    with open(fleet.key + ".pub") as f:
        pub = f.read()
    for user in ("root", "gpuops"):
        _write(f"{d}/state/authorized_keys/{user}", pub)
    state = host.state
    _write(f"{state}/gpus", f"{spec.gpus}\n")
    _write(f"{state}/driver", "loaded\n")
    _write(f"{state}/mode", "normal\n")
    _write(f"{state}/seed", spec.name + "\n")
    os.chmod(f"{state}/pids", 0o777)
    for path in sorted(set(INSTALLED.values())):
        if fleet.real_slurm and path in ("/usr/sbin/slurmd", "/usr/sbin/slurmstepd"):
            continue   # the machine's real ones (slurm_cluster.py)
        target = f"{d}/rootfs{path}"
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.link(os.path.join(fleet.workdir, "daemons", os.path.basename(path)), target)


def session_cgroup(uid):
    """The login session scope of user 'uid' (root: session-1, gpuops:
    session-3, researcher: session-4), where a user's own commands run."""
    return f"/user.slice/user-{uid}.slice/session-{ {0: 1, 1000: 3}.get(uid, uid - 997) }.scope"


_session_cgroup = session_cgroup


def _uid(name):
    for line in PASSWD.splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise KeyError(f"no user {name!r} on simulated hosts")


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode()


class HostSetup:
    """What a scenario function receives: verbs that stage one host."""

    def __init__(self, fleet, host):
        self.fleet = fleet
        self.host = host
        self.name = host.name
        self.gpus = host.spec.gpus
        self._seq = 0
        self.last_command = None

    # ---- processes ------------------------------------------------------

    @property
    def realistic(self):
        """Whether this host has the realistic worker layout: the realistic
        shape, or the lean one (the same with fewer bystanders); see
        simfleet.host_shape."""
        return self.host.shape in ("realistic", "lean")

    def workload(self, gpus="all", mib=96844, title="gpuload-worker-%d", on_term="exit",
                 respawn_once=False, respawn_delay_ms=300, respawn_init_ms=0, detach=False,
                 unit=None,
                 argv=("python3", "-m", "vllm.entrypoints.openai.api_server"), comm=None,
                 user=None, exe=None, hold_all=False, visible=None, worker_argv=None,
                 worker_comm=None, title_pad=None, wrap=None, cgroup=None, hold_gpus=None,
                 own_pidfile=None, hold="fd", reap_ms=0):
        """Starts a gpuload parent with one worker per GPU in 'gpus' ("all",
        "0-7", "5"); returns {"parent": pid, gpu: worker pid, ...}.

        Realistic shape (the default): every worker also opens the devices of
        'visible' (default: every GPU of the host, as a tensor-parallel engine
        with CUDA_VISIBLE_DEVICES=0-7 does for peer access) but is charged
        'mib' on its own GPU only (FAKEGPU_MEM_GPUS); its title is written
        over a forked Python child's argv area, NUL-padded ('title_pad':
        "nul", "space" or "none"). Simple shape: own GPU, argv = [title].
        worker_argv (a sequence of bytes/str, no NULs) and worker_comm (bytes/
        str, 15 bytes kept) give every worker exactly those bytes instead of
        the title. 'wrap' is a shell prefix the launch runs under (e.g.
        "unshare --mount ... sh -c '...' sh" for a container).
        cgroup: the cgroup (path inside the host) the launch runs in, and so
        every process of the workload; default /system.slice/UNIT with a
        unit, else the user's login session (Fleet.exec). hold_gpus ("2"):
        the parent itself holds those GPUs and is charged 'mib' there (a
        single-process server; no workers unless 'gpus' is set too).
        own_pidfile: the parent writes its PID there, as a daemon does.
        hold: how each worker holds its devices: "fd" (open descriptors),
        "map" (it maps the device files and closes its fds: only
        /proc/PID/maps shows it) or "threads" (a thread opens them and the
        main thread exits: state Z, the fds under /proc/PID/task/TID/fd).
        reap_ms: the parent reaps a dead worker that long after it died
        (-1: never), as a slow or missing init does orphans.
        The launch command is kept in self.last_command (ExecStart=)."""
        if gpus == "all":
            gpus = f"0-{self.gpus - 1}"
        self._seq += 1
        pidfile = f"/run/fakegpu/pids/{self._seq}"
        env = {"FAKEGPU_GPUS": str(gpus) if not hold_all else "",
               "FAKEGPU_MIB": str(mib), "FAKEGPU_TITLE": title,
               "FAKEGPU_ON_TERM": on_term, "FAKEGPU_PIDFILE": pidfile,
               "FAKEGPU_DAEMONIZE": "1", "FAKEGPU_NO_FLAGS": "1",
               "FAKEGPU_RESPAWN_DELAY_MS": str(respawn_delay_ms),
               "FAKEGPU_RESPAWN_INIT_MS": str(respawn_init_ms)}
        if respawn_once:
            env["FAKEGPU_RESPAWN"] = "1"
        if hold != "fd":
            env["FAKEGPU_HOLD"] = hold
        if reap_ms:
            env["FAKEGPU_REAP_MS"] = str(reap_ms)
        if detach:
            env["FAKEGPU_DETACH"] = "1"
        if unit:
            env["FAKEGPU_UNIT"] = unit
        if comm is None and exe is None:
            comm = os.path.basename(argv[0])[:15]   # "python3", not "gpuload"
        if comm:
            env["FAKEGPU_COMM"] = comm
        if hold_all:
            env["FAKEGPU_HOLD_ALL"] = "1"
            if not mib:
                del env["FAKEGPU_MIB"]
        if hold_gpus is not None:
            env["FAKEGPU_HOLD_GPUS"] = str(hold_gpus)
            env["FAKEGPU_MEM_GPUS"] = str(hold_gpus)
        if own_pidfile:
            env["FAKEGPU_OWN_PIDFILE"] = own_pidfile
        if visible is None and self.realistic and not hold_all and hold_gpus is None:
            visible = f"0-{self.gpus - 1}"
        if visible:
            env["FAKEGPU_VISIBLE"] = str(visible)
        if title_pad is None:
            title_pad = "nul" if self.realistic else "none"
        env["FAKEGPU_TITLE_PAD"] = title_pad
        if worker_argv is not None:
            env["FAKEGPU_WORKER_ARGV_HEX"] = b"\0".join(_bytes(a) for a in worker_argv).hex()
        if worker_comm is not None:
            env["FAKEGPU_WORKER_COMM_HEX"] = _bytes(worker_comm)[:15].hex()
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        program = exe or "/usr/local/bin/gpuload"
        command = (f"exec env {assignments} /bin/bash -c 'exec -a \"$0\" {program} \"$@\"' "
                   + " ".join(shlex.quote(a) for a in argv))
        if wrap:
            command = f"{wrap} {shlex.quote(command)}"
        self.last_command = command
        if cgroup is None and unit:
            cgroup = f"/system.slice/{unit}"
        result = self.fleet.exec(self.name, command, user=user, cgroup=cgroup)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: workload failed: {result.stderr}")
        return self._read_pids(os.path.join(self.host.state, "pids", str(self._seq)))

    @staticmethod
    def _read_pids(path):
        pids = {}
        for _ in range(500):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        with open(path) as f:
            for line in f:
                key, pid = line.split()
                pids["parent" if key == "parent" else int(key)] = int(pid)
        return pids

    def _write_unit(self, unit, main, killmode="process", description="", timeout_stop_s=5,
                    cgroup=None, **props):
        """state/units/UNIT, read by the fake systemctl; props are more
        KEY=VALUE lines (Restart, RestartSec, ExecStart, PIDFile, ...)."""
        lines = [f"Description={description or unit}", f"MainPID={main}",
                 f"KillMode={killmode}", f"TimeoutStopSec={timeout_stop_s}",
                 f"ControlGroup={cgroup or '/system.slice/' + unit}"]
        lines += [f"{k}={v}" for k, v in props.items() if v is not None]
        _write(os.path.join(self.host.state, "units", unit), "\n".join(lines) + "\n")

    def service(self, unit, killmode="process", description="", timeout_stop_s=5, **workload):
        """Starts a workload as systemd unit 'unit' (MainPID = its parent), in
        the unit's cgroup /system.slice/UNIT."""
        pids = self.workload(unit=unit, **workload)
        self._write_unit(unit, pids["parent"], killmode, description, timeout_stop_s,
                         cgroup=workload.get("cgroup"))
        return pids

    def restarting_service(self, unit, gpus="1", mib=30720, restart="always", restart_sec=0.5,
                           killmode="control-group", description="",
                           argv=("/usr/bin/python3", "-m", "embedding_server", "--port", "8080"),
                           comm="python3", start_limit_burst=5, start_limit_interval_s=10):
        """A unit with Restart=RESTART whose main process is itself a GPU
        holder (charged 'mib' on 'gpus'), in /system.slice/UNIT. When the main
        process dies, unitd (playing systemd, in /init.scope) starts a new one
        after RestartSec in the same cgroup, re-parented to the host's init
        (PPID 1), and counts NRestarts; systemctl stop ends the restarting.
        After StartLimitBurst starts within StartLimitIntervalSec the unit is
        "failed" (start-limit-hit) and no longer restarted, as systemd does.
        Returns the first main PID. Ground truth: "restart_units"."""
        cgroup = f"/system.slice/{unit}"
        pids = self.workload(gpus="", hold_gpus=gpus, mib=mib, argv=argv, comm=comm, unit=unit,
                             cgroup=cgroup, visible="")
        pidfile = f"/run/fakegpu/pids/{self._seq}"
        self._write_unit(unit, pids["parent"], killmode, description or unit, 5, cgroup=cgroup,
                         Restart=restart, RestartSec=restart_sec, NRestarts=0,
                         StartLimitBurst=start_limit_burst,
                         StartLimitIntervalSec=start_limit_interval_s, ActiveState="active",
                         PIDFile=pidfile, ExecStart=self.last_command)
        started = self.fleet.exec(self.name, "setsid /usr/local/bin/unitd "
                                  f"{shlex.quote(unit)} </dev/null >/dev/null 2>&1 &",
                                  cgroup="/init.scope")
        if started.returncode != 0:
            raise RuntimeError(f"{self.name}: unitd failed: {started.stderr}")
        self.host.restart_units[unit] = {"first_pid": pids["parent"], "gpus": str(gpus)}
        return pids["parent"]

    def daemon(self, name, argv=None, unit=None, path=None, pidfile="default", cgroup=None,
               container_root=False):
        """Starts protected daemon 'name' of DAEMONS (a real executable of
        that name, root-owned 0755 at its usual path, or at 'path', copied
        there), holding nvidiactl, nvidia-uvm and every GPU at 0 MiB, in its
        unit's cgroup (/system.slice/UNIT; the fake systemctl knows the unit)
        or in its pod's container cgroup; it writes its PID file where the
        real one does (pidfile=None: none). container_root (pod daemons only):
        run it as containerd does, from its own root filesystem
        (/run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/rootfs in
        the host, pivot_root'ed into, with the host's /dev and libraries
        bound in): /proc/PID/exe then reads /usr/bin/NAME, a path that does
        not exist in the host's own /usr/bin, and /proc/PID/root reads "/";
        the file is reachable through /proc/PID/exe or /proc/PID/root/...
        Returns its PID."""
        default_path, owner, args, default_pidfile = DAEMONS[name]
        path = path or default_path
        if path != default_path or (owner.startswith("pod:") and not container_root):
            installed = self.fleet.exec(
                self.name, f"install -D -o root -g root -m 0755 /usr/local/bin/gpuload "
                           f"{shlex.quote(path)}")
            if installed.returncode != 0:
                raise RuntimeError(f"{self.name}: installing {path}: {installed.stderr}")
        argv = argv or [path] + args
        if pidfile == "default":
            pidfile = default_pidfile
        if cgroup is None:
            if unit is None and not owner.startswith("pod:"):
                unit = owner
            if unit:
                cgroup = f"/system.slice/{unit}"
            else:
                cgroup = pod_cgroup(self.name, owner[4:], name)
        if container_root:
            if not owner.startswith("pod:") or unit:
                raise ValueError(f"{name}: container_root is for pod daemons")
            pid = self._container_daemon(name, path, argv, cgroup, pidfile)
        else:
            pids = self.workload(hold_all=True, mib=0, argv=argv, exe=path, on_term="exit",
                                 unit=unit, cgroup=cgroup, own_pidfile=pidfile)
            pid = pids["parent"]
        self.host.protected[pid] = name
        self.host.daemons[name] = {"pid": pid, "exe": path, "cgroup": cgroup, "unit": unit,
                                   "pidfile": pidfile, "container_root": container_root}
        if unit and not os.path.exists(os.path.join(self.host.state, "units", unit)):
            self._write_unit(unit, pid, "control-group", name, 5, cgroup=cgroup,
                             Restart=DAEMON_UNIT_RESTART.get(unit, "no"), PIDFile=pidfile)
        return pid

    def _container_daemon(self, name, path, argv, cgroup, pidfile):
        """Starts daemon 'name' from a container root of its own (see
        daemon(container_root=True)); returns its PID."""
        self._seq += 1
        env = {"FAKEGPU_GPUS": "", "FAKEGPU_ON_TERM": "exit", "FAKEGPU_DAEMONIZE": "1",
               "FAKEGPU_PIDFILE": f"/run/fakegpu/pids/{self._seq}", "FAKEGPU_NO_FLAGS": "1",
               "FAKEGPU_HOLD_ALL": "1", "FAKEGPU_COMM": os.path.basename(path)[:15],
               "FAKEGPU_TITLE_PAD": "none"}
        if pidfile:
            env["FAKEGPU_OWN_PIDFILE"] = pidfile
        cid = cgroup.rsplit("cri-containerd-", 1)[-1].split(".")[0]
        root = f"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{cid}/rootfs"
        setup = "\n".join([
            "set -e", f"R={root}", "mkdir -p $R", "mount --bind $R $R",
            f"mkdir -p $R{os.path.dirname(path)} $R/dev $R/run/fakegpu $R/var $R/old $R/tmp $R/proc",
            "ln -sfn /run $R/var/run",
            "for d in lib lib64 usr/lib; do",
            "  if [ -d /$d ]; then mkdir -p $R/$d; mount --rbind /$d $R/$d; fi",
            "done",
            f"install -o root -g root -m 0755 /usr/local/bin/gpuload $R{path}",
            "mount --rbind /dev $R/dev", "mount --bind /run/fakegpu $R/run/fakegpu",
            "cd $R", "pivot_root . old",
            "/old/usr/bin/mount -t proc proc /proc", "/old/usr/bin/umount -l /old",
            " ".join(f"export {k}={shlex.quote(v)};" for k, v in env.items()),
            "exec " + " ".join(shlex.quote(a) for a in argv)])
        command = f"unshare --mount --propagation private sh -c {shlex.quote(setup)}"
        result = self.fleet.exec(self.name, command, cgroup=cgroup)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: container daemon {name} failed: {result.stderr}")
        return self._read_pids(os.path.join(self.host.state, "pids", str(self._seq)))["parent"]

    def all_daemons(self, container_root=False):
        """Every daemon of DAEMONS, each where it runs on a real node; with
        container_root, the pod daemons run from their own container roots."""
        return {name: self.daemon(name, container_root=container_root
                                  and DAEMONS[name][1].startswith("pod:"))
                for name in DAEMONS}

    def pod_sandbox(self, pod):
        """The pod's pause process (/pause, in its own container cgroup)."""
        return self.sleeper(argv=("/pause",), comm="pause",
                            cgroup=pod_cgroup(self.name, pod, "pause"))

    # ---- jobs with owners ---------------------------------------------------

    def slurm_job(self, job_id, gpus, user="gpuops", mib=70000, step="0", orphaned=True,
                  title="VLLM::Worker_TP%d", argv=("python3", "-m", "vllm.entrypoints.openai."
                                                   "api_server", "--tensor-parallel-size", "4")):
        """A Slurm job as slurmstepd (cgroup v2 plugin) lays it out: the job's
        tasks in /system.slice/slurmstepd.scope/job_ID/step_STEP/user/task_0,
        one 'slurmstepd: [ID.STEP]' and one 'slurmstepd: [ID.extern]' in
        .../step_*/slurm, owned by 'user'. One worker per GPU of 'gpus'
        (host indexes, "0-3"), charged 'mib' on its own GPU; each opens only
        the job's GPUs (visible=gpus: with ConstrainDevices=yes a job cannot
        open the node's other GPUs). orphaned: the launcher is gone, workers
        re-parented to init (the job ended, its workers did not). Recorded
        in host.jobs[str(job_id)] with the epilog's environment."""
        base = f"/system.slice/slurmstepd.scope/job_{job_id}"
        stepds = [self.sleeper(argv=(f"slurmstepd: [{job_id}.extern]",), comm="slurmstepd",
                               cgroup=f"{base}/step_extern/slurm", exe="/usr/sbin/slurmstepd"),
                  self.sleeper(argv=(f"slurmstepd: [{job_id}.{step}]",), comm="slurmstepd",
                               cgroup=f"{base}/step_{step}/slurm", exe="/usr/sbin/slurmstepd")]
        pids = self.workload(gpus=gpus, mib=mib, title=title, argv=argv, detach=orphaned,
                             user=user, visible=gpus, cgroup=f"{base}/step_{step}/user/task_0")
        workers = sorted(pid for key, pid in pids.items() if key != "parent")
        indexes = sorted(k for k in pids if k != "parent")
        self.host.jobs[str(job_id)] = {
            "cgroup": base, "gpus": gpus, "user": user, "workers": workers,
            "parent": None if orphaned else pids["parent"], "slurmstepd": stepds,
            "epilog_env": {"SLURM_JOB_ID": str(job_id), "SLURM_JOB_USER": user,
                           "SLURM_JOB_UID": str(_uid(user)),
                           "SLURM_JOB_GPUS": ",".join(str(k) for k in indexes),
                           "CUDA_VISIBLE_DEVICES": ",".join(str(k) for k in indexes),
                           "SLURM_SCRIPT_CONTEXT": "epilog_slurmd"}}
        return pids

    def docker_container(self, name="trainer", gpus="2", mib=40960,
                         argv=("python3", "train.py")):
        """A Docker container's GPU process: /system.slice/docker-<64 hex>.scope,
        its own mount namespace and /dev (as container_job). Recorded in
        host.jobs["docker:NAME"]."""
        cgroup = docker_cgroup(self.name, name)
        pids = self.container_job(gpu=int(gpus), mib=mib, argv=argv, name=name, cgroup=cgroup)
        self.host.jobs[f"docker:{name}"] = {"cgroup": cgroup, "gpus": str(gpus),
                                            "user": "root", "workers": [pids[int(gpus)]],
                                            "parent": None}
        return pids

    def k8s_pod(self, pod="llm-serve-7d9f8b6c5-x2x4q", container="server", gpus="5", mib=61440,
                qos="besteffort", argv=("python3", "-m", "sglang.launch_server")):
        """A Kubernetes pod's GPU container: /kubepods.slice/kubepods-QOS.slice/
        kubepods-QOS-pod<uid>.slice/cri-containerd-<64 hex>.scope (pod_cgroup),
        its own mount namespace and /dev, plus the pod's /pause sandbox.
        Recorded in host.jobs["pod:POD"] with the pod UID."""
        cgroup = pod_cgroup(self.name, pod, container, qos)
        self.sleeper(argv=("/pause",), comm="pause", cgroup=pod_cgroup(self.name, pod, "pause",
                                                                       qos))
        pids = self.container_job(gpu=int(gpus), mib=mib, argv=argv, name=pod[:63],
                                  cgroup=cgroup)
        self.host.jobs[f"pod:{pod}"] = {"cgroup": cgroup.rsplit("/", 1)[0], "gpus": str(gpus),
                                        "user": "root", "workers": [pids[int(gpus)]],
                                        "parent": None, "pod_uid": pod_uid(self.name, pod)}
        return pids

    def impostor(self, path, gpus="3", mib=90000, user="gpuops", mode=0o755,
                 args=("train.py",), private_tmp=None):
        """A job that runs a copy of gpuload at 'path', named like a protected
        daemon or sshd ("/home/gpuops/bin/sshd", "/root/bin/nv-hostengine"),
        owned by 'user' with 'mode', holding 'gpus' with 'mib' each: a job,
        not a daemon. A path under /tmp gets a private /tmp (own mount
        namespace with a tmpfs /tmp, as PrivateTmp=yes or a user namespace
        gives; the machine's /tmp is shared by every host and is never
        written to). Recorded in host.impostors; returns its PID."""
        if private_tmp is None:
            private_tmp = path.startswith("/tmp/")
        uid = _uid(user)
        install = (f"mkdir -p {shlex.quote(os.path.dirname(path))} && "
                   f"cp /usr/local/bin/gpuload {shlex.quote(path)} && "
                   f"chown {uid}:{uid} {shlex.quote(path)} && chmod {mode:o} {shlex.quote(path)}")
        wrap, run_as = None, user
        if private_tmp:
            setup = ("mount -t tmpfs -o mode=1777,size=1m privtmp /tmp && " + install +
                     f" && exec setpriv --reuid={uid} --regid={uid} --clear-groups "
                     "sh -c \"$1\"")
            wrap = f"unshare --mount --propagation private sh -c {shlex.quote(setup)} sh"
            run_as = None
        else:
            done = self.fleet.exec(self.name, install, user=user if uid else None)
            if done.returncode != 0:
                raise RuntimeError(f"{self.name}: impostor {path}: {done.stderr}")
        pids = self.workload(gpus="", hold_gpus=gpus, mib=mib, argv=(path,) + tuple(args),
                             exe=path, user=run_as, wrap=wrap, visible="",
                             cgroup=_session_cgroup(uid))
        pid = pids["parent"]
        self.host.impostors.append({"pid": pid, "named_like": os.path.basename(path),
                                    "exe": path, "user": user, "gpus": str(gpus),
                                    "mode": f"{mode:04o}"})
        return pid

    def bystanders(self, count, first=0):
        """Starts 'count' unrelated sleeping processes (sshd sessions,
        containerd, cron, python3 -m http.server, kworker-like names...; see
        bystanders.c), each in its own session, children of the host's init.
        They hold no device; fleetreap must leave them alone. With cgroups,
        each joins its profile's cgroup (ssh.service, containerd.service,
        cron.service, session-3.scope, ...; see bystanders.c)."""
        if count <= 0:
            return
        cgroups = "FAKEGPU_CGROUP_FS=/sys/fs/cgroup " if self.host.cgroup else ""
        result = self.fleet.exec(self.name, f"{cgroups}/usr/local/bin/bystanders {int(count)} "
                                            f"{int(first)}", timeout=120, cgroup="/init.scope")
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: bystanders failed: {result.stderr}")

    def sleeper(self, argv=("python3", "infer.py"), comm="python3", user=None, cgroup=None,
                exe=None):
        """A plain sleeping process holding no device (a gpuload parent with no
        workers and FAKEGPU_MIB=0), in 'cgroup' if given; returns its PID."""
        return self.workload(gpus="", mib=0, argv=argv, comm=comm, user=user, exe=exe,
                             visible="", cgroup=cgroup)["parent"]

    def charge(self, pid, gpu, mib):
        """The driver charges 'mib' on 'gpu' to 'pid' (inner PID), which needs
        no open device: a line "PID GPU MIB" in state/charged, read by the
        fake nvidia-smi (compute-apps, memory.used) while PID is alive."""
        with open(os.path.join(self.host.state, "charged"), "a") as f:
            f.write(f"{int(pid)} {int(gpu)} {int(mib)}\n")

    def recovery_action(self, gpu, action="Reset"):
        """nvidia-smi reports gpu_recovery_action 'action' for 'gpu' (state/
        recovery/K); every other GPU reads "None"."""
        os.makedirs(os.path.join(self.host.state, "recovery"), exist_ok=True)
        _write(os.path.join(self.host.state, "recovery", str(gpu)), action + "\n")

    def container_job(self, gpu=3, mib=40960, title="python3", argv=("python3", "train.py"),
                      name="job", cgroup=None):
        """A job in its own mount namespace, as a container runtime starts it:
        a private tmpfs /dev holding null/zero/urandom and its OWN plain files
        nvidiaK, nvidiactl and nvidia-uvm (other inodes than the host's, so
        fuser on the host's /dev/nvidiaK does not see it; readlink of its fds
        still reads "/dev/nvidiaK"). Same PID namespace as the host. Returns
        the workload's PIDs."""
        setup = ("mount -t tmpfs -o mode=755,size=64k ctrdev /dev && "
                 "mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 && "
                 "mknod -m 666 /dev/urandom c 1 9 && mkdir /dev/shm && "
                 f": > /dev/nvidia{int(gpu)} && : > /dev/nvidiactl && : > /dev/nvidia-uvm && "
                 f"chmod 666 /dev/nvidia* && hostname {shlex.quote(name)} && exec sh -c \"$1\"")
        wrap = f"unshare --mount --uts --propagation private sh -c {shlex.quote(setup)} sh"
        pids = self.workload(gpus=str(gpu), mib=mib, title=title, argv=argv, detach=True,
                             visible=str(gpu), wrap=wrap,
                             cgroup=cgroup or docker_cgroup(self.name, name))
        self.host.containers.append(pids[gpu])
        return pids

    def set_sudo(self, allowed):
        """Gives gpuops passwordless sudo on this host, or takes it away."""
        self.host.spec.sudo = allowed
        d = self.host.dir
        rule = "gpuops ALL=(ALL) NOPASSWD: ALL\n" if allowed else ""
        _write(f"{d}/etc/sudoers", SUDOERS.format(rule=rule), 0o440)
        _write(f"{d}/etc/group", GROUP.format(sudoers="gpuops" if allowed else ""))

    # ---- files and state ------------------------------------------------

    def shm(self, name, size=4096, keep=False):
        """Creates /dev/shm/NAME; 'keep' says whether cleanup must leave it."""
        path = os.path.join(self.host.dir, "shm", name)
        with open(path, "wb") as f:
            f.truncate(size)
        (self.host.shm_keep if keep else self.host.shm_remove).append(name)

    def gpu_minors(self, minors):
        """Device minors by nvidia-smi index: minors[i] is the N of the
        /dev/nvidiaN of GPU i (index order follows the PCI bus, the minor the
        driver's probe order; PrincetonUniversity/jobstats#34 shows
        /dev/nvidia0 as GPU 6). The fake nvidia-smi charges a holder of
        /dev/nvidiaN on that index, and the host's
        /proc/driver/nvidia/gpus/BUS/information say the same."""
        _write(os.path.join(self.host.state, "minors"), " ".join(str(m) for m in minors) + "\n")
        buses = ["19", "3b", "4c", "5d", "9b", "bb", "cb", "db"]
        script = "; ".join(
            f"printf 'Model: \\t\\t NVIDIA H200\\nBus Location: \\t 0000:{b}:00.0\\n"
            f"Device Minor: \\t {m}\\n' > /proc/driver/nvidia/gpus/0000:{b}:00.0/information"
            for b, m in zip(buses, minors))
        result = self.fleet.exec(self.name, script)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: gpu_minors: {result.stderr}")

    def leak(self, gpu, mib):
        """Driver-leaked memory on 'gpu' with no process, until a reset."""
        with open(os.path.join(self.host.state, "leaked", str(gpu)), "w") as f:
            f.write(f"{mib}\n")

    def nvidia_smi_mode(self, mode):
        """normal | missing (driver not loaded, exit 9) | hang | lost:K |
        lost-only:K (see nvidia_smi.c)."""
        with open(os.path.join(self.host.state, "mode"), "w") as f:
            f.write(mode + "\n")

    # ---- network faults -------------------------------------------------

    def no_listener(self):
        """Nothing listens on the host's address (connection refused)."""
        self.fleet.kill_sshd(self.name)

    def tarpit(self):
        """A listener that accepts but never sends the SSH banner."""
        self.fleet.kill_sshd(self.name)
        started = self.fleet.exec(self.name, f"/usr/local/bin/tarpit {self.host.address} 22 "
                                             "</dev/null >/dev/null 2>&1 & echo $!")
        pid = started.stdout.strip()
        self.host.listener = "tarpit"
        # Ready only when the tarpit itself holds port 22 (not a dying sshd).
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            holders = self.fleet.exec(self.name, "fuser -n tcp 22 2>/dev/null").stdout.split()
            if pid in holders:
                return
            time.sleep(0.01)
        from simfleet import SimError   # simfleet imports this module
        raise SimError(f"{self.name}: tarpit (pid {pid}) is not listening on port 22")

    def black_hole(self):
        """Port 22 neither answers nor refuses: a listener whose accept
        queue is full and never accepted, so the kernel drops new SYNs (a
        host behind a firewall that drops, or a wedged kernel): a connect
        times out."""
        self.fleet.kill_sshd(self.name)
        script = ("import socket,sys,time\n"
                  "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                  "for i in range(1000):\n"
                  "    try: s.bind((sys.argv[1], 22)); break\n"
                  "    except OSError: time.sleep(0.01)\n"
                  "s.listen(0); fill=[]\n"
                  "for i in range(3):\n"
                  "    c=socket.socket(); c.setblocking(False); fill.append(c)\n"
                  "    try: c.connect((sys.argv[1], 22))\n"
                  "    except BlockingIOError: pass\n"
                  "open('/run/fakegpu/black_hole', 'w').close()\n"
                  "while True: time.sleep(3600)\n")
        _write(os.path.join(self.host.state, "black_hole.py"), script)
        self.fleet.exec(self.name, f"python3 /run/fakegpu/black_hole.py {self.host.address} "
                                   "</dev/null >/dev/null 2>&1 &")
        self.host.listener = "black_hole"
        deadline = time.monotonic() + 15
        while not os.path.exists(os.path.join(self.host.state, "black_hole")):
            if time.monotonic() > deadline:
                from simfleet import SimError   # simfleet imports this module
                raise SimError(f"{self.name}: the black hole is not listening on port 22")
            time.sleep(0.01)

    def sshd_options(self, text):
        """Appends 'text' (sshd_config lines) to the host's sshd_config and
        has sshd re-read it (SIGHUP: it re-executes itself, same PID), as an
        administrator does; returns once it listens again."""
        d = self.host.dir
        with open(f"{d}/etc/sshd_config", "a") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        log = f"{d}/sshd.log"

        def listening():
            try:
                with open(log, errors="replace") as f:
                    return f.read().count("Server listening on")
            except OSError:
                return 0
        before = listening()
        self.fleet.exec(self.name, "kill -HUP $(cat /run/fakegpu/sshd.pid)")
        deadline = time.monotonic() + 15
        while listening() <= before:
            if time.monotonic() > deadline:
                from simfleet import SimError   # simfleet imports this module
                raise SimError(f"{self.name}: sshd did not listen again after SIGHUP")
            time.sleep(0.01)

    def refuse_key(self):
        """The fleet's client key is not authorized for any user."""
        with open(os.path.join(self.fleet.workdir, "keys", "other_ed25519.pub")) as f:
            other = f.read()
        for user in ("root", "gpuops"):
            _write(os.path.join(self.host.state, "authorized_keys", user), other)

    def change_host_key(self):
        """known_hosts will carry a different key than the host presents."""
        path = os.path.join(self.host.dir, "etc", "old_host_key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "old",
                        "-f", path], check=True)
        self.host.host_key_override = path + ".pub"

    def kill_sshd_on_nvidia_smi(self, call=2):
        """The 'call'-th nvidia-smi from now kills the host's sshd (listener
        and sessions) before answering: with fleetreap's default playbook,
        call 1 is the first scan and call 2 comes after the kill wave."""
        _write(os.path.join(self.host.state, "kill_sshd_on_nvsmi"), f"{call}\n")

    def kill_sshd_on_stop(self):
        """The first 'systemctl stop' kills the host's sshd mid-run."""
        _write(os.path.join(self.host.state, "kill_sshd_on_stop"), "armed\n")
