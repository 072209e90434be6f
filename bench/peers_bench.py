#!/usr/bin/python3
"""peers_bench: fleetreap against pdsh, clush (ClusterShell) and pssh
(parallel-ssh) on the simulated fleet, in one run.

Every tool runs at the same fan-out (--fanout, default 64: fleetreap's
--forks default), runs alternate between tools (the order rotates every
round), and each figure is the median of --runs runs (default 3). Peers use
the plain OpenSSH client with the fleet's generated key and known_hosts
(strict host-key checking, BatchMode, no ~/.ssh/config).

  a. dry run, N clean hosts (default 50): `fleetreap --dry-run` against each
     peer running `nvidia-smi --query-gpu=index,memory.used --format=csv,noheader`
     on every host. Wall time (median), controller CPU per host (wait4
     rusage: the tool plus the ssh children it reaped), hosts answered.
  b. full escalation, M `vllm_incident` hosts (default 200, simfleet's "simple"
     shape: see --incident-shape), a fresh fleet
     before every run: fleetreap with playbooks/vllm.yaml against each peer
     running the field's one-liner `fuser -k /dev/nvidia*` (-k sends SIGKILL
     by default; /work/shared/research/gpu-nodes-in-practice.md, section 3.5
     "Workarounds users actually use"). After each run every host is checked
     against the fleet's ground truth (tests/sim/ground_truth.py): right =
     the host is clean by the truth (no unprotected GPU holder, GPUs at 0 MiB,
     every protected daemon alive with its original PID). Also printed: the
     hosts' own CPU per host (the sum of their cgroups' usage_usec over the
     run: sshd, the scripts, nvidia-smi), fleetreap's per-step medians (its
     report's timings, what -v prints) and the wall ratio to each peer,
     run by run (the target: fleetreap at most 0.5x pdsh's one-liner).
     With --floor, also the floor (FLOOR below: the least a correct cleanup
     runs on a host, one command through pdsh with curve25519) and what
     0.5x of pdsh leaves a host's CPU against the floor's.
  c. one `slow_exit` host (workers exit 1.5 s after SIGTERM): fleetreap's wall
     time and host time, and the TERM/KILL counts from its JSON report.
  d. controller CPU per host: fleetreap's user+sys (wait4) on the dry run of
     part a, per host, against the OpenSSH client's: `ssh` running the same
     nvidia-smi query once per host, one after another, CPU of the ssh
     processes summed over the hosts / hosts.

  bench/peers_bench.py [--runs 3] [--fanout 64] [--clean-hosts 50]
                       [--incident-hosts 200] [--parts abcd] [--peers pdsh,clush,pssh]
                       [--floor] [--fleetreap build/fleetreap] [--quick]

--quick: 2 clean hosts, 3 incident hosts, 1 run of everything; a peer that is
not installed is skipped instead of installed. Without --quick, missing peers
are installed with apt-get (Debian packages pdsh, clustershell, pssh; the
pssh binary is `parallel-ssh`). Needs root (the simulated fleet, apt-get).
Prints numbers; asserts nothing. Fleets are always taken down, and every tool
is only ever pointed at the simulated fleet's 127.0.N.X addresses.
"""

import argparse
import glob
import json
import os
import shlex
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

QUERY = "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader"
# The field's one-liner (research notes, section 3.5); fuser -k sends SIGKILL
# unless told otherwise, so this is the same as `fuser -k -9 /dev/nvidia*`.
ONE_LINER = "fuser -k /dev/nvidia*"
# The floor (part b, --floor): the least any correct cleanup of a
# vllm_incident host runs there, in one command over one connection, with no
# check between the steps: the GPU reading before, the PIDs nvidia-smi
# charges, the unit stop, the holders (fuser) but nvidia-persistenced
# SIGKILLed, the reading after. Run by pdsh with fleetreap's key exchange
# (curve25519), its hosts' CPU is a lower bound on what a correct tool costs
# a host here; it is not a tool anyone should run (no protection but one
# comm, no wait before the verify, no verdict).
GPU_READING = "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader"
FLOOR = (f"{GPU_READING} >/dev/null; "
         "nvidia-smi --query-compute-apps=pid --format=csv,noheader >/dev/null; "
         "systemctl stop vllm.service; "
         "for p in $(fuser /dev/nvidia* 2>/dev/null); do read -r c </proc/$p/comm && "
         "case $c in nvidia-persiste*) ;; *) kill -9 $p;; esac; done; "
         f"{GPU_READING}")
PEERS = {  # tool -> (binary, Debian package)
    "pdsh": ("pdsh", "pdsh"),
    "clush": ("clush", "clustershell"),
    "pssh": ("parallel-ssh", "pssh"),
}


def log(msg):
    print(msg, flush=True)


# ---- setup ----------------------------------------------------------------

def ensure_peers(install, wanted):
    """Returns those of 'wanted' that are usable; installs missing ones if asked."""
    missing = [p for p in wanted if not shutil.which(PEERS[p][0])]
    if missing and install:
        pkgs = [PEERS[p][1] for p in missing]
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        log(f"installing {' '.join(pkgs)} (apt-get)")
        cmd = ["apt-get", "install", "-y", "--no-install-recommends"] + pkgs
        if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL)
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
    usable = [p for p in wanted if shutil.which(PEERS[p][0])]
    for p in wanted:
        if p not in usable:
            log(f"peer {p} ({PEERS[p][0]}) not installed: skipped")
    return usable


def check_addresses(fleet):
    """Every address must be a simulated host's 127.0.N.X, never 127.0.0.1."""
    addrs = [h.address for h in fleet.hosts.values()]
    for a in addrs:
        parts = a.split(".")
        if len(parts) != 4 or parts[:2] != ["127", "0"] or parts[2] == "0":
            raise SystemExit(f"peers_bench: refusing address {a!r} (not a simulated host)")
    return addrs


# libssh 0.10 (fleetreap) negotiates curve25519-sha256; OpenSSH 9.x's default
# sntrup761x25519-sha512 costs the client about 60 ms more CPU per connection.
X25519 = ["-o", "KexAlgorithms=curve25519-sha256"]


def ssh_options(fleet, kex=False):
    return (X25519 if kex else []) + ["-F", "/dev/null", "-i", fleet.key, "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={fleet.known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes",
            "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR"]


# ---- running one tool -------------------------------------------------------

def timed(argv, env=None, cwd=None):
    """Runs argv; returns (wall s, CPU s of it and its reaped children, rc, stdout)."""
    out = tempfile.TemporaryFile()
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read().decode(errors="replace")
    out.close()
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, text


def peer_argv(tool, fleet, addrs, fanout, command, workdir):
    """argv and env for peer 'tool'; "pdsh/x25519" is pdsh with curve25519 KEX."""
    tool, _, variant = tool.partition("/")
    if tool == "floor":  # pdsh with curve25519, running the given command
        tool, variant = "pdsh", "x25519"
    opts = ssh_options(fleet, kex=variant == "x25519")
    if tool == "pdsh":
        env = dict(os.environ, PDSH_RCMD_TYPE="ssh",
                   PDSH_SSH_ARGS=" ".join(shlex.quote(o) for o in opts) + " -l%u %h")
        return ["pdsh", "-R", "ssh", "-f", str(fanout), "-l", "root",
                "-w", ",".join(addrs), command], env
    if tool == "clush":
        return ["clush", "-f", str(fanout), "-l", "root", "-w", ",".join(addrs),
                "-o", " ".join(shlex.quote(o) for o in opts), command], None
    if tool == "pssh":
        hostfile = os.path.join(workdir, "pssh-hosts.txt")
        with open(hostfile, "w") as f:
            f.write("\n".join(addrs) + "\n")
        return ["parallel-ssh", "-h", hostfile, "-p", str(fanout), "-l", "root", "-t", "0",
                "-x", " ".join(shlex.quote(o) for o in opts), "-i", command], None
    raise ValueError(tool)


def answered(tool, text, addrs):
    """Hosts that printed the nvidia-smi query's output through the peer."""
    tool = tool.partition("/")[0]
    if tool == "pssh":  # "[1] 05:34:18 [SUCCESS] 127.0.100.1"
        return sum(1 for a in addrs if f"[SUCCESS] {a}\n" in text + "\n")
    hosts = set()
    for line in text.splitlines():
        host, _, rest = line.partition(": ")
        if rest.split(",")[0].strip().isdigit():
            hosts.add(host)
    return len(hosts & set(addrs))


def run_fleetreap(binary, fleet, fanout, extra, workdir):
    report = os.path.join(workdir, "report.json")
    if os.path.exists(report):
        os.remove(report)
    argv = [binary, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
            "--forks", str(fanout), "--json", report, "--quiet", "--color", "never"] + extra
    wall, cpu, rc, text = timed(argv)
    try:
        with open(report) as f:
            hosts = json.load(f)["hosts"]
    except (OSError, ValueError, KeyError):
        hosts = []
        log(f"  fleetreap exit {rc}, no report: {text[-500:]}")
    return wall, cpu, rc, hosts


# ---- the parts --------------------------------------------------------------

def hosts_cpu(fleet):
    """CPU (s) the fleet's hosts used so far: the sum of their cgroups'
    usage_usec (sshd, the scripts, nvidia-smi...); None without cgroups."""
    if fleet.cgroup is None:
        return None
    total = 0
    for h in fleet.hosts.values():
        try:
            with open(os.path.join(h.cgroup, "cpu.stat")) as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError, TypeError):
            return None
    return total / 1e6


def step_medians(hosts):
    """fleetreap's per-step time (the report's timings, -v's steps): the
    median over the hosts that ran the step, ms, in the order first seen."""
    steps = {}
    for h in hosts:
        for t in h.get("timings", []):
            steps.setdefault(t["step"], []).append(t["duration_ms"])
    return {k: statistics.median(v) for k, v in steps.items()}



def shape_kw(shape):
    """HostSpec's shape argument, where this simfleet has one."""
    if shape and "shape" in getattr(HostSpec, "__dataclass_fields__", {}):
        return {"shape": shape}
    return {}


def take_down(fleet, workdir):
    """Ends the fleet; tolerates another fleet's bring-up reclaiming this one's
    files at the same moment (its hosts look dead to it while they end)."""
    try:
        fleet.down()
    except OSError as e:
        log(f"  (fleet down: {e}; cleaning up again)")
    Fleet.cleanup(workdir)


def rounds(tools, runs):
    """Run order: every round runs every tool once, the order rotating."""
    for r in range(runs):
        k = r % len(tools)
        yield r + 1, tools[k:] + tools[:k]


def part_a_d(args, binary, peers, base):
    """Dry run of N clean hosts (a), and controller CPU per host (d)."""
    n = args.clean_hosts
    # pdsh once more with fleetreap's key exchange, to separate the tool
    # from OpenSSH's default post-quantum KEX.
    tools = ["fleetreap"] + peers + (["pdsh/x25519"] if "pdsh" in peers else [])
    res = {t: [] for t in tools}
    ssh_cpu = {"default KEX": [], "curve25519-sha256": []}
    workdir = os.path.join(base, "clean")
    fleet = Fleet(workdir)
    try:
        fleet.up([HostSpec(f"gpu{i:03d}") for i in range(1, n + 1)], timeout=300)
        addrs = check_addresses(fleet)
        log(f"\n[a] {n} clean hosts up in {fleet.timings['up_s']:.1f} s; "
            f"fan-out {args.fanout}, {args.runs} run(s) per tool")
        for r, order in rounds(tools, args.runs):
            for tool in order:
                if tool == "fleetreap":
                    wall, cpu, rc, hosts = run_fleetreap(binary, fleet, args.fanout,
                                                         ["--dry-run"], workdir)
                    ok = sum(1 for h in hosts if h["status"] == "clean")
                    note = f"exit {rc}"
                else:
                    argv, env = peer_argv(tool, fleet, addrs, args.fanout, QUERY, workdir)
                    wall, cpu, rc, text = timed(argv, env=env)
                    ok = answered(tool, text, addrs)
                    note = f"exit {rc}"
                    if ok < n:
                        note += f"; output tail: {text[-300:]!r}"
                res[tool].append({"wall": wall, "cpu": cpu, "ok": ok})
                log(f"  round {r} {tool:<11} wall {wall:6.2f} s  CPU {cpu*1000:7.0f} ms "
                    f"({cpu*1000/n:5.2f} ms/host)  hosts answered {ok}/{n}  {note}")
        if "d" in args.parts:
            log(f"\n[d] OpenSSH client, one `ssh` per host running the query, "
                f"{args.runs} pass(es) over {n} hosts, default KEX and curve25519-sha256")
            for r in range(args.runs):
                for kex in ssh_cpu:
                    total, ok = 0.0, 0
                    for name in fleet.hosts:
                        argv = fleet.ssh_argv(name, QUERY)
                        argv[1:1] = ["-F", "/dev/null", "-o", "IdentitiesOnly=yes",
                                     "-o", "GlobalKnownHostsFile=/dev/null"]
                        if kex != "default KEX":
                            argv[1:1] = X25519
                        _, cpu, rc, text = timed(argv)
                        total += cpu
                        ok += rc == 0 and text.startswith("0, ")
                    ssh_cpu[kex].append(total / n)
                    log(f"  pass {r + 1} ({kex}): ssh CPU {total*1000:.0f} ms = "
                        f"{total*1000/n:.2f} ms/host, {ok}/{n} answered")
    finally:
        take_down(fleet, workdir)
    return res, ssh_cpu


def part_b(args, binary, peers, base):
    """Full escalation of M vllm_incident hosts, fresh fleet per run."""
    m = args.incident_hosts
    if args.floor and "pdsh" in peers:
        peers = peers + ["floor"]
    res = {t: [] for t in ["fleetreap"] + peers}
    log(f"\n[b] {m} vllm_incident hosts ({args.incident_shape or 'default'} shape), "
        f"fresh fleet per run; fan-out {args.fanout}, "
        f"{args.runs} run(s) per tool; peers run `{ONE_LINER}`")
    playbook = os.path.join(ROOT, "playbooks", "vllm.yaml")
    for r, order in rounds(["fleetreap"] + peers, args.runs):
        for tool in order:
            workdir = os.path.join(base, f"incident-{r}-{tool}")
            fleet = Fleet(workdir)
            try:
                fleet.up([HostSpec(f"gpu{i:03d}", scenario="vllm_incident",
                                   **shape_kw(args.incident_shape))
                          for i in range(1, m + 1)], timeout=600)
                up_s = fleet.timings["up_s"]
                addrs = check_addresses(fleet)
                host_cpu0 = hosts_cpu(fleet)
                steps = {}
                if tool == "fleetreap":
                    wall, cpu, rc, hosts = run_fleetreap(
                        binary, fleet, args.fanout, ["--playbook", playbook], workdir)
                    statuses = {}
                    for h in hosts:
                        statuses[h["status"]] = statuses.get(h["status"], 0) + 1
                    steps = step_medians(hosts)
                    note = f"exit {rc} {statuses}; steps (median ms): " + ", ".join(
                        f"{k} {v:.0f}" for k, v in steps.items())
                else:
                    command = FLOOR if tool == "floor" else ONE_LINER
                    argv, env = peer_argv(tool, fleet, addrs, args.fanout, command, workdir)
                    wall, cpu, rc, text = timed(argv, env=env)
                    note = f"exit {rc}"
                host_cpu1 = hosts_cpu(fleet)
                host_cpu = (None if host_cpu0 is None or host_cpu1 is None
                            else host_cpu1 - host_cpu0)
                # The same short pause for every tool: SIGKILLed processes
                # finish exiting (descriptors closed) before the truth is read.
                time.sleep(1.0)
                truth = fleet.ground_truth()
                right = sum(1 for t in truth.values() if t["clean"])
                why = {"protected daemon killed": 0, "GPU holder left": 0, "memory left": 0}
                for t in truth.values():
                    if t["protected_missing"]:
                        why["protected daemon killed"] += 1
                    if t["gpu_processes"]:
                        why["GPU holder left"] += 1
                    if any(g["memory_used_mib"] > g["ghost_mib"] for g in t["gpus"]):
                        why["memory left"] += 1
                res[tool].append({"wall": wall, "cpu": cpu, "right": right,
                                  "wrong": len(truth) - right, "why": why,
                                  "host_cpu": host_cpu, "steps": steps})
                hc = "-" if host_cpu is None else f"{host_cpu * 1000 / m:.0f} ms/host"
                log(f"  round {r} {tool:<9} (up {up_s:.1f} s) wall {wall:6.2f} s  CPU "
                    f"{cpu*1000:6.0f} ms  hosts' CPU {hc}  right {right}/{len(truth)}  "
                    f"wrong hosts: { {k: v for k, v in why.items() if v} }  {note}")
            finally:
                t0 = time.monotonic()
                take_down(fleet, workdir)
                log(f"           down in {time.monotonic() - t0:.1f} s")
    return res


def part_c(args, binary, base):
    """One slow_exit host, fleetreap with the default playbook."""
    log(f"\n[c] one slow_exit host, fleetreap default playbook, {args.runs} run(s)")
    rows = []
    for r in range(1, args.runs + 1):
        workdir = os.path.join(base, f"slow-{r}")
        fleet = Fleet(workdir)
        try:
            fleet.up([HostSpec("gpu01", scenario="slow_exit")])
            check_addresses(fleet)
            wall, cpu, rc, hosts = run_fleetreap(binary, fleet, args.fanout, [], workdir)
            h = hosts[0] if hosts else {}
            clean = fleet.ground_truth()["gpu01"]["clean"]
            row = {"wall": wall, "host_ms": h.get("duration_ms", 0),
                   "term": h.get("term_sent", 0), "kill": h.get("kill_sent", 0),
                   "status": h.get("status"), "clean": clean}
            rows.append(row)
            log(f"  run {r}: exit {rc} wall {wall:.2f} s, host {row['host_ms']} ms, "
                f"TERM {row['term']}, KILL {row['kill']}, status {row['status']}, "
                f"clean by truth {clean}")
        finally:
            take_down(fleet, workdir)
    return rows


def log_floor(b, m):
    """What 0.5x of pdsh leaves a host, against the floor's hosts' CPU: with
    every core busy the walls follow the CPU, so fleetreap's controller and
    hosts' CPU together may be half of pdsh's controller and hosts' at most."""
    def cpu_ms(rows, key):
        v = [r[key] for r in rows if r[key] is not None]
        return statistics.median(v) * 1000 / m if v else float("nan")
    pdsh = cpu_ms(b["pdsh"], "cpu") + cpu_ms(b["pdsh"], "host_cpu")
    budget = 0.5 * pdsh - cpu_ms(b["fleetreap"], "cpu")
    ratio = [f["wall"] / p["wall"] for f, p in zip(b["floor"], b["pdsh"])]
    log(f"floor / pdsh wall, run by run: " + ", ".join(f"{x:.2f}" for x in ratio))
    log(f"0.5x of pdsh leaves a host {budget:.0f} ms of CPU (pdsh: {pdsh:.0f} ms per host, "
        f"controller and host; fleetreap's controller {cpu_ms(b['fleetreap'], 'cpu'):.1f}); "
        f"the floor costs a host {cpu_ms(b['floor'], 'host_cpu'):.0f} ms, fleetreap "
        f"{cpu_ms(b['fleetreap'], 'host_cpu'):.0f} ms")


# ---- main -----------------------------------------------------------------

def med(rows, key):
    return statistics.median(r[key] for r in rows) if rows else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fanout", type=int, default=64)
    parser.add_argument("--clean-hosts", type=int, default=50)
    parser.add_argument("--incident-hosts", type=int, default=200)
    parser.add_argument("--parts", default="abcd", help="any of a, b, c, d")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="the peers to run, comma-separated (default: all of "
                        + ", ".join(PEERS) + ")")
    parser.add_argument("--incident-shape", default="simple",
                        help="simfleet host shape for part b (default simple: 200 "
                        "realistic hosts, 100 bystanders each, exceed pid_max 32768; "
                        "'realistic' needs --incident-hosts 100 or so)")
    parser.add_argument("--floor", action="store_true",
                        help="part b also runs the floor (FLOOR: the least a correct "
                        "cleanup runs on a host) through pdsh with curve25519")
    parser.add_argument("--fleetreap")
    parser.add_argument("--quick", action="store_true",
                        help="tiny run for a test: 2+3 hosts, 1 run, skip missing peers")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.clean_hosts, args.incident_hosts = 1, 2, 3
    if os.geteuid() != 0:
        sys.exit("peers_bench: needs root (simulated fleet)")
    binary = find_fleetreap(args.fleetreap, "peers_bench")
    wanted = [p for p in args.peers.split(",") if p]
    unknown = [p for p in wanted if p not in PEERS]
    if unknown:
        sys.exit(f"peers_bench: unknown peer(s) {', '.join(unknown)}")
    peers = ensure_peers(not args.quick, wanted)
    started = time.monotonic()
    log(f"fleetreap: {binary}")
    log(f"peers: {', '.join(peers) or 'none'}; machine: {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}")
    base = tempfile.mkdtemp(prefix="peers-bench-")
    a = ssh_cpu = b = c = None
    timings = {}
    try:
        if "a" in args.parts or "d" in args.parts:
            t0 = time.monotonic()
            a, ssh_cpu = part_a_d(args, binary, peers, base)
            timings["a+d"] = time.monotonic() - t0
        if "b" in args.parts:
            t0 = time.monotonic()
            b = part_b(args, binary, peers, base)
            timings["b"] = time.monotonic() - t0
        if "c" in args.parts:
            t0 = time.monotonic()
            c = part_c(args, binary, base)
            timings["c"] = time.monotonic() - t0
    finally:
        for d in glob.glob(os.path.join(base, "*")):
            Fleet.cleanup(d)
        shutil.rmtree(base, ignore_errors=True)

    log(f"\n=== summary: medians of {args.runs} run(s), fan-out {args.fanout}, "
        f"load {os.getloadavg()[0]:.1f} at the end ===")
    if a:
        n = args.clean_hosts
        log(f"\n(a) dry run / nvidia-smi query, {n} clean hosts (pdsh/x25519: pdsh with KexAlgorithms=curve25519-sha256)")
        log(f"| tool | wall (median) | wall min-max | controller CPU/host | hosts answered |")
        log("|---|---|---|---|---|")
        for t in a:
            rows = a[t]
            log(f"| {t} | {med(rows, 'wall'):.2f} s | {min(r['wall'] for r in rows):.2f}-"
                f"{max(r['wall'] for r in rows):.2f} s | {med(rows, 'cpu')*1000/n:.2f} ms | "
                f"{min(r['ok'] for r in rows)}/{n} |")
    if b:
        m = args.incident_hosts
        log(f"\n(b) full escalation, {m} vllm_incident hosts (peers: `{ONE_LINER}`)")
        log("| tool | wall (median) | wall min-max | controller CPU/host | hosts' CPU/host | right | wrong | why wrong (median hosts) |")
        log("|---|---|---|---|---|---|---|---|")
        for t in b:
            rows = b[t]
            why = {k: statistics.median(r["why"][k] for r in rows) for k in rows[0]["why"]}
            hc = [r["host_cpu"] for r in rows if r["host_cpu"] is not None]
            hc = f"{statistics.median(hc) * 1000 / m:.0f} ms" if hc else "-"
            log(f"| {t} | {med(rows, 'wall'):.2f} s | {min(r['wall'] for r in rows):.2f}-"
                f"{max(r['wall'] for r in rows):.2f} s | {med(rows, 'cpu')*1000/m:.2f} ms | "
                f"{hc} | {med(rows, 'right'):.0f}/{m} | {med(rows, 'wrong'):.0f}/{m} | "
                f"{', '.join(f'{k} {v:.0f}' for k, v in why.items() if v) or '-'} |")
        if "fleetreap" in b and b["fleetreap"][0]["steps"]:
            names = list(b["fleetreap"][0]["steps"])
            log("fleetreap's steps, median over hosts, median over runs: " + ", ".join(
                f"{k} {statistics.median(r['steps'].get(k, 0) for r in b['fleetreap']):.0f} ms"
                for k in names))
        for t in b:
            if t == "fleetreap":
                continue
            ratio = [f["wall"] / p["wall"] for f, p in zip(b["fleetreap"], b[t])]
            log(f"fleetreap / {t} wall, run by run: " + ", ".join(f"{x:.2f}" for x in ratio))
        if "floor" in b and "pdsh" in b:
            log_floor(b, m)
    if c:
        log("\n(c) one slow_exit host (workers exit 1.5 s after SIGTERM), fleetreap")
        log(f"wall median {med(c, 'wall'):.2f} s (host {med(c, 'host_ms'):.0f} ms); "
            f"TERM sent {sum(r['term'] for r in c)}, KILL sent {sum(r['kill'] for r in c)} "
            f"in {len(c)} run(s); clean by truth {sum(r['clean'] for r in c)}/{len(c)}")
    if a and ssh_cpu and ssh_cpu["default KEX"]:
        n = args.clean_hosts
        log(f"\n(d) controller CPU per host, {n} hosts")
        log(f"fleetreap --dry-run (inspect: nvidia-smi + holders + session): "
            f"{med(a['fleetreap'], 'cpu')*1000/n:.2f} ms/host (min "
            f"{min(r['cpu'] for r in a['fleetreap'])*1000/n:.2f})")
        for kex, v in ssh_cpu.items():
            log(f"OpenSSH `ssh` running the query once per host, {kex}: "
                f"{statistics.median(v)*1000:.2f} ms/host (min {min(v)*1000:.2f})")
    log("\ntime per part: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
        + f"; total {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
