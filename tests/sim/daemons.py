"""daemons: the protected daemons of real GPU nodes (DAEMONS, what each host
installs: INSTALLED) and DaemonsMixin, the HostSetup verbs that start them
in their units or pods (daemon, all_daemons). Not thread-safe: one
HostSetup per host.
"""

import os
import shlex

from cgroups import pod_cgroup

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


class DaemonsMixin:
    """HostSetup's protected daemons (needs workload, _write_unit)."""

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
                             Restart=DAEMON_UNIT_RESTART.get(unit, "no"), PIDFile=pidfile,
                             ExecStart=self.last_command,
                             FakePidFile=f"/run/fakegpu/pids/{self._seq}")
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
