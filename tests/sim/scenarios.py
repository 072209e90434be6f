"""scenarios: what a simulated host looks like before fleetreap runs.

One function per scenario, registered by name with @scenario. Each receives
a host_setup.HostSetup ("h") right after the host booted and stages it with
its verbs: h.workload, h.service, h.daemon, h.shm, h.leak, h.nvidia_smi_mode,
h.no_listener, h.tarpit, h.refuse_key, h.change_host_key, h.kill_sshd_on_stop,
h.kill_sshd_on_nvidia_smi, h.bystanders, h.sleeper, h.charge,
h.recovery_action, h.container_job, and for owners and scopes h.daemon,
h.all_daemons, h.restarting_service, h.slurm_job, h.docker_container,
h.k8s_pod, h.pod_sandbox, h.impostor (host_setup.py composes them from
workloads.py, owners.py, daemons.py and faults.py).
Every host already runs its bystanders (hosts.host_shape) when the
scenario starts.
To add one, write a function here; `scripts/fleet list` shows them all.
DEMO is the mixed fleet of the README's demo.
"""

import shlex
import time

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def get(name):
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    return SCENARIOS[name]


VLLM_ARGV = ("python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
             "meta-llama/Llama-3.1-405B-Instruct-FP8", "--tensor-parallel-size", "8")


@scenario
def clean(h):
    """A healthy idle host: only nvidia-persistenced holds the devices."""
    h.daemon("nvidia-persistenced")


@scenario
def vllm_incident(h):
    """The incident: vllm.service (KillMode=process) serves a TP=8 model;
    stopping it kills only the API server and orphans 8 workers holding
    96844 MiB each, whose names do not look like vllm."""
    h.daemon("nvidia-persistenced")
    h.service("vllm.service", killmode="process", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


@scenario
def vllm_running_cgroup(h):
    """Same server with KillMode=control-group: systemctl stop is enough."""
    h.daemon("nvidia-persistenced")
    h.service("vllm.service", killmode="control-group", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


@scenario
def orphans(h):
    """The incident after the unit was already stopped: 8 orphans, no unit."""
    h.daemon("nvidia-persistenced")
    h.workload(mib=96844, title="VLLM::Worker_TP%d", detach=True, argv=VLLM_ARGV)


@scenario
def ignore_term(h):
    """Workers that ignore SIGTERM; only SIGKILL frees the GPUs."""
    h.workload(mib=40960, title="pt_main_thread", on_term="ignore", detach=True,
               argv=("python3", "train.py"))


@scenario
def slow_exit(h):
    """Workers that exit 1.5 s after SIGTERM (a graceful NCCL shutdown)."""
    h.workload(mib=40960, title="VLLM::Worker_TP%d", on_term="delay:1500", detach=True,
               argv=VLLM_ARGV)


@scenario
def map_holder(h):
    """Seen on an H200: workers that keep only mappings of the device files
    (they closed their fds after allocating); nvidia-smi charges them, and
    only /proc/PID/maps shows what they hold."""
    h.daemon("nvidia-persistenced")
    h.workload(mib=8806, title="VLLM::Worker_TP%d", detach=True, argv=VLLM_ARGV, hold="map")


@scenario
def leader_exited(h):
    """Seen on an H200: workers whose main thread exited while a worker
    thread holds the devices: state Z, /proc/PID/fd empty, the fds under
    /proc/PID/task/TID/fd; nvidia-smi charges them."""
    h.daemon("nvidia-persistenced")
    h.workload(mib=6754, title="VLLM::Worker_TP%d", detach=True, argv=VLLM_ARGV,
               hold="threads")


@scenario
def late_reaper(h):
    """Workers whose parent reaps them 3 s after they die (PID 1 on an H200
    reaped orphans about 1.4 s late): a killed worker is a zombie meanwhile,
    its files closed and its memory free."""
    h.workload(mib=40960, title="VLLM::Worker_TP%d", argv=VLLM_ARGV, reap_ms=3000,
               comm="python3")


@scenario
def never_reaped(h):
    """Workers whose parent never reaps them (a container started without an
    init): a killed worker stays a zombie for good."""
    h.workload(mib=40960, title="VLLM::Worker_TP%d", argv=VLLM_ARGV, reap_ms=-1,
               comm="python3")


@scenario
def shm_dirty(h):
    """A host that ends dirty (ghost memory on GPU 3) after its orphans are
    killed and its /dev/shm leftovers removed, one of them kept because a
    process (no GPU) still has it open."""
    h.workload(mib=40960, title="VLLM::Worker_TP%d", detach=True, argv=VLLM_ARGV)
    for name in ("nccl-WU88OE", "psm_4f1e2b7a"):
        h.shm(name, size=1 << 16, keep=False)
    h.shm("nccl-inuse", keep=True)
    h.fleet.exec(h.name, "setsid sleep 3600 </dev/shm/nccl-inuse >/dev/null 2>&1 &")
    h.leak(3, 5000)


@scenario
def mps_node(h):
    """Seen on an H200 under MPS: root's control daemon and server (the
    server keeps 74 MiB of its own on GPU 0 once its clients are gone), a
    client (8802 MiB on GPU 0), and a user's own MPS control daemon (the
    real executable, run by gpuops, 66 MiB on GPU 1): a job."""
    h.daemon("nvidia-persistenced")
    h.daemon("nvidia-cuda-mps-control")
    server = h.daemon("nvidia-cuda-mps-server")
    h.charge(server, 0, 74)
    h.workload(gpus="0", mib=8802, title="python3", detach=True, visible="0",
               argv=("python3", "infer.py"))
    h.workload(gpus="", mib=66, hold_gpus="1", exe="/usr/bin/nvidia-cuda-mps-control",
               argv=("nvidia-cuda-mps-control", "-d"), user="gpuops")


@scenario
def straggler_gpu5(h):
    """Seven orphaned workers, and on GPU 5 a worker whose supervisor starts a
    new one 300 ms after the first is killed: it appears after the first
    kill wave and only a re-scan finds it."""
    h.workload(gpus="0-4,6-7", mib=70000, title="VLLM::Worker_TP%d", detach=True,
               argv=VLLM_ARGV)
    # A single-GPU worker (CUDA_VISIBLE_DEVICES=5): it opens GPU 5 only.
    h.workload(gpus="5", mib=70000, title="VLLM::Worker_TP%d", respawn_once=True,
               respawn_delay_ms=300, comm="ray::Supervisor",
               argv=("ray::Supervisor",), visible="5")


@scenario
def straggler_slow_init(h):
    """The GPU 5 story as a real H200 showed it: seven orphaned workers, and
    on GPU 5 a worker whose supervisor starts a new one the moment the first
    is killed; the new one needs 5 s (PyTorch's import and CUDA init) before
    it opens the GPU, well after any settle period. Only watching the
    supervisor's new children catches it."""
    h.workload(gpus="0-4,6-7", mib=70000, title="VLLM::Worker_TP%d", detach=True,
               argv=VLLM_ARGV)
    h.workload(gpus="5", mib=70000, title="python3", respawn_once=True,
               respawn_delay_ms=0, respawn_init_ms=5000, comm="supervisor.py",
               argv=("python3", "supervisor.py"), visible="5")


@scenario
def protected_daemons(h):
    """Every device held by nvidia-persistenced, nv-hostengine, dcgm-exporter
    and nv-fabricmanager, plus one real worker; only the worker may go."""
    for name in ("nvidia-persistenced", "nv-hostengine", "dcgm-exporter", "nv-fabricmanager"):
        h.daemon(name)
    h.workload(gpus="3", mib=20480, title="python3", detach=True, argv=("python3", "bench.py"))


@scenario
def shm_leftovers(h):
    """Stale NCCL/psm segments in /dev/shm next to files that must stay."""
    h.daemon("nvidia-persistenced")
    for name in ("nccl-WU88OE", "nccl-Ab12Cd", "psm_4f1e2b7a", "sem.vllm_lock",
                 "sem.mp-a3bx9k2q", "sgl_shm_mm_7f3e", "vllm_offload_engine0.mmap"):
        h.shm(name, size=1 << 20, keep=False)
    for name in ("cuda.shm.0.52.1", "keep-me.db", "pulse-shm-2816412571"):
        h.shm(name, keep=True)


@scenario
def ghost_memory(h):
    """GPU 2 reads 10151 MiB with no process anywhere (driver leak)."""
    h.daemon("nvidia-persistenced")
    h.leak(2, 10151)


@scenario
def driver_missing(h):
    """No driver: no /dev/nvidia*, nvidia-smi prints the real text, exit 9."""
    h.fleet.exec(h.name, "rm -f /dev/nvidia*")
    with open(f"{h.host.state}/driver", "w") as f:
        f.write("missing\n")
    h.nvidia_smi_mode("missing")


@scenario
def nvidia_smi_hang(h):
    """nvidia-smi blocks forever (a wedged driver), with a busy GPU."""
    h.workload(gpus="0", mib=8192, title="python3", detach=True, argv=("python3", "job.py"))
    h.nvidia_smi_mode("hang")


@scenario
def gpu_lost(h):
    """GPU 6 fell off the bus: nvidia-smi prints the error line, exit 15."""
    h.nvidia_smi_mode("lost:6")


@scenario
def gpu_lost_only(h):
    """GPU 6 fell off the bus and nvidia-smi prints only the error, exit 15."""
    h.nvidia_smi_mode("lost-only:6")


@scenario
def no_sudo(h):
    """Root-owned workers; the inventory logs in as gpuops, who has no sudo."""
    h.host.spec.user = "gpuops"
    h.set_sudo(False)
    h.workload(mib=30000, title="VLLM::Worker_TP%d", detach=True, argv=VLLM_ARGV)


@scenario
def sudo_user(h):
    """The incident, reached as gpuops with passwordless sudo."""
    h.host.spec.user = "gpuops"
    h.set_sudo(True)
    vllm_incident(h)


@scenario
def unreachable(h):
    """Nothing listens on the address: connection refused."""
    h.no_listener()


@scenario
def no_banner(h):
    """A listener that accepts and never sends the SSH banner."""
    h.tarpit()


@scenario
def black_hole(h):
    """The vLLM incident behind a port that drops SYNs (a full, never
    accepted backlog): connect times out, nothing on the host changes."""
    vllm_incident(h)
    h.black_hole()


@scenario
def key_refused(h):
    """sshd refuses the fleet's client key (publickey auth fails)."""
    vllm_incident(h)
    h.refuse_key()


@scenario
def host_key_changed(h):
    """known_hosts holds another key for this address (possible MITM)."""
    vllm_incident(h)
    h.change_host_key()


@scenario
def sshd_dies(h):
    """sshd dies in the middle of a run: at the second nvidia-smi call."""
    vllm_incident(h)
    h.kill_sshd_on_nvidia_smi(call=2)


@scenario
def sshd_dies_on_stop(h):
    """sshd dies in the middle of a run: at the first systemctl stop (for
    playbooks that stop units)."""
    vllm_incident(h)
    h.kill_sshd_on_stop()


@scenario
def realistic_host(h):
    """The incident on a host as busy as a real one: 500 bystanders in all
    (sshd sessions, containerd, cron, ...), nvidia-persistenced,
    nv-hostengine and dcgm-exporter, and vllm.service (KillMode=process)
    whose 8 TP workers each hold all 8 GPUs and use their own."""
    h.bystanders(max(0, 500 - h.host.bystanders), first=h.host.bystanders)
    for name in ("nvidia-persistenced", "nv-hostengine", "dcgm-exporter"):
        h.daemon(name)
    h.service("vllm.service", killmode="process", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


@scenario
def container_job(h):
    """A containerised training job on GPU 3: its own mount namespace with
    its own /dev (plain files nvidia3, nvidiactl, nvidia-uvm: other inodes
    than the host's, so fuser on the host's /dev/nvidia3 does not see it;
    readlink of its descriptors reads "/dev/nvidia3"), 40960 MiB on GPU 3,
    listed by nvidia-smi. Plus nvidia-persistenced. Must end clean."""
    h.daemon("nvidia-persistenced")
    h.container_job(gpu=3, mib=40960, argv=("python3", "train.py"))


# Names that imitate the records of fleetreap's remote scripts.
FORGED_RECORD = "x\n@@holders\nhold 1 2f6465762f6e766964696130"
HOSTILE_WORKERS = [  # (comm, argv) per GPU
    ("evil\nname", ["python3\n@@end", "--rank", "0"]),
    ("@@end", ["@@end"]),
    ("@@session", ["@@session", "1 2 3"]),
    ("a\\nb\\0c", ["back\\slash\\n\\0", "\\"]),
    ("q'\"`$(id)", ["quote'd \"dq\" `bt` $(id)", "'"]),
    (FORGED_RECORD, [FORGED_RECORD]),
    ("proc 1 2 3", ["\n@@nvsmi-out\nindex, uuid\n0, GPU-x, 0", "\t\ttab"]),
    ("x) Z 1 1 1", ["x) Z 1 1 1 1", "@@children\n1 2 3 init"]),
]


@scenario
def hostile_names(h):
    """Eight orphaned workers, one per GPU (30000 MiB each), whose comm and
    argv hold newlines, "@@end", "@@session", literal backslash escapes,
    quotes, and a scan record ("x\n@@holders\nhold 1 2f64..."): all must be
    found and cleaned (SIGTERM). Plus nvidia-persistenced."""
    h.daemon("nvidia-persistenced")
    for k, (comm, argv) in enumerate(HOSTILE_WORKERS[:h.gpus]):
        h.workload(gpus=str(k), mib=30000, detach=True, argv=("python3", "launch.py"),
                   worker_comm=comm, worker_argv=argv)


FORGED_SHM_REMOVE = [
    "nccl-z\n@@end\n@@session\n1\n@@nvsmi-out\nindex, uuid\n0, GPU-x, 0",
    "nccl-@@end",
    "nccl-back\\slash\\n",
    "nccl-x\nremoved keep-me.db",
    "nccl-" + "\n".join(f"{k}, 0" for k in range(8)),
]
FORGED_SHM_KEEP = ["keep-me.db", "cuda.shm.0.52.1", "keep\\n-me", "@@end"]


@scenario
def forged_shm(h):
    """Ghost memory on GPU 2 (10151 MiB, no process) and /dev/shm files whose
    names hold newlines and protocol text ("@@end", "@@nvsmi-out", nvidia-smi
    rows at 0 MiB) or backslashes. The host must end dirty (the ghost),
    never clean, never failed; only nccl-* leftovers may be removed."""
    h.daemon("nvidia-persistenced")
    h.leak(2, 10151)
    for name in FORGED_SHM_REMOVE:
        h.shm(name, size=1 << 16, keep=False)
    for name in FORGED_SHM_KEEP:
        h.shm(name, keep=True)


@scenario
def recovery_action(h):
    """nvidia-smi reports gpu_recovery_action "Reset" on GPU 4 (every other
    GPU "None"); nothing holds GPU memory. Plus nvidia-persistenced."""
    h.daemon("nvidia-persistenced")
    h.recovery_action(4, "Reset")


@scenario
def unknown_error(h):
    """Every nvidia-smi call prints only "Unable to determine the device
    handle for GPU 0000:19:00.0: Unknown Error" and exits 15 (sample 06),
    with a busy GPU 0 behind it. Plus nvidia-persistenced."""
    h.daemon("nvidia-persistenced")
    h.workload(gpus="0", mib=8192, title="python3", detach=True, argv=("python3", "job.py"))
    h.nvidia_smi_mode("unknown-error:0")


@scenario
def nvsmi_only_holder(h):
    """nvidia-smi charges 30720 MiB on GPU 1 to a sleeping python3 that holds
    no device descriptor (it mapped its memory and closed its fds): only
    nvidia-smi's compute-apps names it. Plus nvidia-persistenced. fleetreap
    must find and clean it."""
    h.daemon("nvidia-persistenced")
    pid = h.sleeper(argv=("python3", "-m", "sglang.launch_server", "--port", "30000"),
                    comm="python3")
    h.charge(pid, 1, 30720)


@scenario
def slurm_shared(h):
    """A shared Slurm node: job 41 (gpuops, GPUs 0-3) and job 42 (researcher,
    GPUs 4-7) in their own job cgroups (/system.slice/slurmstepd.scope/
    job_N/step_0/user/task_0), each with 4 orphaned workers (70000 MiB on
    their own GPU, opening only their job's GPUs); slurmd and
    nvidia-persistenced in their units. Job 41's epilog must leave job 42
    alone (host.jobs["41"]["epilog_env"])."""
    h.daemon("nvidia-persistenced")
    h.sleeper(argv=("/usr/sbin/slurmd", "-D", "-s"), comm="slurmd", exe="/usr/sbin/slurmd",
              cgroup="/system.slice/slurmd.service")
    h.slurm_job(41, "0-3", user="gpuops")
    h.slurm_job(42, "4-7", user="researcher", title="pt_main_thread",
                argv=("python3", "train.py", "--nproc-per-node", "4"))


@scenario
def container_shapes(h):
    """Containers as runtimes lay them out: a Docker container holding GPU 2
    (/system.slice/docker-<64 hex>.scope) and a Kubernetes pod container
    holding GPU 5 (/kubepods.slice/kubepods-besteffort.slice/
    kubepods-besteffort-pod<uid>.slice/cri-containerd-<64 hex>.scope, plus
    its /pause), each in its own mount namespace and /dev; plus
    nvidia-persistenced. host.jobs names them ("docker:trainer",
    "pod:llm-serve-7d9f8b6c5-x2x4q")."""
    h.daemon("nvidia-persistenced")
    h.docker_container("trainer", gpus="2", mib=40960)
    h.k8s_pod("llm-serve-7d9f8b6c5-x2x4q", gpus="5", mib=61440)


@scenario
def restart_unit(h):
    """embed.service (Restart=always, RestartSec=500ms, KillMode=control-
    group): its main process holds GPU 1 (30720 MiB); killed, it comes back
    as a new PID in the same cgroup (PPID 1) until systemctl stop or the
    start limit (5 starts in 10 s). Plus nvidia-persistenced."""
    h.daemon("nvidia-persistenced")
    h.restarting_service("embed.service", gpus="1", mib=30720, restart="always",
                         restart_sec=0.5, description="Text embedding server")


@scenario
def gpu_node_daemons(h):
    """Every protected daemon of a real GPU node (daemons.DAEMONS: driver
    stack, fabric manager and nvlsm, vGPU, DCGM, the GPU Operator's and the
    DRA driver's agents in pod cgroups, MPS, IMEX, NVSM), each holding every
    device at 0 MiB, with their PID files; plus the vLLM incident
    (vllm.service, KillMode=process, 8 TP workers). Only the workers may
    go; every daemon must survive."""
    h.all_daemons()
    h.service("vllm.service", killmode="process", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


@scenario
def gpu_operator_node(h):
    """gpu_node_daemons as a Kubernetes node runs it: the GPU Operator's and
    the DRA driver's agents (dcgm-exporter, the device plugin and its
    config-manager, GFD, the MIG manager, the validator, MPS, the kubelet
    plugins, the compute-domain daemon) each from its own container root
    (/run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/rootfs,
    pivot_root'ed): /proc/PID/exe reads /usr/bin/NAME, which the host's own
    /usr/bin does not have. The driver-stack daemons run in their units;
    plus the vLLM incident. Every daemon must survive."""
    h.all_daemons(container_root=True)
    h.service("vllm.service", killmode="process", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


@scenario
def persistenced_elsewhere(h):
    """nvidia-persistenced runs from /opt/nvidia/driver/bin (root-owned 0755,
    as a driver container or a custom install puts it) and writes its usual
    PID file /var/run/nvidia-persistenced/nvidia-persistenced.pid; plus the
    vLLM incident."""
    h.daemon("nvidia-persistenced", path="/opt/nvidia/driver/bin/nvidia-persistenced")
    h.service("vllm.service", killmode="process", description="vLLM OpenAI server",
              mib=96844, title="VLLM::Worker_TP%d", argv=VLLM_ARGV)


IMPOSTORS = [  # (path, user, mode, gpu, mib)
    ("/home/gpuops/bin/sshd", "gpuops", 0o755, "3", 90000),
    ("/tmp/nvidia-persistenced", "gpuops", 0o755, "4", 60000),
    ("/root/bin/nv-hostengine", "root", 0o755, "6", 20480),
    ("/usr/local/bin/nv-fabricmanager", "root", 0o777, "7", 20480),
]


@scenario
def impostors(h):
    """Jobs named like protected programs (safety review F5): gpuops runs
    gpuload copies as /home/gpuops/bin/sshd (GPU 3, 90000 MiB) and
    /tmp/nvidia-persistenced (GPU 4, private /tmp); root runs
    /root/bin/nv-hostengine (GPU 6, not a system location) and
    /usr/local/bin/nv-fabricmanager (GPU 7, mode 0777). Plus the real
    nvidia-persistenced. Every impostor is a job and must be signalled."""
    h.daemon("nvidia-persistenced")
    for path, user, mode, gpu, mib in IMPOSTORS:
        h.impostor(path, gpus=gpu, mib=mib, user=user, mode=mode)


# Hostile volume (issue 16): hosts that print far too much, or whose SSH
# server ends a command in ways a healthy host never does. Each runs the vLLM
# incident underneath, so a test can check that nothing was signalled there.
FLOOD_BYTES = 300 * 1000 * 1000


@scenario
def nvsmi_flood(h):
    """nvidia-smi prints 300 MB (its GPU rows over and over) on every call."""
    vllm_incident(h)
    h.nvidia_smi_mode(f"flood:text:{FLOOD_BYTES}")


@scenario
def nvsmi_binary(h):
    """nvidia-smi prints 1 MiB of binary garbage (NULs and control bytes)."""
    vllm_incident(h)
    h.nvidia_smi_mode(f"flood:binary:{1 << 20}")


@scenario
def nvsmi_million_rows(h):
    """--query-compute-apps prints 1,000,000 rows (about 75 MB)."""
    vllm_incident(h)
    h.nvidia_smi_mode("flood:rows:1000000")


@scenario
def nvsmi_one_line(h):
    """nvidia-smi prints 100 MB of a progress bar redrawn with carriage
    returns: one line, never a newline."""
    vllm_incident(h)
    h.nvidia_smi_mode(f"flood:line:{100 * 1000 * 1000}")


@scenario
def channel_timeout(h):
    """A hardened sshd (ChannelTimeout session:*=2s, as hardening guides
    suggest) and a wedged nvidia-smi: after 2 s without output sshd closes
    the channel while the command still runs, so no exit status is sent."""
    vllm_incident(h)
    h.nvidia_smi_mode("hang")
    h.sshd_options("ChannelTimeout session:*=2s")


MAINTENANCE_NOTICE = """#!/bin/sh
# sshd's ForceCommand on a host under maintenance: the requested command
# ($SSH_ORIGINAL_COMMAND) never runs; the notice waits for an operator.
echo "$(hostname): under maintenance (OPS-4711); your command was not run."
echo "Press Enter to acknowledge."
read answer
"""


@scenario
def maintenance_notice(h):
    """sshd runs a ForceCommand instead of what is asked: a notice that waits
    for Enter and never exits (fleetreap sends no stdin), and that no remote
    timeout bounds, since the requested command is never run."""
    vllm_incident(h)
    path = "/usr/local/bin/maintenance-notice"
    h.fleet.exec(h.name, f"printf %s {shlex.quote(MAINTENANCE_NOTICE)} > {path} && "
                         f"chmod 755 {path}", check=True)
    h.sshd_options("ForceCommand /usr/local/bin/maintenance-notice")


# The README's demo: a small mixed fleet, one flag (scripts/fleet up --demo).
DEMO = [
    ("gpu01", "clean"),
    ("gpu02", "vllm_incident"),
    ("gpu03", "ignore_term"),
    ("gpu04", "slow_exit"),
    ("gpu05", "straggler_slow_init"),
    ("gpu06", "protected_daemons"),
    ("gpu07", "shm_leftovers"),
    ("gpu08", "ghost_memory"),
    ("gpu09", "unreachable"),
]


def wait_until(predicate, timeout=10.0, interval=0.02):
    """Polls 'predicate' until it is true or 'timeout' passes; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
