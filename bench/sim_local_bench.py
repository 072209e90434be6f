#!/usr/bin/env python3
"""Simulated-fleet twin of bench/real_gpu_bench.py: fleetreap --local's time
to verified clean, inside a simulated host, for orphans that exit on SIGTERM
(scenario "orphans", the default playbook) and for orphans that ignore it
(scenario "ignore_term", the default playbook with term_grace TERM_GRACE),
with each run's step timings. The time is taken inside the host around the
fleetreap process, so it includes the binary's own start and exit; what the
steps do not cover is the rest (the re-scan's settle wait among it).
Each run gets a fresh host. Needs root and the built sim tools.
Usage: sim_local_bench.py [--fleetreap BIN]... [--runs 3] [--term-grace 2s]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

# Runs fleetreap inside the host and prints its report, then "ms N" (the
# fleetreap process's wall time, read from the host's clock).
COMMAND = ('a=$(date +%s%N); {bin} --local --json - --quiet --color never {args}; '
           'b=$(date +%s%N); echo; echo "ms $(( (b - a) / 1000000 ))"')


def run_one(fleet, host, binary, args):
    proc = fleet.exec(host, COMMAND.format(bin=binary, args=args), timeout=120)
    out = proc.stdout
    report = json.loads(out[out.index("{"):out.rindex("}") + 1])
    wall = int(out.rsplit("ms ", 1)[1])
    h = report["hosts"][0]
    steps = {t["step"]: t["duration_ms"] for t in h["timings"]}
    return wall, h["status"], steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fleetreap", action="append",
                        help="a binary (repeat to compare: their runs alternate)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--term-grace", default="2s")
    args = parser.parse_args()
    binaries = [os.path.abspath(b) for b in
                (args.fleetreap or [os.path.join(ROOT, "build", "fleetreap")])]
    tmp = scratch_dir(prefix="simlocalbench-")
    with open(os.path.join(ROOT, "playbooks", "default.yaml")) as f:
        text = f.read().replace("term_grace: 10s", f"term_grace: {args.term_grace}")
    grace = os.path.join(tmp, "grace.yaml")
    with open(grace, "w") as f:
        f.write(text)
    cases = (("orphans", "", "TERM-responsive orphans (8), default playbook"),
             ("ignore_term", f"--playbook {grace}",
              f"TERM-ignoring orphans (8), term_grace {args.term_grace}"))
    runs = [(scenario, extra, label, i, b) for scenario, extra, label in cases
            for i in range(args.runs) for b in range(len(binaries))]
    specs = [HostSpec(f"{s.replace('_', '')}{i}x{b}", scenario=s, bystanders=20)
             for s, _, _, i, b in runs]
    with Fleet(os.path.join(tmp, "fleet")) as fleet:
        fleet.up(specs)
        for scenario, extra, label, i, b in runs:
            wall, status, steps = run_one(fleet, f"{scenario.replace('_', '')}{i}x{b}",
                                          binaries[b], extra)
            inside = sum(steps.values())
            print(f"{binaries[b]}: {label}: {wall} ms ({status}; steps ms: "
                  + ", ".join(f"{k} {v}" for k, v in steps.items())
                  + f"; outside the steps {wall - inside})", flush=True)


if __name__ == "__main__":
    main()
