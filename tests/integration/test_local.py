"""--local end to end, inside a simulated host: the real fleetreap binary runs
in the host's own PID and mount namespaces (as a Slurm epilog or a Kubernetes
DaemonSet would run it on a node), with no SSH at all, and must leave the
host clean by the fleet's own ground truth while its protected daemon keeps
its PID. It never runs against this machine's own process table.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim"))

from simfleet import Fleet, HostSpec, scratch_dir  # noqa: E402

SOURCE = os.environ.get("FLEETREAP_SOURCE_DIR", os.path.join(HERE, "..", ".."))
BIN = os.environ.get("FLEETREAP_BIN", os.path.join(SOURCE, "build", "fleetreap"))


class LocalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch_dir(prefix="localtest-")
        cls.fleet = Fleet(os.path.join(cls.tmp, "fleet"))
        cls.fleet.up([HostSpec("node01", scenario="vllm_incident"),
                      HostSpec("node02", scenario="protected_daemons")])
        cls.before = cls.fleet.ground_truth()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.down()

    def run_local(self, host, *extra):
        # The binary is reachable inside the host: its mount namespace only
        # replaces /dev, /run, /etc files and /usr/local/bin.
        command = " ".join([BIN, "--local", "--json", "-", "--quiet", "--color", "never",
                            "--playbook", os.path.join(SOURCE, "playbooks", "vllm.yaml"),
                            *extra])
        proc = self.fleet.exec(host, command, timeout=120)
        self.assertIn("{", proc.stdout, proc.stderr[-2000:])
        return proc.returncode, json.loads(proc.stdout[proc.stdout.index("{"):])

    def test_dry_run_then_real_run_inside_the_host(self):
        rc, dry = self.run_local("node01", "--dry-run")
        self.assertEqual(rc, 0)
        host = dry["hosts"][0]
        self.assertEqual(host["port"], 0)
        planned = {h["pid"] for h in host["holders"] if h["fate"] == "would_term"}
        truth_pids = {p["pid"] for p in self.before["node01"]["gpu_processes"]}
        self.assertEqual(planned, truth_pids)
        self.assertEqual(self.fleet.ground_truth()["node01"]["gpu_processes"],
                         self.before["node01"]["gpu_processes"])

        rc, report = self.run_local("node01")
        host = report["hosts"][0]
        self.assertEqual(rc, 0, host.get("error_message"))
        self.assertEqual(host["status"], "clean")
        self.assertEqual(host["units_stopped"], ["vllm.service"])
        self.assertEqual(host["term_sent"], 8)
        after = self.fleet.ground_truth()["node01"]
        self.assertTrue(after["clean"], after)
        self.assertEqual(after["gpu_processes"], [])
        self.assertTrue(all(g["memory_used_mib"] == 0 for g in after["gpus"]))

    def test_protected_daemons_survive_a_local_run(self):
        rc, report = self.run_local("node02")
        self.assertEqual(rc, 0, report["hosts"][0].get("error_message"))
        after = self.fleet.ground_truth()["node02"]
        self.assertEqual(after["protected_missing"], [])
        before = {(p["pid"], p["name"]) for p in self.before["node02"]["protected"]}
        self.assertLessEqual(before, {(p["pid"], p["name"]) for p in after["protected"]})
        fates = {h["pid"]: h["fate"] for h in report["hosts"][0]["holders"]}
        for pid, _ in before:
            self.assertEqual(fates.get(pid), "protected")


if __name__ == "__main__":
    unittest.main(verbosity=2)
