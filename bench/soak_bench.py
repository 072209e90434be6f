#!/usr/bin/python3
"""soak_bench: many fleetreap runs in a row over mixed, faulty fleets.

Each run brings up a fresh fleet of N hosts (default 200, simfleet's `lean`
shape) whose scenarios are drawn at random from a fixed seed out of MIX
(clean, the vLLM incident, TERM-ignoring workers, a straggler, a respawning
worker, ghost memory, a hung nvidia-smi, hostile process names, and the
faults: refused, black hole, no banner, refused key, sshd dying mid-run),
runs the full escalation (playbooks/vllm.yaml) once, checks the run against
the fleet's ground truth, and takes the fleet down. A fresh fleet per run
re-arms every scenario (the escalation cleans what it can).

Checks per run: fleetreap exits on its own (no crash, no hang) with the
exit code the mix implies; every host is in the report; each host has its
scenario's status and error kind (EXPECT); the ground truth agrees (hosts
reported clean are clean; unreachable hosts were not touched; nothing else
is clean that should not be; no bystander or protected daemon lost).
Recorded per run: wall, controller CPU, peak RSS, peak and last open
descriptors and threads (from /proc while it runs), so growth from run to
run would show.

  bench/soak_bench.py [--hosts 200] [--runs 20] [--seed 16] [--shape lean]
                      [--json-out FILE] [--fleetreap build/fleetreap]

Needs root. Exits 1 when any check fails.
"""

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from controller_sample import load, run_sampled  # noqa: E402
from scale_bench import accounted  # noqa: E402
from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

# scenario -> (status, error_kind) fleetreap must report with vllm.yaml.
EXPECT = {
    "clean": ("clean", None),
    "vllm_incident": ("clean", None),
    "ignore_term": ("clean", None),
    # Caught, but the supervisor that started the straggler lives on.
    "straggler_gpu5": ("not_ready", None),
    "straggler_slow_init": ("not_ready", None),  # the respawning worker
    "hostile_names": ("clean", None),
    "ghost_memory": ("dirty", None),
    "nvidia_smi_hang": ("failed", "command_timeout"),
    "unreachable": ("unreachable", "refused"),
    "black_hole": ("unreachable", "connect_timeout"),
    "no_banner": ("unreachable", "banner_timeout"),
    "key_refused": ("unreachable", "auth"),
    "sshd_dies": ("failed", "connection_lost"),
}
MIX = sorted(EXPECT)
UNTOUCHED = {"unreachable", "black_hole", "no_banner", "key_refused"}
FLAGS = ["--playbook", os.path.join(ROOT, "playbooks", "vllm.yaml"),
         "--connect-timeout", "5s", "--command-timeout", "10s"]


def check(report, code, scenarios, before, after):
    problems = accounted(report, list(scenarios))
    want_code = 0
    for h in (report or {}).get("hosts", []):
        name, scenario = h["name"], scenarios[h["name"]]
        status, kind = EXPECT[scenario]
        want_code |= {"clean": 0, "dirty": 1, "not_ready": 1}.get(status, 2)
        if (h["status"], h["error_kind"]) != (status, kind):
            problems.append(f"{name} ({scenario}): {h['status']} {h['error_kind']} "
                            f"{h['error_message']!r}, expected {status} {kind}")
        t, t0 = after[name], before[name]
        ready = t["clean"] and not t["ghost_gpus"]   # truth's "clean" allows ghost memory
        if ready != (status in ("clean", "not_ready")) and scenario not in UNTOUCHED:
            problems.append(f"{name} ({scenario}): ground truth ready={ready}")
        if scenario in UNTOUCHED and \
                {p["pid"] for p in t["gpu_processes"]} != {p["pid"] for p in t0["gpu_processes"]}:
            problems.append(f"{name} ({scenario}): unreachable, yet its processes changed")
        if t["bystanders"] != t0["bystanders"] or t["protected_missing"]:
            problems.append(f"{name} ({scenario}): a bystander or protected daemon is gone")
    if report is not None and code != want_code:
        problems.append(f"exit {code}, expected {want_code}")
    return problems


def one_run(binary, index, rng, count, shape):
    scenarios = {f"h{index:02d}-{i:03d}": rng.choice(MIX) for i in range(1, count + 1)}
    workdir = scratch_dir(prefix=f"fleetreap-soak{index:02d}-")
    with Fleet(workdir) as fleet:
        fleet.up([HostSpec(n, scenario=s, shape=shape) for n, s in scenarios.items()],
                 timeout=max(120, count))
        up_s = fleet.timings["up_s"]
        before = fleet.ground_truth()
        out = os.path.join(workdir, "soak.json")
        load_before = load()
        r = run_sampled([binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
                         "--forks", "64", "--json", out, "--quiet", "--color", "never", *FLAGS],
                        timeout=600)
        report = None
        if os.path.exists(out):
            with open(out) as f:
                report = json.load(f)
        after = fleet.ground_truth()
    problems = check(report, r["exit"], scenarios, before, after)
    if r["timed_out"]:
        problems.insert(0, "fleetreap HUNG: killed after 600 s")
    if r["exit"] < 0 or r["exit"] >= 64:
        problems.insert(0, f"fleetreap crashed or errored: exit {r['exit']}: {r['stderr_tail']}")
    mix = {}
    for s in scenarios.values():
        mix[s] = mix.get(s, 0) + 1
    return dict(r, run=index, up_s=up_s, load=f"{load_before} -> {load()}", mix=mix,
                problems=problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--shape", default="lean")
    parser.add_argument("--json-out")
    parser.add_argument("--fleetreap")
    args = parser.parse_args()
    binary = find_fleetreap(args.fleetreap, "soak_bench")
    print(f"fleetreap: {binary}\nmachine: {os.cpu_count()} cores, load {load()}; seed {args.seed}, "
          f"{args.runs} runs x {args.hosts} hosts ({args.shape}), a fresh fleet per run",
          flush=True)
    rng = random.Random(args.seed)
    rows = []
    for i in range(1, args.runs + 1):
        row = one_run(binary, i, rng, args.hosts, args.shape)
        rows.append(row)
        print(f"run {i:2d}: exit {row['exit']} wall {row['wall_s']:5.1f} s, CPU "
              f"{row['cpu_s'] * 1000 / args.hosts:.2f} ms/host, peak RSS {row['peak_vmrss_mib']:.1f} "
              f"MiB, fds peak {row['peak_fds']} last {row['last_fds']}, threads peak "
              f"{row['peak_threads']} last {row['last_threads']}, up {row['up_s']:.0f} s, load "
              f"{row['load']}: {'OK' if not row['problems'] else 'PROBLEMS'}", flush=True)
        for p in row["problems"][:10]:
            print(f"    {p}")
    failed = sum(1 for r in rows if r["problems"])
    rss = [r["peak_vmrss_mib"] for r in rows]
    print(f"\n{len(rows) - failed}/{len(rows)} runs passed every check; peak RSS "
          f"{min(rss):.1f}-{max(rss):.1f} MiB, peak fds {min(r['peak_fds'] for r in rows)}-"
          f"{max(r['peak_fds'] for r in rows)}, peak threads "
          f"{min(r['peak_threads'] for r in rows)}-{max(r['peak_threads'] for r in rows)}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"seed": args.seed, "hosts": args.hosts, "runs": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
