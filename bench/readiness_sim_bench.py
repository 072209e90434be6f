#!/usr/bin/python3
"""readiness_sim_bench: what the readiness checks cost an inspect on the
simulated fleet: the same hosts inspected with the default playbook's
checks and with `ready: off`, rounds interleaved, over real SSH. Prints,
per mode, the median wall time of the whole run, the median of the hosts'
"inspect" step (the report's timings: the one round trip that carries the
checks), the remote commands per host (from --log-dir) and the processes
the inspect started on one host (Fleet.pid_counter). Needs root and the
built sim tools. Prints numbers; asserts nothing.

  bench/readiness_sim_bench.py [--rounds 5] [--fleetreap build/fleetreap]

Hosts: a realistic clean host, an NVSwitch host whose fabric manager runs
(its comm is looked for among the host's processes) and one with an Xid in
its kernel log, each with its 100 bystanders.
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from simfleet import Fleet, HostSpec  # noqa: E402

RUN_LINE = re.compile(r"^\S+Z run [^(\n]*\(timeout ", re.M)
SPECS = [HostSpec("rb01", scenario="clean"), HostSpec("rb02", scenario="ready_nvswitch_ok"),
         HostSpec("rb03", scenario="ready_xid_79")]


def playbooks(tmp):
    with open(os.path.join(ROOT, "playbooks", "inspect.yaml")) as f:
        text = f.read()
    paths = {}
    for mode, extra in (("with checks", ""), ("ready: off", "\nready: off\n")):
        path = os.path.join(tmp, mode.replace(" ", "_").replace(":", "") + ".yaml")
        with open(path, "w") as f:
            f.write(text + extra)
        paths[mode] = path
    return paths


def run_once(binary, fleet, playbook, log_dir):
    argv = [binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
            "--identity", fleet.key, "--playbook", playbook, "--json", "-", "--quiet",
            "--color", "never", "--log-dir", log_dir]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - start
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    inspects = [t["duration_ms"] for h in report["hosts"] for t in h.get("timings", [])
                if t["step"] == "inspect"]
    return wall, inspects


def commands_per_host(log_dir):
    counts = []
    for path in glob.glob(os.path.join(log_dir, "**", "*.log"), recursive=True):
        with open(path, errors="replace") as f:
            counts.append(len(RUN_LINE.findall(f.read())))
    return statistics.median(counts) if counts else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fleetreap", default=None)
    args = parser.parse_args()
    binary = args.fleetreap or find_fleetreap()
    tmp = tempfile.mkdtemp(prefix="readiness-bench-")
    paths = playbooks(tmp)
    walls = {mode: [] for mode in paths}
    inspects = {mode: [] for mode in paths}
    procs = {mode: [] for mode in paths}
    commands = {}
    with Fleet(os.path.join(tmp, "fleet")) as fleet:
        fleet.up(SPECS)
        for r in range(args.rounds):
            for mode, playbook in paths.items():
                log_dir = os.path.join(tmp, f"log-{r}-{mode.replace(' ', '_')}")
                before = fleet.pid_counter("rb02")
                wall, steps = run_once(binary, fleet, playbook, log_dir)
                procs[mode].append(fleet.pid_counter("rb02") - before)
                walls[mode].append(wall)
                inspects[mode].extend(steps)
                commands[mode] = commands_per_host(log_dir)
    print(f"{len(SPECS)} realistic hosts, {args.rounds} rounds, playbook inspect.yaml")
    print(f"{'mode':<12} {'run wall':>9} {'inspect step':>13} {'commands/host':>14} "
          f"{'PIDs on rb02':>13}")
    for mode in paths:
        print(f"{mode:<12} {statistics.median(walls[mode]) * 1000:>7.0f}ms "
              f"{statistics.median(inspects[mode]):>11.0f}ms {commands[mode]:>14} "
              f"{statistics.median(procs[mode]):>13}")


if __name__ == "__main__":
    main()
