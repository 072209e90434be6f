"""demo_outcome: what the demo fleet (scenarios.DEMO) is designed to end as
after one `fleetreap --hosts` run, and the check of a run against it, used
by `scripts/fleet demo` (and so scripts/demo.sh).

The design: fleetreap exits 3. Bit 1: the ghost-memory host stays dirty
(memory that no process holds needs a GPU reset, which fleetreap does not do
unasked), and the straggler's host is not ready: its GPUs are empty, but the
supervisor that started its GPU 5 worker again lives on and can do it again.
Bit 2: the host with nothing listening is unreachable. Every other host is
clean afterwards (clean, or cleaned), in fleetreap's report and in the
fleet's own ground truth (read from /proc, not from fleetreap), the not
ready one's GPUs are empty by that truth too, and no protected daemon is
missing anywhere.

problems(exit_code, report, truth) returns what differs, one line each; []
is the designed outcome. Pure functions; thread-safe.
"""

import scenarios

EXIT_CODE = 3
# The report status a host of each scenario must end with (else "clean").
STATUS = {"ghost_memory": "dirty", "unreachable": "unreachable",
          "straggler_slow_init": "not_ready"}


def expected_status(scenario):
    return STATUS.get(scenario, "clean")


def problems(exit_code, report, truth, demo=None):
    """What differs between a run and the design: 'exit_code' is
    fleetreap's, 'report' its --json report (None when it wrote none),
    'truth' the fleet's ground truth after the run (simfleet ground_truth)."""
    demo = scenarios.DEMO if demo is None else demo
    found = []
    if exit_code != EXIT_CODE:
        found.append(f"fleetreap exited {exit_code}, the design says {EXIT_CODE}")
    if report is None:
        return found + ["fleetreap wrote no JSON report"]
    hosts = {h.get("name"): h for h in report.get("hosts", [])}
    for name, scenario in demo:
        want = expected_status(scenario)
        host = hosts.get(name)
        t = truth.get(name, {})
        label = f"{name} ({scenario})"
        if host is None:
            found.append(f"{label}: not in fleetreap's report")
        elif host.get("status") != want:
            found.append(f"{label}: fleetreap says {host.get('status')} "
                         f"({host.get('summary') or host.get('error_message')}), "
                         f"the design says {want}")
        if t.get("protected_missing"):
            found.append(f"{label}: protected daemons gone: {t['protected_missing']}")
        if want in ("clean", "not_ready") and not t.get("clean"):
            found.append(f"{label}: not clean after the run by the ground truth "
                         f"(gpu_procs={len(t.get('gpu_processes', []))}, "
                         f"shm={t.get('shm_remaining')})")
        if want == "dirty" and (t.get("gpu_processes") or not t.get("ghost_gpus")):
            found.append(f"{label}: the ground truth shows no ghost memory alone "
                         f"(gpu_procs={len(t.get('gpu_processes', []))}, "
                         f"ghost_gpus={t.get('ghost_gpus')})")
    return found


def summary(truth, demo=None):
    """The line that explains the designed outcome, for a run that met it."""
    demo = scenarios.DEMO if demo is None else demo
    dirty = [n for n, s in demo if expected_status(s) == "dirty"]
    not_ready = [n for n, s in demo if expected_status(s) == "not_ready"]
    unreachable = [n for n, s in demo if expected_status(s) == "unreachable"]
    ghosts = ", ".join(f"GPU {g}'s" for n in dirty for g in truth.get(n, {}).get("ghost_gpus", []))
    clean = len(demo) - len(dirty) - len(not_ready) - len(unreachable)
    waiting = (f", {', '.join(not_ready)} not ready: GPUs empty, its restarter lives on"
               if not_ready else "")
    return (f"as designed: fleetreap exited {EXIT_CODE} = 1 ({', '.join(dirty)} dirty: "
            f"{ghosts or 'ghost memory'} ghost memory needs a GPU reset{waiting}) + 2 "
            f"({', '.join(unreachable)} unreachable); the other {clean} hosts are clean, "
            "by its report and by their own /proc")
