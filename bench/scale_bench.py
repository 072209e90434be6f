#!/usr/bin/python3
"""scale_bench: fleetreap over a large simulated fleet.

Brings up N hosts of the vLLM incident (default 1,000, simfleet's `lean`
shape: realistic workers, 10 bystanders), then:

  * the read-only run (`--dry-run`, playbooks/vllm.yaml) at each --forks
    value, on the same fleet: every host accounted for, each host's planned
    signals exactly the ground truth's GPU processes, nothing changed;
  * the full escalation at each --forks value, each on a fresh fleet (the
    first reuses the dry runs' fleet): every host reported clean, every host
    clean by the ground truth, no bystander or protected daemon lost.

Per run: wall time, controller CPU (wait4's rusage) in all and per host,
peak RSS, peak open descriptors and threads (sampled from /proc/PID/fd and
/proc/PID/status every 100 ms), and the hosts' sshd CPU (cutime + cstime of
the fleet's sshd listeners: sessions and every command they ran). Also the
fleet's own cost: `up` time, memory (MemTotal - MemAvailable before and
after) and processes. The machine's load average is printed with each run.

  bench/scale_bench.py [--hosts 1000] [--forks 64,256,1000] [--shape lean]
                       [--parts dry,full] [--extra 'FLAGS'] [--json-out FILE]
                       [--fleetreap build/fleetreap]

Needs root (the simulated fleet). The fleet needs about 25 PIDs per host
plus about 10 per host in flight: 1,000 hosts need pid_max above 32768
(simfleet refuses otherwise). Prints numbers; exits 1 when a check fails.
"""

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from controller_sample import load, memory_used_mib, run_sampled, sshd_children_cpu  # noqa: E402
from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

PLAYBOOK = os.path.join(ROOT, "playbooks", "vllm.yaml")


def fleetreap_argv(binary, fleet, forks, out, dry, extra):
    argv = [binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
            "--playbook", PLAYBOOK, "--forks", str(forks), "--json", out,
            "--quiet", "--color", "never"]
    return argv + (["--dry-run"] if dry else []) + extra


def measured_run(binary, fleet, forks, dry, extra):
    out = os.path.join(fleet.workdir, "scale.json")
    sshd_before = sshd_children_cpu(fleet.workdir)
    load_before = load()
    r = run_sampled(fleetreap_argv(binary, fleet, forks, out, dry, extra),
                    timeout=1800)
    time.sleep(1)   # the last sessions' sshd children exit and are reaped
    r["sshd_cpu_s"] = sshd_children_cpu(fleet.workdir) - sshd_before
    r["load"] = f"{load_before} -> {load()}"
    r["report"] = None
    if os.path.exists(out):
        with open(out) as f:
            r["report"] = json.load(f)
        os.remove(out)
    return r


def accounted(report, names):
    """Problems with 'every host accounted for' (a list of strings)."""
    if report is None:
        return ["no JSON report"]
    got = [h["name"] for h in report["hosts"]] + list(report["not_started"])
    problems = []
    if sorted(got) != sorted(names):
        problems.append(f"hosts in report {len(got)} != {len(names)}")
    if report["not_started"]:
        problems.append(f"not started: {len(report['not_started'])}")
    return problems


def check_dry(report, before, after, names):
    problems = accounted(report, names)
    for h in (report or {}).get("hosts", []):
        truth = {p["pid"] for p in before[h["name"]]["gpu_processes"]}
        planned = {x["pid"] for x in h.get("holders", [])
                   if x["fate"] in ("would_term", "would_kill")}
        if h["status"] in ("unreachable", "failed"):
            problems.append(f"{h['name']}: {h['status']} {h['error_kind']}: "
                            f"{h['error_message']}")
        elif planned != truth:
            problems.append(f"{h['name']}: planned {sorted(planned)} != truth {sorted(truth)}")
    for name in names:
        if {p["pid"] for p in after[name]["gpu_processes"]} != \
                {p["pid"] for p in before[name]["gpu_processes"]}:
            problems.append(f"{name}: the dry run changed the host")
    return problems


def check_full(report, code, before, after, names):
    problems = accounted(report, names)
    if code != 0:
        problems.append(f"exit {code}")
    for h in (report or {}).get("hosts", []):
        if h["status"] != "clean":
            problems.append(f"{h['name']}: {h['status']} {h['error_kind']}: "
                            f"{h['error_message']}")
    for name in names:
        t = after[name]
        if not t["clean"]:
            problems.append(f"{name}: not clean by the ground truth")
        if t["bystanders"] != before[name]["bystanders"] or t["protected_missing"]:
            problems.append(f"{name}: a bystander or protected daemon is gone")
    return problems


def describe(label, forks, r, count, problems):
    statuses = {}
    for h in (r["report"] or {}).get("hosts", []):
        statuses[h["status"]] = statuses.get(h["status"], 0) + 1
    print(f"  {label:<10} forks={forks:<5} exit {r['exit']} {statuses} wall {r['wall_s']:.1f} s, "
          f"controller CPU {r['cpu_s']:.2f} s (user {r['user_s']:.2f}, sys {r['sys_s']:.2f}) = "
          f"{r['cpu_s'] * 1000 / count:.2f} ms/host, peak RSS {r['peak_vmrss_mib']:.1f} MiB, "
          f"peak fds {r['peak_fds']}, peak threads {r['peak_threads']}, "
          f"sshd CPU {r['sshd_cpu_s'] * 1000 / count:.1f} ms/host, load {r['load']}; "
          f"{'OK' if not problems else f'{len(problems)} PROBLEMS'}", flush=True)
    for p in problems[:10]:
        print(f"    {p}")


def bring_up(count, shape, runs):
    workdir = scratch_dir(prefix=f"fleetreap-scale{count}-")
    fleet = Fleet(workdir)
    used_before = memory_used_mib()
    fleet.up([HostSpec(f"gpu{i:04d}", scenario="vllm_incident", shape=shape)
              for i in range(1, count + 1)], timeout=max(120, count))
    time.sleep(2)
    used_after = memory_used_mib()
    t0 = time.monotonic()
    truth = fleet.ground_truth()
    truth_s = time.monotonic() - t0
    procs = sum(len(t["gpu_processes"]) + len(t["protected"]) + t["bystanders"]
                for t in truth.values())
    row = {"up_s": fleet.timings["up_s"], "mem_before_mib": used_before,
           "mem_after_mib": used_after, "truth_s": truth_s, "processes": procs}
    runs.append({"fleet": row})
    print(f"\n{count} hosts ({shape}) up in {row['up_s']:.1f} s; memory in use "
          f"{used_before:.0f} -> {used_after:.0f} MiB ({(used_after - used_before) / count:.1f} "
          f"MiB/host); workers+daemons+bystanders {procs}; ground truth {truth_s:.1f} s; "
          f"load {load()}", flush=True)
    return fleet, truth


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--forks", default="64,256,1000")
    parser.add_argument("--shape", default="lean")
    parser.add_argument("--parts", default="dry,full")
    parser.add_argument("--json-out")
    parser.add_argument("--extra", default="",
                        help="more fleetreap flags, space-separated (e.g. '--connect-timeout 60s')")
    parser.add_argument("--fleetreap")
    args = parser.parse_args()
    binary = find_fleetreap(args.fleetreap, "scale_bench")
    forks = [int(x) for x in args.forks.split(",")]
    parts = set(args.parts.split(","))
    extra = args.extra.split()
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = f.read().strip()
    print(f"fleetreap: {binary}\nmachine: {os.cpu_count()} cores, pid_max {pid_max}, "
          f"load {load()}")
    names = [f"gpu{i:04d}" for i in range(1, args.hosts + 1)]
    runs, failures = [], 0
    escalations = sorted(forks, reverse=True) if "full" in parts else []
    fleet, before = bring_up(args.hosts, args.shape, runs)
    try:
        if "dry" in parts:
            for n in forks:
                r = measured_run(binary, fleet, n, True, extra)
                problems = check_dry(r["report"], before, fleet.ground_truth(), names)
                describe("dry-run", n, r, args.hosts, problems)
                failures += bool(problems) or r["timed_out"]
                runs.append(dict(r, part="dry", forks=n, report=None, problems=problems))
        for i, n in enumerate(escalations):
            if i > 0:
                fleet.down()
                fleet, before = bring_up(args.hosts, args.shape, runs)
            r = measured_run(binary, fleet, n, False, extra)
            t0 = time.monotonic()
            after = fleet.ground_truth()
            problems = check_full(r["report"], r["exit"], before, after, names)
            describe("escalation", n, r, args.hosts, problems)
            print(f"    ground truth after: {time.monotonic() - t0:.1f} s")
            failures += bool(problems) or r["timed_out"]
            runs.append(dict(r, part="full", forks=n, report=None, problems=problems))
    finally:
        fleet.down()
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"hosts": args.hosts, "shape": args.shape, "runs": runs}, f, indent=1)
    print(f"\n{'every check passed' if not failures else f'{failures} runs FAILED a check'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
