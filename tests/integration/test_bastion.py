"""Hosts behind a ProxyJump bastion, named in --ssh-config-file: one login on
the bastion for the whole run, each host's session over its own forwarded
channel (direct-tcpip) of that one connection.

The bastion is a simulated host whose sshd is left at OpenSSH's defaults
(MaxStartups 10:30:100) with LogLevel VERBOSE, so its log has one "Accepted
publickey" line per login: 100 hosts at --forks 64 must all be reached with
exactly one; hosts one after another (--forks 1) reuse it. Also: a jump
chain (the same bastion twice: two logins, the second through the first); a
dead bastion, a silent one (bounded by --connect-timeout), one whose host
key is not known and a target the bastion cannot reach each say why for
every host behind them; and a ProxyCommand to the same bastion (one `ssh -W` login per
host, which fleetreap paces under MaxStartups) still reaches every host.
Needs root and the built sim tools.
"""

import os
import re
import socket
import subprocess
import time
import unittest

from fleet_case import BIN, FleetCase, by_name, parse_report, playbook_path
from simfleet import HostSpec

INSPECT = playbook_path("inspect.yaml")
HOSTS = 100
NAMES = [f"gpu{i:03d}" for i in range(1, HOSTS + 1)]


def accepted_logins(log):
    """The "Accepted publickey" lines in an sshd log (LogLevel VERBOSE)."""
    with open(log, errors="replace") as f:
        return len(re.findall(r"Accepted publickey for ", f.read()))


class BastionTest(FleetCase):
    PREFIX = "bastiontest-"
    # Lean hosts (ten bystanders, two GPUs): this suite is about the path
    # to them, not what runs there.
    SPECS = [HostSpec("bastion", gpus=1, bystanders=0)] + [
        HostSpec(name, gpus=2, bystanders=10) for name in NAMES]
    UP = {"timeout": 240}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        bastion = cls.fleet.hosts["bastion"]
        cls.bastion = bastion.address
        cls.nowhere = cls.bastion.rsplit(".", 1)[0] + ".250"
        cls.log = os.path.join(bastion.dir, "sshd.log")
        # OpenSSH's defaults for MaxStartups (the sim's hosts allow more).
        config = os.path.join(bastion.dir, "etc", "sshd_config")
        with open(config) as f:
            text = f.read()
        with open(config, "w") as f:
            f.write(re.sub(r"(?m)^MaxStartups .*$", "MaxStartups 10:30:100", text))
        from host_setup import HostSetup
        HostSetup(cls.fleet, bastion).sshd_options("LogLevel VERBOSE")
        cls.inventory = os.path.join(cls.tmp, "inventory.yaml")
        with open(cls.inventory, "w") as f:
            f.write("all:\n  vars:\n    ansible_user: root\n"
                    f"    ansible_ssh_private_key_file: {cls.fleet.key}\n  hosts:\n")
            for name in NAMES:
                f.write(f"    {name}:\n      ansible_host: {name}.internal\n")

    def host_blocks(self):
        """The .internal names of the GPU hosts, after the wildcard blocks
        (libssh 0.10 matches later Host lines against the HostName set)."""
        return "".join(f"Host {name}.internal\n  HostName {self.fleet.hosts[name].address}\n"
                       for name in NAMES)

    def jump_config(self, jump="jump", bastion=None):
        return (f"Host *.internal\n  ProxyJump {jump}\n" + self.host_blocks() +
                f"Host jump\n  HostName {bastion or self.bastion}\n  User root\n")

    def run_fleetreap(self, config, *extra, known_hosts=None):
        path = os.path.join(self.tmp, "ssh_config")
        with open(path, "w") as f:
            f.write(config)
        argv = [BIN, "--hosts", self.inventory, "--known-hosts",
                known_hosts or self.fleet.known_hosts, "--ssh-config-file", path,
                "--playbook", INSPECT, "--json", "-", "--quiet", "--color", "never",
                "--retries", "0", *extra]
        before = accepted_logins(self.log)
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=400)
        took = time.monotonic() - start
        time.sleep(0.2)  # sshd writes its log line right after the login
        return proc.returncode, by_name(parse_report(proc)), accepted_logins(self.log) - before, took

    def assert_all_clean(self, hosts):
        bad = {n: h.get("error_message", h["status"]) for n, h in hosts.items()
               if h["status"] != "clean"}
        self.assertEqual(len(bad), 0, f"{len(bad)} not clean, first: {list(bad.items())[:3]}")

    def test_100_hosts_behind_one_bastion_cost_one_login(self):
        code, hosts, logins, took = self.run_fleetreap(
            self.jump_config(), "--forks", "64", "--connect-timeout", "60s")
        self.assert_all_clean(hosts)
        self.assertEqual(sorted(hosts), NAMES)
        self.assertEqual(code, 0)
        self.assertEqual(logins, 1, f"{logins} logins on the bastion in {took:.1f} s")

    def test_hosts_one_after_another_reuse_the_connection(self):
        code, hosts, logins, _ = self.run_fleetreap(
            self.jump_config(), "--limit", "gpu00[1:3]", "--forks", "1")
        self.assertEqual(code, 0, hosts)
        self.assertEqual(logins, 1)

    def test_a_jump_chain_goes_through_each_hop(self):
        # "jump,jump": to the bastion through the bastion, as OpenSSH's
        # ProxyJump A,B reaches B through A.
        code, hosts, logins, _ = self.run_fleetreap(
            self.jump_config("jump,jump"), "--limit", "gpu00[1:8]", "--forks", "8")
        self.assertEqual(code, 0, hosts)
        self.assertEqual(sorted(hosts), NAMES[:8])
        self.assertEqual(logins, 2)

    def test_a_dead_bastion_says_why_for_every_host(self):
        code, hosts, logins, took = self.run_fleetreap(
            self.jump_config(bastion=self.nowhere), "--limit", "gpu00[1:9]",
            "--connect-timeout", "5s")
        self.assertEqual(code, 2)
        self.assertLess(took, 60)
        for name, host in hosts.items():
            self.assertEqual(host["error_kind"], "refused", host)
            self.assertIn(f"bastion jump (root@{self.nowhere}:22)", host["error_message"])
            self.assertIn("refused", host["error_message"])

    def test_a_silent_bastion_is_bounded_by_the_connect_timeout(self):
        # Takes the TCP connection (the kernel's backlog) and never speaks.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        port = silent.getsockname()[1]
        try:
            config = (f"Host *.internal\n  ProxyJump jump\n" + self.host_blocks() +
                      f"Host jump\n  HostName 127.0.0.1\n  Port {port}\n  User root\n")
            code, hosts, _, took = self.run_fleetreap(
                config, "--limit", "gpu00[1:9]", "--connect-timeout", "2s")
        finally:
            silent.close()
        self.assertEqual(code, 2)
        self.assertLess(took, 20, "a silent bastion was waited on, not bounded")
        for name, host in hosts.items():
            self.assertEqual(host["error_kind"], "banner_timeout", host)
            self.assertIn(f"bastion jump (root@127.0.0.1:{port})", host["error_message"])

    def test_a_bastion_with_an_unknown_host_key_is_refused(self):
        known_hosts = os.path.join(self.tmp, "known_hosts_without_bastion")
        with open(self.fleet.known_hosts) as f:
            lines = [line for line in f if not line.startswith(self.bastion + " ")]
        with open(known_hosts, "w") as f:
            f.writelines(lines)
        code, hosts, logins, _ = self.run_fleetreap(
            self.jump_config(), "--limit", "gpu00[1:4]", known_hosts=known_hosts)
        self.assertEqual(code, 2)
        self.assertEqual(logins, 0)
        for name, host in hosts.items():
            self.assertEqual(host["error_kind"], "host_key", host)
            self.assertIn("bastion jump", host["error_message"])
            self.assertIn(f"host key for jump ({self.bastion})", host["error_message"])

    def test_a_target_the_bastion_cannot_reach(self):
        config = (f"Host *.internal\n  ProxyJump jump\nHost gpu001.internal\n"
                  f"  HostName {self.nowhere}\n" + self.host_blocks() +
                  f"Host jump\n  HostName {self.bastion}\n  User root\n")
        code, hosts, logins, _ = self.run_fleetreap(config, "--limit", "gpu001,gpu002")
        self.assertEqual(code, 2, hosts)
        self.assertEqual(hosts["gpu002"]["status"], "clean", hosts["gpu002"])
        self.assertEqual(hosts["gpu001"]["error_kind"], "refused", hosts["gpu001"])
        self.assertIn("bastion jump", hosts["gpu001"]["error_message"])
        self.assertIn("Connection refused", hosts["gpu001"]["error_message"])
        self.assertEqual(logins, 1)

    def test_a_proxy_command_to_the_bastion_is_paced(self):
        ssh = (f"ssh -F /dev/null -i {self.fleet.key} -o BatchMode=yes "
               f"-o UserKnownHostsFile={self.fleet.known_hosts} "
               f"-o StrictHostKeyChecking=yes root@{self.bastion} -W %h:%p")
        config = f"Host *.internal\n  ProxyCommand {ssh}\n" + self.host_blocks()
        code, hosts, logins, took = self.run_fleetreap(
            config, "--limit", "gpu0[01:40]", "--forks", "40")
        self.assert_all_clean(hosts)
        self.assertEqual(code, 0)
        self.assertEqual(logins, 40)


if __name__ == "__main__":
    unittest.main()
