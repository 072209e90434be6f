#!/usr/bin/python3
"""replay_scale_bench: the real fleetreap binary against thousands of hosts
served by one light SSH endpoint (bench/tools/replay_sshd).

replay_sshd answers every host from one process: the host's address
127.P.X.Y picks its profile (clean, incident, unreachable, slow) and each
step is answered with the bytes a real simulated host sent
(bench/replies/, made by bench/record_replies.py), so the controller does
its whole work (SSH sessions, host-key checks, parsing, the escalation,
reports) while the hosts cost almost nothing. Per host count: an inventory
and a known_hosts of that many hosts in a temp dir, a mixed fleet (70%
clean, 20% incident, 5% unreachable, 5% slow), one full run each time, and:

  wall time, controller CPU (wait4's rusage, user + sys) in all and per
  host, peak RSS (the sampled VmRSS; ru_maxrss also shown), peak open
  descriptors and threads (/proc/PID/fd and /proc/PID/status every 100 ms),
  the load average before and after, and how many hosts' outcome differs
  from their profile (clean -> clean, incident -> cleaned, unreachable ->
  unreachable, slow -> clean).

  bench/replay_scale_bench.py [--hosts 1000,3000,10000] [--runs 2]
                              [--forks 1000] [--extra 'FLAGS'] [--html-metrics]
                              [--fleetreap build/fleetreap]
                              [--replay-sshd build/bench/replay_sshd]

--html-metrics runs each run twice, without and with --html and --metrics
(both reports streamed as hosts end), and prints both and their peak RSS
ratio.

Needs no root. Prints numbers; asserts nothing (exits 1 only when a host's
outcome is wrong or fleetreap did not run).
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_binary import find_fleetreap  # noqa: E402
from controller_sample import load, run_sampled, take_report  # noqa: E402

PLAYBOOK = os.path.join(ROOT, "playbooks", "vllm.yaml")
REPLIES = os.path.join(ROOT, "bench", "replies")
# Profile -> (second address byte, the outcome fleetreap must report).
PROFILES = {"clean": (201, "clean"), "incident": (202, "cleaned"),
            "unreachable": (203, "unreachable"), "slow": (204, "clean")}
MIX = ["clean"] * 14 + ["incident"] * 4 + ["unreachable", "slow"]   # 70/20/5/5


def host_profile(i):
    return MIX[i % len(MIX)]


def address(i, profile):
    return f"127.{PROFILES[profile][0]}.{i // 250}.{i % 250 + 1}"


def write_fleet(workdir, count, port, host_pub):
    inventory = os.path.join(workdir, f"inventory-{count}.yaml")
    known_hosts = os.path.join(workdir, f"known_hosts-{count}")
    width = len(str(count))
    expected = {}
    with open(inventory, "w") as inv, open(known_hosts, "w") as kh:
        inv.write("all:\n  hosts:\n")
        for i in range(count):
            name = f"h{i:0{width}d}"
            profile = host_profile(i)
            addr = address(i, profile)
            expected[name] = PROFILES[profile][1]
            inv.write(f"    {name}:\n      ansible_host: {addr}\n      ansible_port: {port}\n"
                      f"      ansible_user: root\n      fleetreap_expected_gpus: 8\n")
            kh.write(f"[{addr}]:{port} {host_pub}\n")
    return inventory, known_hosts, expected


def start_server(binary, workdir):
    key = os.path.join(workdir, "host_key")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
    with open(key + ".pub") as f:
        pub = " ".join(f.read().split()[:2])
    server = subprocess.Popen([binary, "--host-key", key, "--recordings", REPLIES],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = server.stdout.readline().decode().split()
    if len(line) != 2 or line[0] != "port":
        server.kill()
        sys.exit(f"replay_scale_bench: replay_sshd did not start: {server.stderr.read()[-500:]}")
    return server, int(line[1]), pub


def wrong_hosts(report, expected):
    if report is None:
        return [f"no JSON report ({len(expected)} hosts unaccounted)"]
    got = {h["name"]: h for h in report["hosts"]}
    wrong = [f"{n}: {got[n]['outcome'] if n in got else 'missing'}, expected {want}"
             f" ({got[n]['error_message'] if n in got else ''})"
             for n, want in sorted(expected.items()) if got.get(n, {}).get("outcome") != want]
    return wrong


def one_run(binary, inventory, known_hosts, forks, extra, workdir, html_metrics=False):
    out = os.path.join(workdir, "report.json")
    argv = [binary, "--hosts", inventory, "--known-hosts", known_hosts, "--playbook", PLAYBOOK,
            "--forks", str(forks), "--json", out, "--quiet", "--color", "never"] + extra
    if html_metrics:
        argv += ["--html", os.path.join(workdir, "report.html"),
                 "--metrics", os.path.join(workdir, "report.prom")]
    load_before = load()
    r = run_sampled(argv, timeout=3600)
    r["load"] = f"{load_before} -> {load()}"
    r["report"] = take_report(out)
    return r


def print_run(count, forks, run, r, expected, html_metrics):
    """Prints one run's line; returns 1 when it had a wrong host or timed out."""
    wrong = wrong_hosts(r["report"], expected)
    label = " --html --metrics" if html_metrics else ""
    print(f"  {count} hosts forks={forks}{label} run {run + 1}: exit {r['exit']}, "
          f"wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s "
          f"({1000 * r['cpu_s'] / count:.2f} ms/host; user {r['user_s']:.1f}, "
          f"sys {r['sys_s']:.1f}), peak RSS {r['peak_vmrss_mib']:.0f} MiB "
          f"(ru_maxrss {r['maxrss_mib']:.0f}), fds {r['peak_fds']}, "
          f"threads {r['peak_threads']}, wrong {len(wrong)}/{count}; "
          f"load {r['load']}", flush=True)
    for w in wrong[:5]:
        print(f"    {w}")
    if not r["report"]:
        print(f"    stderr: {r['stderr_tail'][-400:]}")
    return 1 if (wrong or r["timed_out"]) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="1000,3000,10000")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--forks", type=int, default=1000)
    ap.add_argument("--extra", default="")
    ap.add_argument("--fleetreap")
    ap.add_argument("--replay-sshd")
    ap.add_argument("--html-metrics", action="store_true",
                    help="each run also with --html and --metrics; print both")
    args = ap.parse_args()
    binary = find_fleetreap(args.fleetreap, "replay_scale_bench")
    sshd = args.replay_sshd or os.path.join(os.path.dirname(binary), "bench", "replay_sshd")
    extra = shlex.split(args.extra)
    print(f"fleetreap: {binary}\nreplay_sshd: {sshd}\nmachine: {os.cpu_count()} cores, "
          f"load {load()}")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="fleetreap-replay-") as workdir:
        server, port, pub = start_server(sshd, workdir)
        try:
            for count in [int(x) for x in args.hosts.split(",")]:
                inventory, known_hosts, expected = write_fleet(workdir, count, port, pub)
                forks = min(args.forks, count)
                rows = []
                for run in range(args.runs):
                    plain = None
                    for html_metrics in ([False, True] if args.html_metrics else [False]):
                        r = one_run(binary, inventory, known_hosts, forks, extra, workdir,
                                    html_metrics)
                        failures += print_run(count, forks, run, r, expected, html_metrics)
                        if not html_metrics:
                            rows.append(r)
                            plain = r
                        elif plain:
                            print(f"    peak RSS with --html --metrics / without: "
                                  f"{r['peak_vmrss_mib']:.0f} / {plain['peak_vmrss_mib']:.0f} MiB "
                                  f"({100 * (r['peak_vmrss_mib'] / plain['peak_vmrss_mib'] - 1):+.1f}%)",
                                  flush=True)
                if len(rows) > 1:
                    def stat(key, scale=1.0):
                        vals = [x[key] * scale for x in rows]
                        return f"{min(vals):.2f}/{statistics.median(vals):.2f}"
                    print(f"{count} hosts min/median: wall {stat('wall_s')} s, CPU/host "
                          f"{stat('cpu_s', 1000.0 / count)} ms, RSS {stat('peak_vmrss_mib')} MiB, "
                          f"threads {stat('peak_threads')}, fds {stat('peak_fds')}", flush=True)
        finally:
            server.terminate()
            server.wait(10)
    print(f"\n{'every host right' if not failures else f'{failures} runs had a wrong host'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
