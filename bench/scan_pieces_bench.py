#!/usr/bin/python3
"""scan_pieces_bench: where a simulated host's CPU goes inside one inspect.

Brings up one simulated host (default: `vllm_incident`, the simple shape
that peers_bench's part b uses), runs `fleetreap --dry-run` once with
--log-dir, and takes from its log the inspect's round trip (the /dev/shm
listing and the full scan), exactly as fleetreap sent it. Then, over one
OpenSSH connection (ControlMaster, fleetreap's curve25519 key exchange), it
replays that command --runs times as it is and once per piece with the piece
left out, rounds interleaved, and reads the host's cgroup usage_usec around
each: a piece's cost is the whole's median less the median without it.

Pieces (left out by a shell function defined before the scan's body, or by
naming `true` instead of the tool; the replayed command changes nothing on
the host either way):
  walk       the holder walk: every thread's fds and every mapping (one perl,
             pwk; on a host without perl fds and mps: find, stat, grep, sort),
             and with it the kernel log's read where perl does it
  details    the holders' details (one perl, pdt; else dump's grep and find)
  nvidia-smi the GPU query and the compute-apps query (the fake nvidia-smi)
  systemctl  the show of the holders' and the playbook's units (the fake systemctl)
  readiness  the driver's GPU list, NVSwitch nodes, fabric manager, kernel log
Also printed: a new connection (`ssh ... true` without the master), one more
channel (`true` over the master), and the rest of the inspect (the shell,
the session and clock, the /dev/shm listing, the pid files).

  bench/scan_pieces_bench.py [--fleetreap build/fleetreap] [--runs 10]
                             [--scenario vllm_incident] [--shape simple]

Last, one real run of the scenario (the only step that changes the host)
with the host's cgroup read every millisecond: its CPU charged to the
connection and to each round trip (inspect, stop_units+term, rescan...), from
the --log-dir log's times.

Needs root (the simulated fleet) and cgroups. Prints numbers; asserts nothing.
"""

import argparse
import bisect
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))

from bench_binary import find_fleetreap  # noqa: E402
from simfleet import Fleet, HostSpec  # noqa: E402

# Where the scan's body starts, as the log spells it in the command's
# here-document.
BODY = "z 'scan 1'"
PIECES = {  # name -> (how it is left out: "fn" text before the body, or a tool to replace)
    "walk": ("fn", "pwk() { case $1 in *f*) HP=; GP=; FR=; FE=;; esac; MR=; KY=; }\n"
                   "fds() { HP=; GP=; FR=; FE=; }\nmps() { MR=; }"),
    "details": ("fn", "pdt() { NS=; }\ndump() { :; }"),
    "nvidia-smi": ("tool", "nvidia-smi"),
    "systemctl": ("tool", "systemctl"),
    "readiness": ("fn", "rdy() { :; }"),
}


def first_command(log):
    """The first remote command in a --log-dir log (its "  $ " lines)."""
    lines, inside = [], False
    with open(log, errors="replace") as f:
        for line in f:
            if not inside:
                inside = re.search(r"Z run .*\(timeout [0-9]+ ms\):$", line) is not None
                continue
            if not line.startswith("  $ "):
                break
            lines.append(line[4:].rstrip("\n"))
    return "\n".join(lines)


def variant(command, piece):
    how, text = PIECES[piece]
    if how == "tool":
        return command.replace(text, "true")
    at = command.index(BODY)
    return command[:at] + text + "\n" + command[at:]


def host_cpu(fleet):
    with open(os.path.join(fleet.hosts["gpu01"].cgroup, "cpu.stat")) as f:
        return int(f.read().split()[1]) / 1000


def measure(fleet, argv):
    c0 = host_cpu(fleet)
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    time.sleep(0.05)  # the session's processes end
    return host_cpu(fleet) - c0


def log_events(log):
    """(epoch seconds, what) for each timed line of a --log-dir log: the
    connection, each round trip's start ("run STEP: ...") and the close."""
    events = []
    with open(log, errors="replace") as f:
        for line in f:
            m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z (connect |run [^:]*:|closed)",
                         line)
            if m:
                when = datetime.datetime.fromisoformat(m.group(1)).replace(
                    tzinfo=datetime.timezone.utc).timestamp()
                events.append((when, m.group(2).rstrip(": ").replace("run ", "")))
    return events


def whole_run_by_step(fleet, binary, playbook, workdir):
    """One real run (it changes the host: the last thing this bench does),
    the host's cgroup read every millisecond; each round trip is charged the
    CPU from its start to the next one's (the connection's up to the first)."""
    logdir = os.path.join(workdir, "logs-run")
    samples, done = [], threading.Event()

    def sample():
        while not done.is_set():
            samples.append((time.time(), host_cpu(fleet)))
            time.sleep(0.001)

    sampler = threading.Thread(target=sample)
    sampler.start()
    subprocess.run([binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
                    "--playbook", playbook, "--log-dir", logdir, "--quiet"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    time.sleep(0.2)  # the session's and the signalled processes' last CPU
    done.set()
    sampler.join()
    events = log_events(os.path.join(logdir, "gpu01.log"))
    if not events or not samples:
        print("whole run: no log or no samples")
        return
    times = [t for t, _ in samples]

    def at(t):
        return samples[min(bisect.bisect_left(times, t), len(samples) - 1)][1]

    ends = [t for t, _ in events[1:]] + [samples[-1][0]]
    parts = [(what, at(end) - at(start)) for (start, what), end in zip(events, ends)
             if what != "closed"]
    total = samples[-1][1] - samples[0][1]
    print("a whole run, host CPU by round trip (one run): " +
          ", ".join(f"{what} {ms:.1f} ms" for what, ms in parts) + f"; total {total:.1f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleetreap")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--scenario", default="vllm_incident")
    parser.add_argument("--shape", default="simple")
    parser.add_argument("--playbook", default=os.path.join(ROOT, "playbooks", "vllm.yaml"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("scan_pieces_bench: needs root (simulated fleet)")
    binary = find_fleetreap(args.fleetreap, "scan_pieces_bench")
    workdir = tempfile.mkdtemp(prefix="scan-pieces-")
    fleet = Fleet(workdir)
    master = None
    try:
        fleet.up([HostSpec("gpu01", scenario=args.scenario, shape=args.shape)])
        if fleet.hosts["gpu01"].cgroup is None:
            sys.exit("scan_pieces_bench: no cgroups here")
        logdir = os.path.join(workdir, "logs")
        subprocess.run([binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
                        "--playbook", args.playbook, "--dry-run", "--log-dir", logdir,
                        "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120)
        command = first_command(os.path.join(logdir, "gpu01.log"))
        if BODY not in command:
            sys.exit("scan_pieces_bench: no scan in the log's first command")
        base = fleet.ssh_argv("gpu01", "true")[:-1]
        base[1:1] = ["-F", "/dev/null", "-o", "KexAlgorithms=curve25519-sha256"]
        sock = os.path.join(workdir, "ctl.sock")
        master = subprocess.Popen(base[:1] + ["-M", "-N", "-S", sock] + base[1:],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        while not os.path.exists(sock) and master.poll() is None:
            time.sleep(0.01)
        over = base[:1] + ["-S", sock] + base[1:]
        cases = {"connection (ssh true)": base + ["true"], "channel (true)": over + ["true"],
                 "inspect": over + [command]}
        for piece in PIECES:
            cases["inspect without " + piece] = over + [variant(command, piece)]
        got = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, argv in cases.items():
                got[name].append(measure(fleet, argv))
        med = {k: statistics.median(v) for k, v in got.items()}
        print(f"{args.scenario} ({args.shape}), {args.runs} runs each, load "
              f"{os.getloadavg()[0]:.1f}; host CPU per run, median (min-max):")
        for name, v in got.items():
            print(f"  {name:<32} {med[name]:6.1f} ms ({min(v):.1f}-{max(v):.1f})")
        whole = med["inspect"] - med["channel (true)"]
        print(f"inspect's script (less the channel): {whole:.1f} ms; by piece:")
        rest = whole
        for piece in PIECES:
            cost = med["inspect"] - med["inspect without " + piece]
            rest -= cost
            print(f"  {piece:<12} {cost:6.1f} ms")
        print(f"  {'the rest':<12} {rest:6.1f} ms (sh, session, clock, /dev/shm listing, "
              f"pid files)")
        whole_run_by_step(fleet, binary, args.playbook, workdir)
    finally:
        if master is not None and master.poll() is None:
            master.terminate()  # our own ssh client, by its PID
            master.wait()
        fleet.down()
        Fleet.cleanup(workdir)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
