"""hostile_scenarios: hosts whose bytes attack the parsers: process names
and /dev/shm entries that imitate fleetreap's remote records, nvidia-smi's
odd answers, and hostile volume (floods, channels that end without a status,
a ForceCommand that never runs the command). Registered by name in
scenario_registry; scenarios.py imports this module.
"""

import resource
import shlex

from scenario_registry import VLLM_ARGV, get, scenario


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
    no device descriptor and maps none: only nvidia-smi's compute-apps names
    it. Plus nvidia-persistenced. No real CUDA process looks so (an H200's
    holders all hold fds or mappings, its MPS client too): fleetreap finds
    it, never signals it, and calls the host dirty."""
    h.daemon("nvidia-persistenced")
    pid = h.sleeper(argv=("python3", "-m", "sglang.launch_server", "--port", "30000"),
                    comm="python3")
    h.charge(pid, 1, 30720)


# Hostile volume: hosts that print far too much, or whose SSH
# server ends a command in ways a healthy host never does. Each runs the vLLM
# incident underneath, so a test can check that nothing was signalled there.
FLOOD_BYTES = 300 * 1000 * 1000


@scenario
def nvsmi_flood(h):
    """nvidia-smi prints 300 MB (its GPU rows over and over) on every call."""
    get("vllm_incident")(h)
    h.nvidia_smi_mode(f"flood:text:{FLOOD_BYTES}")


@scenario
def nvsmi_binary(h):
    """nvidia-smi prints 1 MiB of binary garbage (NULs and control bytes)."""
    get("vllm_incident")(h)
    h.nvidia_smi_mode(f"flood:binary:{1 << 20}")


@scenario
def nvsmi_million_rows(h):
    """--query-compute-apps prints 1,000,000 rows (about 75 MB)."""
    get("vllm_incident")(h)
    h.nvidia_smi_mode("flood:rows:1000000")


@scenario
def nvsmi_one_line(h):
    """nvidia-smi prints 100 MB of a progress bar redrawn with carriage
    returns: one line, never a newline."""
    get("vllm_incident")(h)
    h.nvidia_smi_mode(f"flood:line:{100 * 1000 * 1000}")


@scenario
def channel_timeout(h):
    """A hardened sshd (ChannelTimeout session:*=2s, as hardening guides
    suggest) and a wedged nvidia-smi: after 2 s without output sshd closes
    the channel while the command still runs, so no exit status is sent."""
    get("vllm_incident")(h)
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
    get("vllm_incident")(h)
    path = "/usr/local/bin/maintenance-notice"
    h.fleet.exec(h.name, f"printf %s {shlex.quote(MAINTENANCE_NOTICE)} > {path} && "
                         f"chmod 755 {path}", check=True)
    h.sshd_options("ForceCommand /usr/local/bin/maintenance-notice")


# A user cannot make the host unjudgeable: volume made of processes rather
# than of nvidia-smi's text. Each host runs one real GPU job (gpuops, GPU 3,
# 90000 MiB) that must still be signalled.
CTL_FLOOD = 2500
ARGV_FLOOD_BYTES = 5 * 1000 * 1000


def _real_job(h):
    h.daemon("nvidia-persistenced")
    return h.workload(gpus="3", mib=90000, user="gpuops", visible="3", detach=True,
                      argv=("python3", "train.py"))


@scenario
def ctl_flood(h):
    """2,500 of gpuops's sleepers that hold only /dev/nvidiactl (charged
    nothing), beside one real GPU job on GPU 3 (90000 MiB)."""
    _real_job(h)
    h.volume_holders(CTL_FLOOD)


@scenario
def argv_flood(h):
    """Two nvidiactl holders with 5 MB command lines (one of 64-byte
    arguments, one of a single argument; PR_SET_MM_MAP, no privilege),
    beside one real GPU job on GPU 3 (90000 MiB)."""
    _real_job(h)
    h.volume_holders(1, argv_bytes=ARGV_FLOOD_BYTES, arg_len=64)
    h.volume_holders(1, argv_bytes=ARGV_FLOOD_BYTES, arg_len=ARGV_FLOOD_BYTES)


@scenario
def fd_flood(h):
    """Two processes with 64 threads sharing one fd table filled to
    RLIMIT_NOFILE's hard limit (dup()s of one fd: of /dev/nvidiactl in one,
    of /dev/null in the other), beside one real GPU job on GPU 3 (90000
    MiB): the fd folders hold threads x fds entries."""
    _real_job(h)
    h.volume_holders(1, fds=1 << 20, threads=64)
    h.volume_holders(1, hold="/dev/null", fds=1 << 20, threads=64)


# A million fds in all: one process where RLIMIT_NOFILE's hard limit allows
# it, else as many processes at that limit as make a million (50 at 20,000,
# the limit of this machine and of the GPU machine, which grant no
# CAP_SYS_RESOURCE to raise it).
FD_MILLION = 1000 * 1000


def fd_million_processes():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = FD_MILLION + 16 if hard == resource.RLIM_INFINITY else hard
    return -(-FD_MILLION // max(1, hard - 16))


@scenario
def fd_million(h):
    """A million fds open on /dev/nvidiactl (dup()s, one table per process:
    fd_million_processes() of them, each filled to the hard limit), beside
    one real GPU job on GPU 3 (90000 MiB)."""
    _real_job(h)
    h.volume_holders(fd_million_processes(), fds=1 << 20)


@scenario
def blind_watch(h):
    """A kernel without CONFIG_PROC_CHILDREN, for one process: the parent of
    a job on GPUs 0-1 (30000 MiB each, restarting each worker once) shows a
    /proc/PID/task with no children file (an empty folder bound over it in
    the host's mount namespace; its fds, none, unseen with it)."""
    h.daemon("nvidia-persistenced")
    job = h.workload(gpus="0-1", mib=30000, user="gpuops", visible="0-1", respawn_once=True,
                     argv=("python3", "serve.py"))
    parent = int(job["parent"])
    h.fleet.exec(h.name, f"mkdir -p /run/no-children/{parent} && "
                         f"mount --bind /run/no-children /proc/{parent}/task", check=True)
