"""workloads: WorkloadsMixin, the HostSetup verbs for a host's processes
(gpuload workloads, sleepers, bystanders) and its GPU state (charged and
leaked memory, recovery actions, device minors, nvidia-smi modes,
/dev/shm files). Not thread-safe: one HostSetup per host.
"""

import os
import shlex
import time

from host_files import write_file


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode()


class WorkloadsMixin:
    """HostSetup's processes and GPU state."""

    @property
    def realistic(self):
        """Whether this host has the realistic worker layout: the realistic
        shape, or the lean one (the same with fewer bystanders); see
        hosts.host_shape."""
        return self.host.shape in ("realistic", "lean")

    def workload(self, gpus="all", mib=96844, title="gpuload-worker-%d", on_term="exit",
                 respawn_once=False, respawn_delay_ms=300, respawn_init_ms=0, detach=False,
                 unit=None,
                 argv=("python3", "-m", "vllm.entrypoints.openai.api_server"), comm=None,
                 user=None, exe=None, hold_all=False, visible=None, worker_argv=None,
                 worker_comm=None, title_pad=None, wrap=None, cgroup=None, hold_gpus=None,
                 own_pidfile=None, hold="fd", reap_ms=0, shm=None, shm_fd=False):
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
        shm: each worker maps an NCCL-like segment /dev/shm/SHM<gpu> (made
        0600 by its user if missing) and closes its fd (shm_fd: keeps it).
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
        if shm:
            env["FAKEGPU_SHM"] = shm
        if shm_fd:
            env["FAKEGPU_SHM_FD"] = "1"
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

    def volume_holders(self, count, hold="/dev/nvidiactl", fds=0, threads=0, argv_bytes=0,
                       arg_len=0, user="gpuops", first=13):
        """Starts 'count' sleeping processes (bystanders.c, profile 'first' on:
        python3 -m http.server) as 'user' in their login session, each holding
        'hold' open (a control-only holder of /dev/nvidiactl, charged
        nothing), with 'fds' dup()s of it (up to RLIMIT_NOFILE's hard limit),
        'threads' threads sharing that table, and a command line of
        'argv_bytes' bytes in arguments of 'arg_len' bytes. fleetreap may
        signal them (they end on TERM); a test finds them by their exe
        (ground truth's "bystander")."""
        env = {"FAKEGPU_BYSTANDER_HOLD": hold, "FAKEGPU_BYSTANDER_FDS": fds,
               "FAKEGPU_BYSTANDER_THREADS": threads,
               "FAKEGPU_BYSTANDER_ARGV_BYTES": argv_bytes, "FAKEGPU_BYSTANDER_ARG_LEN": arg_len}
        assignments = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items() if v)
        result = self.fleet.exec(self.name, f"env {assignments} /usr/local/bin/bystanders "
                                            f"{int(count)} {int(first)}", timeout=300, user=user)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: volume holders failed: {result.stderr}")

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
        write_file(os.path.join(self.host.state, "recovery", str(gpu)), action + "\n")

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
        write_file(os.path.join(self.host.state, "minors"), " ".join(str(m) for m in minors) + "\n")
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
        lost-only:K | shown:N (see nvidia_smi.c)."""
        with open(os.path.join(self.host.state, "mode"), "w") as f:
            f.write(mode + "\n")
