#!/usr/bin/python3
"""fleet_bench: what fleetreap itself costs on a verify-only run.

Brings up a simulated fleet of N clean hosts (tests/sim), runs
'fleetreap --playbook playbooks/inspect.yaml' over it a few times, and prints
per run: wall time, the controller's CPU (user + system, from wait4's rusage
of the fleetreap process), CPU per host (median and minimum of the runs: on a
loaded machine the minimum is the steadier figure; for an exact count run one
fleetreap under valgrind --tool=callgrind), peak RSS, and for comparison the CPU
the hosts' sshd processes spent serving the run (cutime + cstime of each
host's sshd listener, which has reaped its session children).

  bench/fleet_bench.py [--hosts 50,200] [--forks 64,200] [--runs 3]
                       [--fleetreap build-x/fleetreap]

Needs root (the simulated fleet). Prints numbers; asserts nothing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from controller_sample import sshd_children_cpu  # noqa: E402
from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

def one_run(binary, fleet, forks):
    out = os.path.join(fleet.workdir, "bench.json")
    argv = [binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
            "--playbook", os.path.join(ROOT, "playbooks", "inspect.yaml"),
            "--forks", str(forks), "--json", out, "--quiet", "--color", "never"]
    sshd_before = sshd_children_cpu(fleet.workdir)
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    sshd_after = sshd_children_cpu(fleet.workdir)
    with open(out) as f:
        report = json.load(f)
    statuses = {}
    for h in report["hosts"]:
        statuses[h["status"]] = statuses.get(h["status"], 0) + 1
    connect_ms = [t["duration_ms"] for h in report["hosts"] for t in h["timings"]
                  if t["step"] == "connect"]
    return {
        "exit": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "maxrss_mib": usage.ru_maxrss / 1024.0,
        "sshd_cpu_s": sshd_after - sshd_before,
        "statuses": statuses,
        "connect_median_ms": statistics.median(connect_ms) if connect_ms else 0,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="50,200")
    parser.add_argument("--forks", default="64,200")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fleetreap")
    args = parser.parse_args()
    binary = find_fleetreap(args.fleetreap, "fleet_bench")
    print(f"fleetreap: {binary}")
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for count in [int(x) for x in args.hosts.split(",")]:
        workdir = scratch_dir(prefix=f"fleetreap-bench{count}-")
        with Fleet(workdir) as fleet:
            fleet.up([HostSpec(f"gpu{i:03d}") for i in range(1, count + 1)], timeout=300)
            print(f"\n{count} hosts up in {fleet.timings['up_s']:.1f} s")
            for forks in [int(x) for x in args.forks.split(",")]:
                rows = [one_run(binary, fleet, forks) for _ in range(args.runs)]
                for i, r in enumerate(rows, 1):
                    print(f"  forks={forks:<4} run {i}: exit {r['exit']} {r['statuses']} "
                          f"wall {r['wall_s']:.2f} s, controller CPU {r['cpu_s']*1000:.0f} ms "
                          f"(user {r['user_s']*1000:.0f}, sys {r['sys_s']*1000:.0f}) = "
                          f"{r['cpu_s']*1000/count:.2f} ms/host, peak RSS "
                          f"{r['maxrss_mib']:.1f} MiB, sshd CPU {r['sshd_cpu_s']*1000:.0f} ms "
                          f"({r['sshd_cpu_s']*1000/count:.1f} ms/host), "
                          f"median connect {r['connect_median_ms']} ms")
                med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
                low = min(r["cpu_s"] for r in rows)
                print(f"  forks={forks:<4} median: wall {med('wall_s'):.2f} s, controller "
                      f"{med('cpu_s')*1000/count:.2f} ms CPU/host (min "
                      f"{low*1000/count:.2f}), peak RSS "
                      f"{med('maxrss_mib'):.1f} MiB, sshd {med('sshd_cpu_s')*1000/count:.1f} "
                      f"ms CPU/host")


if __name__ == "__main__":
    main()
