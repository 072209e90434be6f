"""Integration tests of the SSH side's safety bounds: the
real fleetreap binary against a simulated fleet over real SSH.

- a stalled ssh-agent (a socket that takes connections and never answers)
  ends the host whose inventory key is refused by --connect-timeout, naming
  the agent, while the other hosts finish; --no-agent never asks it;
- --host-key-policy off warns once per run and every host's offered key
  fingerprint (as ssh-keygen -l prints it) and the policy are in the JSON;
- accept-new reads the global known_hosts file and an ssh config's
  UserKnownHostsFile/GlobalKnownHostsFile/HostKeyAlias: a contradicted key is
  refused, a new one goes to the user's file only;
- a symlink planted at the old predictable report temp name is not followed;
- --log-dir is created 0700 with 0600 logs, and one that others may write,
  another user owns, or that holds a symlink exits 64 with one line.
stdlib unittest only; FLEETREAP_BIN names the binary.
"""

import json
import os
import socket
import subprocess
import time
import unittest

from fleet_case import FleetCase, by_name, fleetreap_argv, playbook_path, run_json_file
from simfleet import HostSpec

INSPECT = playbook_path("inspect.yaml")
WARNING = "--host-key-policy off: host keys are NOT checked"


def run_fleetreap(inventory, *extra, env=None, timeout=120):
    """Runs fleetreap with --json to a file; returns (code, report, stderr, seconds)."""
    start = time.monotonic()
    proc, report = run_json_file("--hosts", inventory, "--color", "never", "--playbook", INSPECT,
                                 *extra, env=env, timeout=timeout)
    return proc.returncode, report, proc.stderr, time.monotonic() - start


def read(path):
    with open(path) as f:
        return f.read()


def fingerprints(known_hosts):
    """{address: "SHA256:..."} as ssh-keygen -l prints them."""
    out = subprocess.run(["ssh-keygen", "-l", "-f", known_hosts], capture_output=True,
                         text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        _, fingerprint, address = line.split()[:3]
        result[address] = fingerprint
    return result


class StalledAgent:
    """An ssh-agent socket that takes connections and never answers."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "stalled-agent.sock")
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen(64)

    def close(self):
        self.server.close()
        os.unlink(self.path)


class SshHardeningTest(FleetCase):
    PREFIX = "fleetreap-sshhard-"
    SPECS = [HostSpec("gpu01", bystanders=10), HostSpec("gpu02", bystanders=10),
             HostSpec("bad03", scenario="key_refused", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.address = {name: cls.fleet.hosts[name].address for name in ("gpu01", "gpu02")}
        cls.offered = fingerprints(cls.fleet.known_hosts)

    def path(self, name, text=None):
        path = os.path.join(self.tmp, name)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        return path

    def test_a_stalled_agent_ends_by_the_connect_timeout(self):
        agent = StalledAgent(self.tmp)
        try:
            env = dict(os.environ, SSH_AUTH_SOCK=agent.path)
            code, report, stderr, took = run_fleetreap(
                self.fleet.inventory, "--known-hosts", self.fleet.known_hosts,
                "--connect-timeout", "3s", "--retries", "2", "--deadline", "20s",
                "--quiet", env=env)
            self.assertIsNotNone(report, stderr)
            hosts = by_name(report)
            bad = hosts["bad03"]
            self.assertEqual(bad["status"], "unreachable", bad["error_message"])
            self.assertEqual(bad["error_kind"], "auth")
            self.assertIn(f"ssh-agent at {agent.path} did not answer", bad["error_message"])
            self.assertEqual(bad["attempts"], 1)
            self.assertLess(bad["duration_ms"], 5000)
            for name in ("gpu01", "gpu02"):
                self.assertEqual(hosts[name]["error_kind"], None, hosts[name]["error_message"])
                self.assertEqual(len(hosts[name]["gpus_before"]), 8)
            self.assertLess(took, 15, stderr)
            print(f"\nstalled agent: bad03 failed after {bad['duration_ms']} ms, "
                  f"run {took:.1f} s")

            # --no-agent never asks it: the refusal names only the key.
            code, report, stderr, took = run_fleetreap(
                self.fleet.inventory, "--known-hosts", self.fleet.known_hosts,
                "--connect-timeout", "3s", "--limit", "bad03", "--no-agent", "--quiet",
                env=env)
            bad = by_name(report)["bad03"]
            self.assertEqual(bad["error_kind"], "auth")
            self.assertNotIn("ssh-agent", bad["error_message"])
            self.assertLess(bad["duration_ms"], 2500)
        finally:
            agent.close()

    def test_a_key_named_twice_is_offered_and_listed_once(self):
        # The inventory's key and --identity naming the same key under another
        # path (here a copy): offered once, listed once.
        copy = self.path("fleet-key-copy", read(self.fleet.key))
        os.chmod(copy, 0o600)
        code, report, stderr, _ = run_fleetreap(
            self.fleet.inventory, "--known-hosts", self.fleet.known_hosts, "--limit", "bad03",
            "--no-agent", "--identity", copy, "--quiet")
        bad = by_name(report)["bad03"]
        self.assertEqual(bad["error_kind"], "auth", stderr)
        message = bad["error_message"]
        self.assertEqual(message.count(self.fleet.key + ": refused by the server"), 1, message)
        self.assertNotIn(copy, message)

    def test_off_warns_once_and_records_every_fingerprint(self):
        code, report, stderr, _ = run_fleetreap(
            self.fleet.inventory, "--known-hosts", self.path("off_empty", ""),
            "--host-key-policy", "off", "--limit", "gpu01,gpu02", "--forks", "2")
        self.assertIsNotNone(report, stderr)
        self.assertEqual(stderr.count(WARNING), 1, stderr)
        self.assertEqual(report["host_key_policy"], "off")
        for name, address in self.address.items():
            host = by_name(report)[name]
            self.assertEqual(host["error_kind"], None, host["error_message"])
            self.assertEqual(host["host_key_fingerprint"], self.offered[address])
        # Strict records them too, and says nothing.
        code, report, stderr, _ = run_fleetreap(
            self.fleet.inventory, "--known-hosts", self.fleet.known_hosts,
            "--limit", "gpu01")
        self.assertNotIn(WARNING, stderr)
        self.assertEqual(report["host_key_policy"], "strict")
        self.assertEqual(by_name(report)["gpu01"]["host_key_fingerprint"],
                         self.offered[self.address["gpu01"]])

    def test_accept_new_reads_every_known_hosts_file(self):
        # The config's global file records another key for gpu02, and gpu01
        # under an alias with another key in its second user file.
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        self.path("other_key")], check=True)
        other_key = " ".join(read(self.path("other_key.pub")).split()[:2])
        user1 = self.path("user1", "")
        user2 = self.path("user2", f"fleet-gpu01 {other_key}\n")
        global_file = self.path("global", f"# fleet\n{self.address['gpu02']} {other_key}\n")
        config = self.path("ssh_config",
                           f"Host {self.address['gpu01']}\n"
                           "  HostKeyAlias fleet-gpu01\n"
                           f"Host *\n  UserKnownHostsFile {user1} {user2}\n"
                           f"  GlobalKnownHostsFile {global_file}\n")
        code, report, stderr, _ = run_fleetreap(
            self.fleet.inventory, "--ssh-config-file", config, "--host-key-policy",
            "accept-new", "--limit", "gpu01,gpu02", "--quiet")
        self.assertIsNotNone(report, stderr)
        hosts = by_name(report)
        for name, where in (("gpu01", f"{user2}:1"), ("gpu02", f"{global_file}:2")):
            self.assertEqual(hosts[name]["error_kind"], "host_key", hosts[name]["error_message"])
            self.assertIn("CHANGED", hosts[name]["error_message"])
            self.assertIn(where, hosts[name]["error_message"])
        self.assertEqual(read(user1), "")
        # Without the contradicting entries both are new: recorded in the
        # first user file only, gpu01 under its alias.
        self.path("user2", "")
        self.path("global", "")
        code, report, stderr, _ = run_fleetreap(
            self.fleet.inventory, "--ssh-config-file", config, "--host-key-policy",
            "accept-new", "--limit", "gpu01,gpu02", "--quiet")
        self.assertEqual({h["error_kind"] for h in report["hosts"]}, {None}, stderr)
        names = sorted(line.split()[0] for line in read(user1).splitlines())
        self.assertEqual(names, sorted(["fleet-gpu01", self.address["gpu02"]]))
        self.assertEqual(read(user2), "")
        self.assertEqual(read(global_file), "")

    def test_report_temp_names_are_never_followed(self):
        victim = self.path("victim", "precious\n")
        target = self.path("report_dir_json")
        # The old writer used PATH.tmp.<its pid>: plant the name for the next
        # PIDs the binary could get, pointing at the victim.
        planted = []
        base = int(read("/proc/sys/kernel/ns_last_pid"))
        for pid in range(base + 1, base + 3000):
            name = f"{target}.tmp.{pid}"
            os.symlink(victim, name)
            planted.append(name)
        try:
            argv = fleetreap_argv(self.fleet, "--limit", "gpu01", "--playbook", INSPECT,
                                  "--quiet", "--json", target, identity=False)
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            self.assertIn(proc.returncode, (0, 1), proc.stderr)
            self.assertEqual(read(victim), "precious\n")
            self.assertFalse(os.path.islink(target))
            self.assertEqual(json.loads(read(target))["hosts"][0]["name"], "gpu01")
        finally:
            for name in planted:
                if os.path.lexists(name):
                    os.unlink(name)

    def test_log_dir_is_ours_alone(self):
        def run(log_dir):
            argv = fleetreap_argv(self.fleet, "--limit", "gpu01", "--playbook", INSPECT,
                                  "--quiet", "--color", "never", "--log-dir", log_dir)
            return subprocess.run(argv, capture_output=True, text=True, timeout=120)

        fresh = os.path.join(self.tmp, "logs", "run1")
        proc = run(fresh)
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.assertEqual(os.stat(fresh).st_mode & 0o7777, 0o700)
        self.assertEqual(os.stat(os.path.join(fresh, "gpu01.log")).st_mode & 0o7777, 0o600)

        # A local user's /tmp/fleetreap-logs: writable by others, theirs, or
        # holding a planted symlink. Refused before any host is touched.
        victim = self.path("sudoers-victim", "precious\n")
        shared = os.path.join(self.tmp, "shared-logs")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        theirs = os.path.join(self.tmp, "their-logs")
        os.mkdir(theirs, 0o755)
        os.chown(theirs, 1000, 1000)
        planted = os.path.join(self.tmp, "planted-logs")
        os.mkdir(planted, 0o700)
        os.symlink(victim, os.path.join(planted, "gpu01.log"))
        cases = [(shared, "writable by its group or others (mode 1777); make it 0700"),
                 (theirs, f"owned by uid 1000, not by uid {os.geteuid()} (this user)"),
                 (planted, "gpu01.log is a symbolic link; refusing to write through it")]
        for log_dir, why in cases:
            proc = run(log_dir)
            self.assertEqual((proc.returncode, proc.stderr),
                             (64, f"fleetreap: --log-dir {log_dir}: {why}\n"))
        self.assertEqual(read(victim), "precious\n")


if __name__ == "__main__":
    unittest.main()
