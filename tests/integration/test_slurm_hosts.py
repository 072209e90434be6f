"""--hosts slurm:PARTITION end to end: fleetreap asks `sinfo` for
the partition's nodes and reaches them over real SSH like inventory hosts
(--limit with the partition as a group, --list-hosts, --ssh-config for the
addresses). No Slurm runs here: a stand-in `sinfo` first on PATH answers as
the real one does for `sinfo --noheader --Node --partition=P --format=%N`
(one line per node and state) and records its arguments.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import subprocess
import unittest

from fleet_case import BIN, FleetCase
from simfleet import HostSpec

SINFO = """#!/bin/sh
echo "$@" >> "{log}"
if [ "$3" != "--partition=gpu" ]; then
  echo "sinfo: error: invalid partition specified: ${{3#--partition=}}" >&2
  exit 1
fi
printf 'node01\\nnode02\\nnode01\\n'
"""


class SlurmHostsTest(FleetCase):
    PREFIX = "slurmhoststest-"
    SPECS = [HostSpec("node01", scenario="vllm_incident"),
             HostSpec("node02", scenario="clean")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin = os.path.join(cls.tmp, "bin")
        os.mkdir(cls.bin)
        cls.sinfo_log = os.path.join(cls.tmp, "sinfo.log")
        with open(os.path.join(cls.bin, "sinfo"), "w") as f:
            f.write(SINFO.format(log=cls.sinfo_log))
        os.chmod(os.path.join(cls.bin, "sinfo"), 0o755)
        cls.ssh_config = os.path.join(cls.tmp, "ssh_config")
        with open(cls.ssh_config, "w") as f:
            for name in ("node01", "node02"):
                f.write(f"Host {name}\n  HostName {cls.fleet.hosts[name].address}\n")
        cls.empty = os.path.join(cls.tmp, "empty")
        os.mkdir(cls.empty)

    def fleetreap(self, *args, path=None):
        env = dict(os.environ, PATH=path or f"{self.bin}:{os.environ['PATH']}")
        argv = [BIN, "--ssh-config-file", self.ssh_config, "--known-hosts",
                self.fleet.known_hosts, "--identity", self.fleet.key, "--user", "root",
                "--color", "never", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)

    def test_dry_run_over_the_partition(self):
        proc = self.fleetreap("--hosts", "slurm:gpu", "--dry-run", "--json", "-", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        hosts = {h["name"]: h for h in report["hosts"]}
        self.assertEqual(list(hosts), ["node01", "node02"])
        self.assertEqual(hosts["node01"]["address"], "node01")
        truth = {p["pid"] for p in self.fleet.ground_truth()["node01"]["gpu_processes"]}
        planned = {h["pid"] for h in hosts["node01"]["holders"] if h["fate"] == "would_term"}
        self.assertEqual(planned, truth)
        self.assertEqual(hosts["node02"]["status"], "clean")
        with open(self.sinfo_log) as f:
            self.assertIn("--noheader --Node --partition=gpu --format=%N\n", f.read())

    def test_limit_and_list_hosts_select_as_in_an_inventory(self):
        proc = self.fleetreap("--hosts", "slurm:gpu", "--limit", "gpu:!node02", "--list-hosts")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["node01", "node01", "22", "root"])

    def test_sinfo_errors_exit_65(self):
        proc = self.fleetreap("--hosts", "slurm:cpu", "--list-hosts")
        self.assertEqual(proc.returncode, 65)
        self.assertEqual(proc.stderr, 'fleetreap: slurm:cpu: sinfo failed (exit 1): "sinfo: '
                                      'error: invalid partition specified: cpu"\n')
        proc = self.fleetreap("--hosts", "slurm:gpu", "--list-hosts", path=self.empty)
        self.assertEqual(proc.returncode, 65)
        self.assertEqual(proc.stderr, "fleetreap: slurm:gpu: sinfo not found (fleetreap runs it "
                                      "where Slurm's commands work)\n")
        proc = self.fleetreap("--hosts", "slurm:gpu;reboot", "--list-hosts")
        self.assertEqual(proc.returncode, 64)


if __name__ == "__main__":
    unittest.main(verbosity=2)
