"""Integration tests of the SSH transport and the fan-out: the real fleetreap
binary against a simulated fleet (tests/sim) over real SSH.

Covers every connection error kind (dns, refused, connect_timeout,
banner_timeout, host_key, auth, sudo), retries of the transient kinds only,
the host-key policies (strict, accept-new, off; plain and hashed entries), a
command that hangs on the host being ended there, and a 200-host run where
every host is accounted for while 200 sessions append to one known_hosts.
stdlib unittest only; FLEETREAP_BIN names the binary.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import unittest

from fleet_case import (FleetCase, by_name, fleetreap_argv, playbook_path, run_json_file,
                        scratch_fleet)
from simfleet import HostSpec

INSPECT = playbook_path("inspect.yaml")


def run_fleetreap(inventory, known_hosts, *extra, timeout=300):
    """Runs fleetreap with --json to a file; returns (exit code, report, stderr)."""
    proc, report = run_json_file("--hosts", inventory, "--known-hosts", known_hosts, "--quiet",
                                 "--color", "never", *extra, timeout=timeout)
    return proc.returncode, report, proc.stderr


class FullBacklogListener:
    """A listener whose accept queue is full, so the kernel drops new SYNs: a
    connect to it neither succeeds nor is refused (connect_timeout)."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(0)
        self.port = self.server.getsockname()[1]
        self.fillers = []
        for _ in range(3):  # listen(0) still queues one; fill it and more
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fillers.append(s)

    def close(self):
        for s in self.fillers:
            s.close()
        self.server.close()


class ErrorKindsTest(FleetCase):
    """One mixed fleet; one run; each host must end with its own kind."""

    PREFIX = "fleetreap-transport-"
    SPECS = [
        HostSpec("ok01", scenario="clean"),
        HostSpec("refused02", scenario="unreachable"),
        HostSpec("tarpit03", scenario="no_banner"),
        HostSpec("badkey04", scenario="key_refused"),
        HostSpec("changed05", scenario="host_key_changed"),
        HostSpec("nosudo06", scenario="no_sudo"),
        HostSpec("hang07", scenario="nvidia_smi_hang"),
        HostSpec("ok08", scenario="vllm_incident"),
    ]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.listener = FullBacklogListener()
        cls.inventory = os.path.join(cls.tmp, "mixed.yaml")
        with open(cls.fleet.inventory) as f:
            text = f.read()
        extra = (
            "    dns09:\n"
            "      ansible_host: no-such-host.invalid\n"
            f"      ansible_ssh_private_key_file: {cls.fleet.key}\n"
            "    slow10:\n"
            "      ansible_host: 127.0.0.1\n"
            f"      ansible_port: {cls.listener.port}\n"
            f"      ansible_ssh_private_key_file: {cls.fleet.key}\n")
        text = text.replace("  children:\n", extra + "  children:\n", 1)
        with open(cls.inventory, "w") as f:
            f.write(text)
        cls.code, cls.report, cls.stderr = run_fleetreap(
            cls.inventory, cls.fleet.known_hosts, "--playbook", INSPECT,
            "--connect-timeout", "4s", "--command-timeout", "20s", "--retries", "1",
            "--forks", "4")

    @classmethod
    def tearDownClass(cls):
        cls.listener.close()
        super().tearDownClass()

    def test_every_host_is_accounted_for(self):
        self.assertIsNotNone(self.report, self.stderr)
        names = [h["name"] for h in self.report["hosts"]] + self.report["not_started"]
        self.assertEqual(names, ["ok01", "refused02", "tarpit03", "badkey04", "changed05",
                                 "nosudo06", "hang07", "ok08", "dns09", "slow10"])
        self.assertEqual(self.code & 2, 2)  # unreachable hosts set bit 2

    def test_each_host_has_its_kind(self):
        # host: (status, error_kind, attempts); transient kinds are retried once.
        expected = {
            "ok01": ("clean", None, 1),
            "refused02": ("unreachable", "refused", 2),
            "tarpit03": ("unreachable", "banner_timeout", 2),
            "badkey04": ("unreachable", "auth", 1),
            "changed05": ("unreachable", "host_key", 1),
            "nosudo06": ("failed", "sudo", 1),
            "dns09": ("unreachable", "dns", 1),
            "slow10": ("unreachable", "connect_timeout", 2),
        }
        hosts = by_name(self.report)
        for name, (status, kind, attempts) in expected.items():
            with self.subTest(host=name):
                host = hosts[name]
                self.assertEqual(host["status"], status, host["error_message"])
                self.assertEqual(host["error_kind"], kind, host["error_message"])
                self.assertEqual(host["attempts"], attempts)

    def test_reached_hosts_are_not_disturbed_by_failing_ones(self):
        hosts = by_name(self.report)
        self.assertEqual(hosts["ok08"]["status"], "dirty")   # inspect: busy, untouched
        self.assertEqual(len(hosts["ok08"]["gpus_before"]), 8)

    def test_changed_host_key_message(self):
        host = by_name(self.report)["changed05"]
        message = host["error_message"]
        self.assertIn("changed05", message)
        self.assertIn("SHA256:", message)
        self.assertRegex(message, r"known_hosts:\d+")

    def test_messages_name_the_host(self):
        for name in ("refused02", "tarpit03", "badkey04", "dns09", "slow10"):
            with self.subTest(host=name):
                host = by_name(self.report)[name]
                self.assertTrue(name in host["error_message"] or
                                host["address"] in host["error_message"],
                                host["error_message"])

    def test_hung_command_is_ended_on_the_host(self):
        host = by_name(self.report)["hang07"]
        self.assertNotEqual(host["status"], "clean")
        # timeout -k on the host side ended the wedged nvidia-smi, not only us.
        left = self.fleet.exec("hang07", "ps -eo comm= | grep -c '^nvidia-smi$' || true")
        self.assertEqual(left.stdout.strip(), "0", left.stdout)


class HostKeyPolicyTest(FleetCase):
    PREFIX = "fleetreap-hostkeys-"
    SPECS = [HostSpec("gpu01"), HostSpec("gpu02"), HostSpec("gpu03", scenario="host_key_changed")]

    def known_hosts_copy(self, name, text=None):
        path = os.path.join(self.tmp, name)
        if text is None:
            shutil.copy(self.fleet.known_hosts, path)
        else:
            with open(path, "w") as f:
                f.write(text)
        return path

    def run_policy(self, known_hosts, policy, limit="gpu01,gpu02"):
        code, report, stderr = run_fleetreap(
            self.fleet.inventory, known_hosts, "--playbook", INSPECT,
            "--host-key-policy", policy, "--limit", limit, "--retries", "0",
            "--connect-timeout", "30s")
        self.assertIsNotNone(report, stderr)
        return by_name(report)

    def test_strict_refuses_unknown_hosts(self):
        hosts = self.run_policy(self.known_hosts_copy("empty", ""), "strict")
        for host in hosts.values():
            self.assertEqual(host["error_kind"], "host_key")
            self.assertIn("not in known_hosts", host["error_message"])

    def test_the_hint_for_an_unknown_key_adds_it_as_written(self):
        path = self.known_hosts_copy("keyscanned", "")
        hosts = self.run_policy(path, "strict", limit="gpu01")
        message = hosts["gpu01"]["error_message"]
        hint = re.search(r"add it: (ssh-keyscan [^;]+ >> \S+); or use", message)
        self.assertIsNotNone(hint, message)
        self.assertTrue(hint.group(1).endswith(">> " + path), message)
        subprocess.run(hint.group(1), shell=True, check=True, capture_output=True, timeout=60)
        hosts = self.run_policy(path, "strict", limit="gpu01")
        self.assertEqual(hosts["gpu01"]["status"], "clean", hosts["gpu01"]["error_message"])

    def test_accept_new_records_then_strict_accepts(self):
        path = self.known_hosts_copy("fresh", "")
        hosts = self.run_policy(path, "accept-new")
        self.assertEqual({h["status"] for h in hosts.values()}, {"clean"})
        with open(path) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 2)
        hosts = self.run_policy(path, "strict")
        self.assertEqual({h["status"] for h in hosts.values()}, {"clean"})
        with open(path) as f:
            self.assertEqual(len(f.read().splitlines()), 2)

    def test_accept_new_still_refuses_a_changed_key(self):
        hosts = self.run_policy(self.known_hosts_copy("changed"), "accept-new", limit="gpu03")
        self.assertEqual(hosts["gpu03"]["error_kind"], "host_key")

    def test_off_connects_despite_a_changed_key(self):
        hosts = self.run_policy(self.known_hosts_copy("off"), "off", limit="gpu03")
        self.assertEqual(hosts["gpu03"]["error_kind"], None)

    def test_hashed_entries(self):
        path = self.known_hosts_copy("hashed")
        subprocess.run(["ssh-keygen", "-q", "-H", "-f", path], check=True,
                       capture_output=True)
        with open(path) as f:
            self.assertTrue(f.read().startswith("|1|"))
        hosts = self.run_policy(path, "strict")
        self.assertEqual({h["status"] for h in hosts.values()}, {"clean"})


class ConnectionLostTest(unittest.TestCase):
    """sshd dies under a running command: connection_lost, never retried
    (the escalation had begun), and the other host finishes all the same."""

    def test_sshd_dying_mid_command(self):
        specs = [HostSpec("gpu01", scenario="nvidia_smi_hang"), HostSpec("gpu02", scenario="clean")]
        with scratch_fleet("fleetreap-lost-", specs) as (tmp, fleet):
            out = os.path.join(tmp, "report.json")
            proc = subprocess.Popen(
                fleetreap_argv(fleet, "--playbook", INSPECT, "--json", out, "--quiet",
                               "--retries", "2", "--command-timeout", "120s",
                               identity=False),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                # Wait until fleetreap's command hangs in nvidia-smi on gpu01,
                # then end every sshd of that host (listener and session),
                # by PID, inside the host's own PID namespace.
                for _ in range(600):
                    ps = fleet.exec("gpu01", "ps -eo comm= | grep -c '^nvidia-smi$'")
                    if ps.stdout.strip() not in ("", "0"):
                        break
                    time.sleep(0.05)
                fleet.exec("gpu01", "for p in /proc/[0-9]*; do "
                           "[ \"$(readlink $p/exe)\" = /usr/sbin/sshd ] && "
                           "kill -KILL ${p#/proc/}; done; true")
                _, stderr = proc.communicate(timeout=120)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            with open(out) as f:
                report = json.load(f)
            hosts = by_name(report)
            lost = hosts["gpu01"]
            self.assertEqual(lost["error_kind"], "connection_lost", lost["error_message"])
            self.assertEqual(lost["attempts"], 1)
            self.assertEqual(hosts["gpu02"]["status"], "clean")
            self.assertEqual(proc.returncode & 2, 2)


class InterruptTest(unittest.TestCase):
    """Ctrl-C while a host is in a command: that host finishes normally (the
    signal never reaches a worker's session), the rest are never started."""

    def test_ctrl_c_lets_the_host_in_flight_finish(self):
        specs = [HostSpec("gpu01", scenario="nvidia_smi_hang"), HostSpec("gpu02"),
                 HostSpec("gpu03")]
        with scratch_fleet("fleetreap-interrupt-", specs) as (tmp, fleet):
            out = os.path.join(tmp, "report.json")
            proc = subprocess.Popen(
                fleetreap_argv(fleet, "--playbook", INSPECT, "--json", out, "--quiet",
                               "--forks", "1", identity=False),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                for _ in range(600):
                    ps = fleet.exec("gpu01", "ps -eo comm= | grep -c '^nvidia-smi$'")
                    if ps.stdout.strip() not in ("", "0"):
                        break
                    time.sleep(0.05)
                proc.send_signal(signal.SIGINT)
                _, stderr = proc.communicate(timeout=120)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            with open(out) as f:
                report = json.load(f)
            self.assertTrue(report["interrupted"])
            self.assertEqual([h["name"] for h in report["hosts"]], ["gpu01"])
            self.assertEqual(report["not_started"], ["gpu02", "gpu03"])
            self.assertNotEqual(report["hosts"][0]["error_kind"], "connection_lost",
                                report["hosts"][0]["error_message"])


class LargeFleetTest(unittest.TestCase):
    """200 hosts, 200 sessions at once, all appending to one known_hosts."""

    def test_200_hosts_all_accounted_for(self):
        # Ten bystanders each, not a hundred: 200 full hosts take 22,600 of
        # this machine's 32,768 PIDs, and the test command must pass while a
        # second copy of it runs.
        specs = [HostSpec(f"gpu{i:03d}", bystanders=10) for i in range(1, 201)]
        with scratch_fleet("fleetreap-large-", specs, timeout=240) as (tmp, fleet):
            known_hosts = os.path.join(tmp, "accepted_known_hosts")
            code, report, stderr = run_fleetreap(
                fleet.inventory, known_hosts, "--playbook", INSPECT,
                "--host-key-policy", "accept-new", "--forks", "200",
                # 200 handshakes at once on a small shared machine can be
                # slow; this test is about accounting, not speed.
                "--connect-timeout", "60s")
            self.assertIsNotNone(report, stderr)
            names = [h["name"] for h in report["hosts"]]
            self.assertEqual(names, [f"gpu{i:03d}" for i in range(1, 201)])
            self.assertEqual(report["not_started"], [])
            statuses = {h["name"]: h["status"] for h in report["hosts"]}
            self.assertEqual(set(statuses.values()), {"clean"},
                             {n: s for n, s in statuses.items() if s != "clean"})
            self.assertEqual(code, 0)
            with open(known_hosts) as f:
                lines = f.read().splitlines()
            self.assertEqual(len(lines), 200)
            addresses = sorted(line.split()[0] for line in lines)
            self.assertEqual(addresses, sorted(h.address for h in fleet.hosts.values()))
            for line in lines:
                self.assertEqual(len(line.split()), 3, line)


if __name__ == "__main__":
    unittest.main()
