"""owner_scenarios: hosts whose GPU processes have owners and scopes (Slurm
jobs, containers, pods, restarting units, every protected daemon of a GPU
node, impostors named like daemons). Registered by name in
scenario_registry; scenarios.py imports this module.
"""

from scenario_registry import VLLM_ARGV, scenario


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
