"""GPU hosts behind a bastion: --ssh-config's ProxyCommand and ProxyJump, over
real sshd, through a simulated bastion host: the real OpenSSH client as the
ProxyCommand (ssh -W), fleetreap's own connection to the bastion for a
ProxyJump (test_bastion.py has more of that).

The GPU hosts are named in the inventory by names that do not resolve
(gpu01.internal); only the ssh config says where they are and how to get
there. Checks that the escalation works through the bastion (against the
fleet's ground truth), by a ProxyCommand and by a ProxyJump that only the
--ssh-config-file names, that a hung proxy is bounded by --connect-timeout and
its processes are ended, that a dead bastion or target is reported with the
proxy's own words, and that ProxyJump works from ~/.ssh/config as a user
keeps it. That last test runs fleetreap in a private mount namespace whose
/root is a scratch directory, so this machine's own ~/.ssh is never read or
written. Needs root and the built sim tools.
"""

import json
import os
import shlex
import subprocess
import time
import unittest

from fleet_case import BIN, FleetCase, by_name, parse_report, playbook_path
from host_setup import HostSetup
from simfleet import HostSpec

INSPECT = playbook_path("inspect.yaml")


class ProxyTest(FleetCase):
    PREFIX = "proxytest-"
    SPECS = [HostSpec("bastion", scenario="clean"),
             HostSpec("gpu01", scenario="vllm_incident"),
             HostSpec("gpu02", scenario="clean")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bastion = cls.fleet.hosts["bastion"].address
        # An address in the fleet's own /24 where nothing listens.
        cls.nowhere = cls.bastion.rsplit(".", 1)[0] + ".250"
        cls.inventory = os.path.join(cls.tmp, "inventory.yaml")
        with open(cls.inventory, "w") as f:
            f.write("all:\n  vars:\n    ansible_user: root\n"
                    f"    ansible_ssh_private_key_file: {cls.fleet.key}\n  hosts:\n"
                    "    gpu01:\n      ansible_host: gpu01.internal\n"
                    "    gpu02:\n      ansible_host: gpu02.internal\n")

    def host_blocks(self, gpu02_address=None):
        """ssh config lines mapping the .internal names to the sim hosts. They
        come after the "Host *.internal" blocks: libssh 0.10 matches later Host
        lines against the HostName already set, unlike OpenSSH."""
        gpu02 = gpu02_address or self.fleet.hosts["gpu02"].address
        return (f"Host gpu01.internal\n  HostName {self.fleet.hosts['gpu01'].address}\n"
                f"Host gpu02.internal\n  HostName {gpu02}\n")

    def ssh_to_bastion(self, bastion=None):
        return (f"ssh -F /dev/null -i {self.fleet.key} -o BatchMode=yes "
                f"-o UserKnownHostsFile={self.fleet.known_hosts} "
                f"-o StrictHostKeyChecking=yes root@{bastion or self.bastion}")

    def run_fleetreap(self, config, *extra, wrap=None):
        argv = [BIN, "--hosts", self.inventory, "--known-hosts", self.fleet.known_hosts,
                "--json", "-", "--quiet", "--color", "never", "--retries", "0", *extra]
        if config is not None:
            path = os.path.join(self.tmp, "ssh_config")
            with open(path, "w") as f:
                f.write(config)
            argv += ["--ssh-config-file", path]
        if wrap:
            argv = wrap(argv)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        return proc.returncode, by_name(parse_report(proc))

    def test_escalation_through_a_bastion_proxy_command(self):
        log = os.path.join(self.tmp, "proxy.log")
        config = (
            "Host *.internal\n"
            f"  ProxyCommand sh -c 'echo %n >> {log}; exec {self.ssh_to_bastion()} -W %h:%p'\n"
            ) + self.host_blocks()
        code, hosts = self.run_fleetreap(config, "--playbook", playbook_path("vllm.yaml"))
        self.assertEqual(code, 0, hosts)
        self.assertEqual(hosts["gpu01"]["status"], "clean", hosts["gpu01"].get("error_message"))
        self.assertEqual(hosts["gpu01"]["units_stopped"], ["vllm.service"])
        self.assertEqual(hosts["gpu01"]["term_sent"], 8)
        with open(log) as f:
            self.assertEqual(sorted(f.read().split()), ["gpu01.internal", "gpu02.internal"])
        truth = self.fleet.ground_truth()
        self.assertTrue(truth["gpu01"]["clean"], json.dumps(truth["gpu01"])[:1500])
        self.assertEqual(truth["bastion"]["gpu_processes"], [])

    def test_escalation_through_a_proxy_jump_in_the_ssh_config_file(self):
        # The file given by --ssh-config-file, not ~/.ssh/config, says where
        # the bastion is: fleetreap's own connection to it reads that file.
        # A workload of its own on gpu02 (the other tests share the fleet).
        workers = HostSetup(self.fleet, self.fleet.host("gpu02")).workload(gpus="0-3")
        config = ("Host *.internal\n  ProxyJump jump\n" + self.host_blocks() +
                  f"Host jump\n  HostName {self.bastion}\n  User root\n")
        code, hosts = self.run_fleetreap(config, "--limit", "gpu02")
        self.assertEqual(code, 0, hosts)
        self.assertEqual(hosts["gpu02"]["status"], "clean", hosts["gpu02"].get("error_message"))
        self.assertEqual(hosts["gpu02"]["term_sent"], len(workers) - 1)  # not the parent
        truth = self.fleet.ground_truth()
        self.assertTrue(truth["gpu02"]["clean"], json.dumps(truth["gpu02"])[:1500])

    def test_a_hung_proxy_is_bounded_and_ended(self):
        pids = os.path.join(self.tmp, "hung")
        os.makedirs(pids, exist_ok=True)
        config = (
            "Host *.internal\n"
            f"  ProxyCommand sh -c 'echo $$ > {pids}/%n; sleep 600 & wait'\n"
            ) + self.host_blocks()
        start = time.monotonic()
        code, hosts = self.run_fleetreap(config, "--connect-timeout", "2s", "--playbook", INSPECT)
        took = time.monotonic() - start
        self.assertEqual(code, 2)
        for name in ("gpu01", "gpu02"):
            self.assertEqual(hosts[name]["error_kind"], "connect_timeout", hosts[name])
            self.assertIn("no SSH banner through the ProxyCommand", hosts[name]["error_message"])
        self.assertLess(took, 60, "the proxy was waited on, not bounded")  # 600 s if it hung
        for name in os.listdir(pids):
            with open(os.path.join(pids, name)) as f:
                pid = int(f.read())
            self.assertFalse(os.path.exists(f"/proc/{pid}"), f"proxy {pid} for {name} left running")

    def test_a_dead_bastion_or_target_says_why(self):
        config = (
            "Host gpu01.internal\n"
            f"  ProxyCommand {self.ssh_to_bastion(self.nowhere)} -W %h:%p\n"
            "Host gpu02.internal\n"
            f"  ProxyCommand {self.ssh_to_bastion()} -W %h:%p\n"
            ) + self.host_blocks(gpu02_address=self.nowhere)
        code, hosts = self.run_fleetreap(config, "--playbook", INSPECT)
        self.assertEqual(code, 2)
        # The bastion refuses; then the bastion is fine but the target refuses.
        self.assertEqual(hosts["gpu01"]["error_kind"], "refused")
        self.assertIn(f"ssh: connect to host {self.nowhere} port 22: Connection refused",
                      hosts["gpu01"]["error_message"])
        self.assertEqual(hosts["gpu02"]["error_kind"], "refused", hosts["gpu02"]["error_message"])
        self.assertIn("open failed: connect failed: Connection refused",
                      hosts["gpu02"]["error_message"])

    def test_proxy_jump_from_the_users_own_ssh_config(self):
        # ~/.ssh as a user keeps it, in a scratch /root seen only by this run.
        home = os.path.join(self.tmp, "home")
        ssh_dir = os.path.join(home, ".ssh")
        os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
        with open(self.fleet.key) as src, open(os.path.join(ssh_dir, "id_ed25519"), "w") as dst:
            dst.write(src.read())
        with open(self.fleet.known_hosts) as src, \
                open(os.path.join(ssh_dir, "known_hosts"), "w") as dst:
            dst.write(src.read())
        with open(os.path.join(ssh_dir, "config"), "w") as f:
            f.write("Host *.internal\n  ProxyJump jump\n" + self.host_blocks() +
                    f"Host jump\n  HostName {self.bastion}\n  User root\n  BatchMode yes\n")
        for name in os.listdir(ssh_dir):
            os.chmod(os.path.join(ssh_dir, name), 0o600)

        def in_scratch_home(argv):
            return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    f"mount --bind {shlex.quote(home)} /root && exec \"$@\"", "sh",
                    *argv, "--ssh-config"]

        code, hosts = self.run_fleetreap(None, "--playbook", INSPECT, "--limit", "gpu02",
                                         wrap=in_scratch_home)
        self.assertEqual(code, 0, hosts)
        self.assertEqual(hosts["gpu02"]["status"], "clean", hosts["gpu02"])


if __name__ == "__main__":
    unittest.main()
