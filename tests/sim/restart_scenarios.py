"""restart_scenarios: hosts where something may start the job again after
fleetreap signalled it (docs/playbooks.md, "Never ready while a restarter
lives"): supervisors that restart their worker 0.5, 3, 6 or 20 s after it
died, each new worker needing 3 s to open its GPU (as PyTorch's import and
CUDA start-up take seconds on an H200); a parent that never reaps its dead
workers (named like a Ray raylet); a unit with Restart=always and
RestartSec=5s whose main process holds the GPU; and a shell that started a
worker and restarts nothing. Registered by name with @scenario (scenarios.py
imports this module).
"""

from scenario_registry import scenario

SUPERVISOR_ARGV = ("/usr/bin/python3", "/usr/bin/supervisord", "-n")


def _supervised(h, delay_ms):
    """One worker on GPU 0 (10 GiB) whose supervisord-like parent starts a
    new one 'delay_ms' after the first dies (once); the new one opens GPU 0
    3 s after it starts."""
    h.workload(gpus="0", mib=10240, title="python3", respawn_once=True,
               respawn_delay_ms=delay_ms, respawn_init_ms=3000, comm="supervisord",
               argv=SUPERVISOR_ARGV, visible="0")


@scenario
def supervisor_restart_500ms(h):
    """A supervisor that restarts its killed worker after 0.5 s."""
    _supervised(h, 500)


@scenario
def supervisor_restart_3s(h):
    """A supervisor that restarts its killed worker after 3 s (an H200 host
    with this shape was called READY before the worker came back)."""
    _supervised(h, 3000)


@scenario
def supervisor_restart_6s(h):
    """A supervisor that restarts its killed worker after 6 s."""
    _supervised(h, 6000)


@scenario
def supervisor_restart_20s(h):
    """A supervisor that restarts its killed worker after 20 s (a
    CrashLoopBackOff's second back-off)."""
    _supervised(h, 20000)


@scenario
def raylet_never_reaps(h):
    """Three workers under a parent named like a Ray raylet that never reaps
    them (nor restarts them): killed, they stay zombies under it."""
    h.workload(gpus="0-2", mib=20480, title="ray::RayWorker", reap_ms=-1, comm="raylet",
               argv=("/usr/local/bin/raylet", "--node_manager_port=0"), visible="0-2")


@scenario
def restart_unit_5s(h):
    """trainer.service, Restart=always, RestartSec=5s, its main process a
    GPU holder: systemd starts it again 5 s after each death."""
    h.restarting_service("trainer.service", gpus="1", mib=20480, restart="always",
                         restart_sec=5, start_limit_burst=20, start_limit_interval_s=120)


@scenario
def shell_parent(h):
    """A worker started from an interactive shell that lives on and
    restarts nothing."""
    h.workload(gpus="0", mib=10240, title="python3", comm="bash", argv=("-bash",), visible="0")
