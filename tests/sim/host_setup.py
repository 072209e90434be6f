"""host_setup: the files of one simulated host, and HostSetup, the verbs a
scenario uses to stage a host (workloads, units, daemons, /dev/shm files,
leaked memory, nvidia-smi modes, network faults).

Every process is started inside the host's namespaces with nsenter, so
fleetreap sees it over SSH with ps, fuser and /proc. PIDs returned here are
PIDs as seen inside the host. Not thread-safe: one HostSetup per host.
"""

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
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
daemon:x:1:
sudo:x:27:{sudoers}
nvidia-persistenced:x:104:
gpuops:x:1000:
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


def _write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def prepare_host_dir(host, fleet):
    """Creates host.dir: etc/ (accounts, sudo, sshd), state/ (read by the
    fake tools at /run/fakegpu), shm/, root/, home/, usrbin/ (daemons)."""
    d = host.dir
    shutil.rmtree(d, ignore_errors=True)
    for sub in ("etc", "state/authorized_keys", "state/leaked", "state/units", "state/pids", "shm",
                "root", "home/gpuops", "usrbin"):
        os.makedirs(os.path.join(d, sub))
    os.chmod(os.path.join(d, "shm"), 0o1777)
    os.chown(os.path.join(d, "home/gpuops"), 1000, 1000)
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
    for name in os.listdir(os.path.join(fleet.workdir, "daemons")):
        os.link(os.path.join(fleet.workdir, "daemons", name), f"{d}/usrbin/{name}")


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

    # ---- processes ------------------------------------------------------

    @property
    def realistic(self):
        """Whether this host has the realistic shape (see simfleet.host_shape)."""
        return self.host.shape == "realistic"

    def workload(self, gpus="all", mib=96844, title="gpuload-worker-%d", on_term="exit",
                 respawn_once=False, respawn_delay_ms=300, respawn_init_ms=0, detach=False,
                 unit=None,
                 argv=("python3", "-m", "vllm.entrypoints.openai.api_server"), comm=None,
                 user=None, exe=None, hold_all=False, visible=None, worker_argv=None,
                 worker_comm=None, title_pad=None, wrap=None):
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
        "unshare --mount ... sh -c '...' sh" for a container)."""
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
        if visible is None and self.realistic and not hold_all:
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
        result = self.fleet.exec(self.name, command, user=user)
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

    def service(self, unit, killmode="process", description="", timeout_stop_s=5, **workload):
        """Starts a workload as systemd unit 'unit' (MainPID = its parent)."""
        pids = self.workload(unit=unit, **workload)
        with open(os.path.join(self.host.state, "units", unit), "w") as f:
            f.write(f"Description={description or unit}\nMainPID={pids['parent']}\n"
                    f"KillMode={killmode}\nTimeoutStopSec={timeout_stop_s}\n")
        return pids

    def daemon(self, name, argv=None, unit=None):
        """Starts protected daemon 'name' (/usr/bin/NAME, a real executable of
        that name) holding nvidiactl, nvidia-uvm and every GPU at 0 MiB."""
        argv = argv or {"nvidia-persistenced": ["/usr/bin/nvidia-persistenced", "--user",
                                                "nvidia-persistenced", "--verbose"],
                        "nv-hostengine": ["/usr/bin/nv-hostengine", "-n", "--service-account",
                                          "nvidia-dcgm"],
                        "dcgm-exporter": ["/usr/bin/dcgm-exporter", "-f",
                                          "/etc/dcgm-exporter/default-counters.csv"],
                        "nv-fabricmanager": ["/usr/bin/nv-fabricmanager", "-c",
                                             "/usr/share/nvidia/nvswitch/fabricmanager.cfg"],
                        }[name]
        pids = self.workload(hold_all=True, mib=0, argv=argv, exe=f"/usr/bin/{name}",
                             on_term="exit", unit=unit)
        self.host.protected[pids["parent"]] = name
        if unit:
            with open(os.path.join(self.host.state, "units", unit), "w") as f:
                f.write(f"Description={name}\nMainPID={pids['parent']}\n"
                        "KillMode=control-group\nTimeoutStopSec=5\n")
        return pids["parent"]

    def bystanders(self, count, first=0):
        """Starts 'count' unrelated sleeping processes (sshd sessions,
        containerd, cron, python3 -m http.server, kworker-like names...; see
        bystanders.c), each in its own session, children of the host's init.
        They hold no device; fleetreap must leave them alone."""
        if count <= 0:
            return
        result = self.fleet.exec(self.name, f"/usr/local/bin/bystanders {int(count)} {int(first)}",
                                 timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name}: bystanders failed: {result.stderr}")

    def sleeper(self, argv=("python3", "infer.py"), comm="python3", user=None):
        """A plain sleeping process holding no device (a gpuload parent with no
        workers and FAKEGPU_MIB=0); returns its PID."""
        return self.workload(gpus="", mib=0, argv=argv, comm=comm, user=user,
                             visible="")["parent"]

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
                      name="job"):
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
                             visible=str(gpu), wrap=wrap)
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
