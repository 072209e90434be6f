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
The hostile ones (forged records, floods) are in hostile_scenarios.py, the
ones with owners and scopes (Slurm, containers, pods, daemons) in
owner_scenarios.py, the empty-but-not-ready ones in readiness_scenarios.py,
the restarters in restart_scenarios.py; the registry is scenario_registry.py. To add one, write
a function with @scenario in the module of its family; `scripts/fleet list`
shows them all. DEMO is the mixed fleet of the README's demo.
"""

import time

import hostile_scenarios  # noqa: F401  (registers its scenarios)
import owner_scenarios  # noqa: F401  (registers its scenarios)
import readiness_scenarios  # noqa: F401  (registers its scenarios)
import restart_scenarios  # noqa: F401  (registers its scenarios)
from hostile_scenarios import HOSTILE_WORKERS  # noqa: F401
from owner_scenarios import IMPOSTORS  # noqa: F401
from scenario_registry import SCENARIOS, VLLM_ARGV, get, scenario  # noqa: F401


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
def gpu_not_listed(h):
    """An idle host without persistenced (nothing holds a device file) whose
    GPU 7 the driver lists in /proc/driver/nvidia/gpus but nvidia-smi does
    not (it failed to initialise; exit 0): only the driver's list tells that
    a GPU is missing."""
    h.nvidia_smi_mode("shown:7")


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

# The demo inventory's groups beside its scenario_* ones: those that
# README.md and docs/first-run.md's examples select (--limit 'h200:&rack_b1').
DEMO_GROUPS = {
    "h200": ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"],
    "rack_b1": ["gpu04", "gpu05", "gpu06", "gpu07", "gpu08"],
}


def wait_until(predicate, timeout=10.0, interval=0.02):
    """Polls 'predicate' until it is true or 'timeout' passes; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
