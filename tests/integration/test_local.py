"""--local end to end, inside a simulated host: the real fleetreap binary runs
in the host's own PID and mount namespaces (as a Slurm epilog or a Kubernetes
DaemonSet would run it on a node), with no SSH at all, and must leave the
host clean by the fleet's own ground truth while its protected daemon keeps
its PID. It never runs against this machine's own process table.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import unittest

from fleet_case import FleetCase, playbook_path, run_local
from simfleet import HostSpec


class LocalTest(FleetCase):
    PREFIX = "localtest-"
    SPECS = [HostSpec("node01", scenario="vllm_incident"),
             HostSpec("node02", scenario="protected_daemons")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = cls.fleet.ground_truth()

    def run_local(self, host, *extra):
        # The binary is reachable inside the host: its mount namespace only
        # replaces /dev, /run, /etc files and /usr/local/bin.
        return run_local(self.fleet, host, "--playbook", playbook_path("vllm.yaml"), *extra)

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
