"""A scope reaches everything that acts, end to end: the real fleetreap
binary against simulated GPU nodes over real SSH, checked against the fleet's
own ground truth. Under --gpus a unit whose cgroup runs an out-of-scope
holder is skipped (systemctl stop would kill its whole cgroup) and another
tenant's unused /dev/shm segment is kept (test_shm_scope.py: the job's own
segments go); owner names found in a user's delegated cgroup
subtree (user@UID.service) are not believed, so --spare-pods does not spare
a user's process that dressed its cgroup as a pod's.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import unittest

from fleet_case import FleetCase, by_name, needs_cgroups, run_json
from host_setup import HostSetup, pod_uid, user_id
from scenario_registry import VLLM_ARGV
from simfleet import HostSpec


@needs_cgroups
class ScopeReachTest(FleetCase):
    PREFIX = "scopereach-"
    SPECS = [HostSpec("units", scenario="clean", bystanders=10),
             HostSpec("delegated", scenario="clean", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        units = HostSetup(cls.fleet, cls.fleet.host("units"))
        cls.a = units.service("vllm-a.service", killmode="control-group", gpus="0-3",
                              visible="0-3", mib=40960, title="VLLM::Worker_TP%d",
                              argv=VLLM_ARGV)
        cls.b = units.service("vllm-b.service", killmode="control-group", gpus="4-7",
                              visible="4-7", mib=40960, title="VLLM::Worker_TP%d",
                              argv=VLLM_ARGV)
        units.shm("torch_abc", keep=True)  # another tenant's, not open
        uid = user_id("gpuops")
        fake_pod = (f"/user.slice/user-{uid}.slice/user@{uid}.service/app.slice/"
                    f"kubepods-besteffort-pod{pod_uid('delegated', 'fake').replace('-', '_')}.slice")
        cls.dressed = HostSetup(cls.fleet, cls.fleet.host("delegated")).workload(
            gpus="2", visible="2", mib=30720, user="gpuops", cgroup=fake_pod, detach=True)

    def alive(self, host, pids):
        live = {p["pid"] for p in self.fleet.ground_truth()[host]["gpu_processes"]}
        return sorted(pid for pid in pids if pid in live)

    def test_a_unit_with_out_of_scope_holders_is_skipped(self):
        code, report = run_json(self.fleet, "--limit", "units", "--gpus", "4-7",
                                playbook="vllm.yaml")
        host = by_name(report)["units"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertEqual(host["units_stopped"], ["vllm-b.service"])
        self.assertEqual(len(host["units_skipped"]), 1, host["units_skipped"])
        self.assertTrue(host["units_skipped"][0].startswith(
            "vllm-a.service: it runs out-of-scope VLLM::Worker_TP"), host["units_skipped"])
        workers_a = [pid for gpu, pid in self.a.items() if gpu != "parent"]
        workers_b = [pid for gpu, pid in self.b.items() if gpu != "parent"]
        self.assertEqual(self.alive("units", workers_a), sorted(workers_a))
        self.assertEqual(self.alive("units", workers_b), [])
        # /dev/shm: no holder of this run held torch_abc, so it stays.
        self.assertEqual(host["shm_removed"], [])
        self.assertIn("torch_abc", self.fleet.ground_truth()["units"]["shm_remaining"])

    def test_a_pod_name_in_a_users_own_subtree_is_not_believed(self):
        code, report = run_json(self.fleet, "--limit", "delegated", "--spare-pods")
        host = by_name(report)["delegated"]
        worker = self.dressed[2]
        holder = next(h for h in host["holders"] if h["pid"] == worker)
        self.assertEqual(holder["owner"].get("pod_uid") or "", "")
        self.assertIn(holder["fate"], ("terminated", "killed"), holder)
        self.assertEqual(self.alive("delegated", [worker]), [])


if __name__ == "__main__":
    unittest.main()
