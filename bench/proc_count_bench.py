#!/usr/bin/python3
"""proc_count_bench: how many processes fleetreap's remote steps start on a
host, and how much of the host's CPU each step takes.

Brings up one simulated host of a scenario (default: `clean` and
`vllm_incident`), reads the host PID namespace's counter
/proc/sys/kernel/ns_last_pid from inside the host before and after one
fleetreap run, and subtracts the probe's own cost (calibrated by probing
twice back to back). Every PID the host's namespace hands out is counted:
sshd's per-connection and per-session processes, the login shell, `timeout`,
every `sh`, `od`, `tr`, `cut`, `sleep`, `fuser`, `nvidia-smi` ... (threads
would count too; nothing here starts any).

Attribution per step: fleetreap runs each step as one remote command, so the
bench runs cumulative playbooks, each on a fresh host: the dry run (the
/dev/shm listing and the inspect, one round trip), then [inspect] +
stop_units (when the playbook has units), + term + kill ("signal"),
+ rescan, + clean_shm, + verify; a step's count is the difference between
two consecutive medians. The first row also holds the SSH connection: the
"connect" row is what sshd starts for one OpenSSH master connection
(`ssh -M -N`, no session, fleetreap's curve25519 key exchange) on the same
host, shown apart and subtracted. Remote commands per run are counted in
fleetreap's --log-dir log. The host CPU column is the same difference of
the host's cgroup usage_usec (sshd, the scripts, nvidia-smi and systemctl,
the workers' exit); it grows with the machine's load, the counts do not.
The programs each script starts are also a checked budget:
tests/unit/remote/process_budget_test.cc.

  bench/proc_count_bench.py [--scenarios clean,vllm_incident] [--runs 3]
                            [--playbook FILE] [--fleetreap build/fleetreap]

Playbooks: playbooks/default.yaml for `clean` (and any other scenario),
playbooks/vllm.yaml for `vllm_incident`, unless --playbook is given. Uses
Fleet.pid_counter(name) from tests/sim/simfleet.py when it exists, else
nsenter into the host's init. Needs root. Prints numbers; asserts nothing.
"""

import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from simfleet import Fleet, HostSpec  # noqa: E402

ORDER = ["inspect", "stop_units", "term", "kill", "rescan", "clean_shm", "verify"]
STAGES = [  # (row label, steps this stage adds)
    ("inspect", ["inspect"]),
    ("stop_units", ["stop_units"]),
    ("signal (term+kill)", ["term", "kill"]),
    ("rescan", ["rescan"]),
    ("clean_shm", ["clean_shm"]),
    ("verify", ["verify"]),
]
RUN_LINE = re.compile(r"^\S+Z run [^(\n]*\(timeout ", re.M)


def counter(fleet, name):
    """The host PID namespace's ns_last_pid, read from inside the host."""
    probe = getattr(fleet, "pid_counter", None)
    if probe is not None:
        return int(probe(name))
    host = fleet.hosts[name]
    out = subprocess.run(
        ["nsenter", "-t", str(host.init_pid), "-p", "-m", "--",
         "cat", "/proc/sys/kernel/ns_last_pid"],   # one read(): sysctl files give
                                                   # nothing at offset > 0
        capture_output=True, text=True, timeout=10, check=True)
    return int(out.stdout)


def calibrate(fleet, name):
    """PIDs one probe takes (two probes back to back), and idle noise."""
    c0 = counter(fleet, name)
    c1 = counter(fleet, name)
    cost = c1 - c0
    time.sleep(0.3)
    c2 = counter(fleet, name)
    return cost, c2 - c1 - cost


def read_playbook(path):
    """The playbook's text as a list of lines, and its step list."""
    with open(path) as f:
        text = f.read()
    return text


def write_playbook(base_text, steps, path):
    """base_text with its 'steps:' replaced by 'steps'."""
    lines, out, skipping = base_text.splitlines(), [], False
    for line in lines:
        if skipping:
            if line.startswith((" ", "\t", "-")) or not line.strip():
                continue
            skipping = False
        if line.startswith("steps:"):
            out.append(f"steps: [{', '.join(steps)}]")
            skipping = not line.split(":", 1)[1].strip()
            continue
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def base_steps(text):
    m = re.search(r"^steps:\s*\[([^\]]*)\]", text, re.M)
    if m:
        return [s.strip() for s in m.group(1).split(",") if s.strip()]
    m = re.search(r"^steps:\s*\n((?:\s+-.*\n|\s*#.*\n)+)", text, re.M)
    return re.findall(r"^\s+-\s*(\w+)", m.group(1), re.M) if m else ORDER


def fresh_host(scenario, base):
    workdir = tempfile.mkdtemp(prefix="pc-", dir=base)
    fleet = Fleet(workdir)
    fleet.up([HostSpec("gpu01", scenario=scenario)])
    addr = fleet.hosts["gpu01"].address
    if not addr.startswith("127.0.") or addr.startswith("127.0.0."):
        raise SystemExit(f"proc_count_bench: refusing address {addr}")
    return fleet, workdir


def host_cpu(fleet, name):
    """CPU (ms) the host's cgroup used so far (usage_usec: sshd, the scripts,
    nvidia-smi, the workers' exit); None without cgroups."""
    cgroup = fleet.hosts[name].cgroup
    if cgroup is None:
        return None
    try:
        with open(os.path.join(cgroup, "cpu.stat")) as f:
            return int(f.read().split()[1]) / 1000
    except (OSError, ValueError, IndexError):
        return None


def count_fleetreap(binary, scenario, playbook, base, extra=()):
    """(PIDs started, remote commands, probe cost, idle noise, exit, host CPU
    ms or None) for one run."""
    fleet, workdir = fresh_host(scenario, base)
    try:
        cost, noise = calibrate(fleet, "gpu01")
        logdir = os.path.join(workdir, "logs")
        before = counter(fleet, "gpu01")
        cpu0 = host_cpu(fleet, "gpu01")
        proc = subprocess.run(
            [binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
             "--playbook", playbook, "--log-dir", logdir, "--quiet", "--color", "never",
             *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=300)
        after = counter(fleet, "gpu01")
        cpu1 = host_cpu(fleet, "gpu01")
        cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
        commands = 0
        for log in glob.glob(os.path.join(logdir, "*.log")):
            with open(log, errors="replace") as f:
                commands += len(RUN_LINE.findall(f.read()))
        return after - before - cost, commands, cost, noise, proc.returncode, cpu
    finally:
        try:
            fleet.down()
        except OSError:   # another fleet's bring-up reclaimed these files
            pass
        Fleet.cleanup(workdir)


def count_connect(scenario, base):
    """(PIDs, host CPU ms or None) sshd starts and spends for one OpenSSH
    master connection (no session)."""
    fleet, workdir = fresh_host(scenario, base)
    master = None
    try:
        cost, _ = calibrate(fleet, "gpu01")
        sock = os.path.join(workdir, "ctl.sock")
        argv = fleet.ssh_argv("gpu01", "")[:-1]   # no command
        # fleetreap's key exchange (libssh: curve25519-sha256).
        argv[1:1] = ["-F", "/dev/null", "-M", "-N", "-S", sock, "-o", "ControlPersist=no",
                     "-o", "KexAlgorithms=curve25519-sha256"]
        before = counter(fleet, "gpu01")
        cpu0 = host_cpu(fleet, "gpu01")
        master = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not os.path.exists(sock) and time.monotonic() < deadline \
                and master.poll() is None:
            time.sleep(0.01)
        time.sleep(0.3)   # the post-auth processes are up once the socket is
        after = counter(fleet, "gpu01")
        cpu1 = host_cpu(fleet, "gpu01")
        if not os.path.exists(sock):
            return None
        return after - before - cost, None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    finally:
        if master is not None and master.poll() is None:
            master.terminate()   # our own ssh client, by its PID
            try:
                master.wait(timeout=5)
            except subprocess.TimeoutExpired:
                master.kill()
                master.wait()
        try:
            fleet.down()
        except OSError:   # another fleet's bring-up reclaimed these files
            pass
        Fleet.cleanup(workdir)


def median_cpu(values):
    """The median of the CPU figures that were read (ms), NaN when none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="clean,vllm_incident")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--playbook", help="base playbook (default: per scenario)")
    parser.add_argument("--fleetreap")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("proc_count_bench: needs root (simulated fleet)")
    binary = find_fleetreap(args.fleetreap, "proc_count_bench")
    started = time.monotonic()
    print(f"fleetreap: {binary}; probe: "
          f"{'Fleet.pid_counter' if hasattr(Fleet, 'pid_counter') else 'nsenter + cat'}",
          flush=True)
    base = tempfile.mkdtemp(prefix="proc-count-bench-")
    try:
        for scenario in args.scenarios.split(","):
            t0 = time.monotonic()
            playbook = args.playbook or os.path.join(
                ROOT, "playbooks", "vllm.yaml" if scenario.startswith("vllm") else "default.yaml")
            text = read_playbook(playbook)
            have = base_steps(text)
            print(f"\n{scenario}: one host, playbook {os.path.relpath(playbook, ROOT)} "
                  f"(steps {', '.join(have)}), {args.runs} run(s) per row", flush=True)
            connect = [count_connect(scenario, base) for _ in range(args.runs)]
            connect = [c for c in connect if c is not None]
            conn = statistics.median(c[0] for c in connect) if connect else 0
            conn_cpu = median_cpu([c[1] for c in connect])
            dry = [count_fleetreap(binary, scenario, playbook, base, ["--dry-run"])
                   for _ in range(args.runs)]
            # The first row is the dry run (the /dev/shm listing and the
            # inspect in one round trip): a playbook of the inspect alone is
            # refused, and the later rows build on the inspect.
            pids = statistics.median(r[0] for r in dry)
            cmds = statistics.median(r[1] for r in dry)
            cpu = median_cpu([r[5] for r in dry])
            rows = [("inspect (dry run)", pids, cmds, cpu, [r[0] for r in dry], dry)]
            steps, prev = ["inspect"], (pids, cmds, cpu)
            for label, added in STAGES[1:]:
                added = [s for s in added if s in have]
                if not added:
                    continue
                steps += added
                pb = os.path.join(base, f"{scenario}-{len(steps)}.yaml")
                write_playbook(text, steps, pb)
                runs = [count_fleetreap(binary, scenario, pb, base) for _ in range(args.runs)]
                pids = statistics.median(r[0] for r in runs)
                cmds = statistics.median(r[1] for r in runs)
                cpu = median_cpu([r[5] for r in runs])
                rows.append((label, pids - prev[0], cmds - prev[1], cpu - prev[2],
                             [r[0] for r in runs], runs))
                prev = (pids, cmds, cpu)
            print(f"  {'step':<20} {'processes':>9} {'commands':>8} {'host CPU':>9}   "
                  f"cumulative runs (processes)  [probe cost, idle noise, exit]")
            print(f"  {'connect (sshd)':<20} {conn:>9.0f} {'':>8} {conn_cpu:>6.1f} ms   "
                  f"OpenSSH master connection: {[c[0] for c in connect]}")
            for i, (label, pids, cmds, cpu, per_run, runs) in enumerate(rows):
                shown = pids - conn if i == 0 else pids
                shown_cpu = cpu - conn_cpu if i == 0 else cpu
                meta = sorted({(r[2], r[3], r[4]) for r in runs})
                print(f"  {label:<20} {shown:>9.0f} {cmds:>8.0f} {shown_cpu:>6.1f} ms   "
                      f"{per_run}  {meta}")
            print(f"  {'dry run (whole)':<20} {rows[0][1]:>9.0f} {rows[0][2]:>8.0f} "
                  f"{rows[0][3]:>6.1f} ms   (connect included)")
            total = prev[0]
            print(f"  {'total':<20} {total:>9.0f} {prev[1]:>8.0f} {prev[2]:>6.1f} ms   "
                  f"({time.monotonic() - t0:.0f} s for this scenario)", flush=True)
    finally:
        for d in glob.glob(os.path.join(base, "pc-*")):
            Fleet.cleanup(d)
        shutil.rmtree(base, ignore_errors=True)
    print(f"\ntotal time {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
