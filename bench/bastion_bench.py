#!/usr/bin/python3
"""bastion_bench: N hosts behind one bastion, reached three ways, at one
--forks value (default 100 hosts, --forks 64).

The bastion is a simulated host whose sshd is left at OpenSSH's defaults
for MaxStartups (10:30:100: past 10 unauthenticated connections it drops a
growing share of new ones) with LogLevel VERBOSE, so its log counts the
logins ("Accepted publickey") and the drops ("past MaxStartups"). The GPU
hosts are reached only through it, by names that resolve nowhere
(gpuNNN.internal), with an ssh config given by --ssh-config-file:

  jump     ProxyJump bastion: fleetreap's one connection to the bastion, a
           forwarded channel (direct-tcpip) per host;
  command  ProxyCommand `ssh -W %h:%p bastion`: one OpenSSH login to the
           bastion per host, which fleetreap paces (at most 10 proxies of one
           command waiting for their banner, jittered retry after a drop);
  before   the same ProxyCommand with the binary given by --before (today's
           per-host proxies, unpaced), when given.

Per run: wall time, hosts clean / not, the error kinds of the others, the
bastion's logins and drops, and the controller's CPU (wait4's rusage, its
proxies included). Each mode runs --runs times (median wall time; logins,
drops and failures of every run). The playbook is inspect.yaml (report
only), --retries 0 so that a drop shows as a failure.

  bench/bastion_bench.py [--hosts 100] [--forks 64] [--runs 1]
                         [--modes jump,command,before] [--before OLD_BINARY]
                         [--fleetreap build/fleetreap]

Needs root (the simulated fleet). Prints numbers; asserts nothing.
"""

import argparse
import collections
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
from host_setup import HostSetup  # noqa: E402
from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

INSPECT = os.path.join(ROOT, "playbooks", "inspect.yaml")


def log(msg):
    print(msg, flush=True)


def sshd_counts(path):
    """(logins, drops) so far in an sshd log of LogLevel VERBOSE."""
    with open(path, errors="replace") as f:
        text = f.read()
    return (len(re.findall(r"Accepted publickey for ", text)),
            len(re.findall(r"past MaxStartups", text)))


def bastion_defaults(fleet):
    """The bastion's sshd back to OpenSSH's MaxStartups, logging logins."""
    host = fleet.hosts["bastion"]
    config = os.path.join(host.dir, "etc", "sshd_config")
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(re.sub(r"(?m)^MaxStartups .*$", "MaxStartups 10:30:100", text))
    HostSetup(fleet, host).sshd_options("LogLevel VERBOSE")
    return os.path.join(host.dir, "sshd.log")


def write_inputs(fleet, names, workdir):
    """The inventory and the two ssh configs (jump, command)."""
    inventory = os.path.join(workdir, "inventory.yaml")
    with open(inventory, "w") as f:
        f.write("all:\n  vars:\n    ansible_user: root\n"
                f"    ansible_ssh_private_key_file: {fleet.key}\n  hosts:\n")
        for name in names:
            f.write(f"    {name}:\n      ansible_host: {name}.internal\n")
    hosts = "".join(f"Host {n}.internal\n  HostName {fleet.hosts[n].address}\n" for n in names)
    bastion = fleet.hosts["bastion"].address
    ssh = (f"ssh -F /dev/null -i {fleet.key} -o BatchMode=yes "
           f"-o UserKnownHostsFile={fleet.known_hosts} -o StrictHostKeyChecking=yes "
           f"root@{bastion} -W %h:%p")
    configs = {
        "jump": (f"Host *.internal\n  ProxyJump bastion\n{hosts}"
                 f"Host bastion\n  HostName {bastion}\n  User root\n"),
        "command": f"Host *.internal\n  ProxyCommand {ssh}\n{hosts}",
    }
    paths = {}
    for mode, text in configs.items():
        paths[mode] = os.path.join(workdir, f"ssh_config.{mode}")
        with open(paths[mode], "w") as f:
            f.write(text)
    return inventory, paths


def run_once(binary, fleet, inventory, config, forks, sshd_log):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    argv = [binary, "--hosts", inventory, "--known-hosts", fleet.known_hosts,
            "--ssh-config-file", config, "--playbook", INSPECT, "--forks", str(forks),
            "--retries", "0", "--connect-timeout", "60s", "--json", out, "--quiet",
            "--color", "never"]
    logins0, drops0 = sshd_counts(sshd_log)
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.stderr.close()
    time.sleep(0.5)  # the bastion's sshd logs the last lines
    logins1, drops1 = sshd_counts(sshd_log)
    report = None
    if os.path.getsize(out) > 0:
        with open(out) as f:
            report = json.load(f)
    os.unlink(out)
    kinds = collections.Counter()
    clean = 0
    for host in (report or {}).get("hosts", []):
        if host["status"] == "clean":
            clean += 1
        else:
            kinds[host.get("error_kind") or host["status"]] += 1
    return {"wall_s": wall, "clean": clean, "failed": dict(kinds),
            "logins": logins1 - logins0, "drops": drops1 - drops0,
            "cpu_s": usage.ru_utime + usage.ru_stime, "report": report is not None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--forks", type=int, default=64)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--modes", default="jump,command,before")
    parser.add_argument("--before", help="an older fleetreap for the 'before' mode")
    parser.add_argument("--fleetreap")
    args = parser.parse_args()
    binary = find_fleetreap(args.fleetreap, "bastion_bench")
    modes = [m for m in args.modes.split(",") if m and (m != "before" or args.before)]
    names = [f"gpu{i:03d}" for i in range(1, args.hosts + 1)]
    specs = [HostSpec("bastion", gpus=1, bystanders=0)] + [
        HostSpec(n, gpus=2, bystanders=10) for n in names]
    workdir = scratch_dir(prefix="bastion-bench-")
    log(f"bastion_bench: {args.hosts} hosts behind one bastion (MaxStartups 10:30:100), "
        f"--forks {args.forks}, {args.runs} run(s) per mode; load {os.getloadavg()[0]:.1f}")
    with Fleet(os.path.join(workdir, "fleet")) as fleet:
        start = time.monotonic()
        fleet.up(specs, timeout=300)
        sshd_log = bastion_defaults(fleet)
        inventory, configs = write_inputs(fleet, names, workdir)
        log(f"fleet up in {time.monotonic() - start:.1f} s")
        log(f"{'mode':<8} {'wall s':>7} {'clean':>6} {'logins':>7} {'drops':>6} "
            f"{'cpu s':>6}  failures")
        for mode in modes:
            runs = []
            for _ in range(args.runs):
                exe = args.before if mode == "before" else binary
                config = configs["jump" if mode == "jump" else "command"]
                r = run_once(exe, fleet, inventory, config, args.forks, sshd_log)
                runs.append(r)
                failures = ", ".join(f"{k} {v}" for k, v in sorted(r["failed"].items())) or "-"
                log(f"{mode:<8} {r['wall_s']:7.1f} {r['clean']:>3}/{args.hosts:<3}"
                    f"{r['logins']:>6} {r['drops']:>6} {r['cpu_s']:6.1f}  {failures}"
                    + ("" if r["report"] else "  (no report)"))
            if len(runs) > 1:
                log(f"{mode:<8} median wall {statistics.median(r['wall_s'] for r in runs):.1f} s")
    log(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
