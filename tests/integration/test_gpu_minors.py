"""--gpus minor:LIST end to end, over SSH, on a simulated shared node whose
device minors are not nvidia-smi's indexes (/dev/nvidia0 is GPU 6 and
/dev/nvidia6 GPU 0, as on the node of PrincetonUniversity/jobstats#34):
job 41 holds minors 0-3 (indexes 6,1,2,3), job 42 minors 4-7 (indexes
4,5,0,7). The minors are turned into indexes through the driver's minors the
scan reads, so job 41's run never judges GPU 0, job 42's; a minor the host
lacks fails the host and names the minors it has; so does an index the host
lacks (--gpus 9-12 on 8 GPUs), never "clean" with every GPU out of scope.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import unittest

from fleet_case import FleetCase, by_name, needs_cgroups, run_json
from host_setup import HostSetup
from simfleet import HostSpec


@needs_cgroups
class GpuMinorsTest(FleetCase):
    PREFIX = "gpuminortest-"
    SPECS = [HostSpec("permuted", scenario="slurm_shared", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        HostSetup(cls.fleet, cls.fleet.host("permuted")).gpu_minors([6, 1, 2, 3, 4, 5, 0, 7])
        cls.before = cls.fleet.ground_truth()

    def run_permuted(self, *extra):
        code, report = run_json(self.fleet, "--limit", "permuted", *extra)
        return code, by_name(report)["permuted"], report

    def test_1_unknown_minor_fails_the_host(self):
        code, host, _ = self.run_permuted("--gpus", "minor:3,9", "--dry-run")
        self.assertNotEqual(code, 0)
        self.assertEqual(host["status"], "failed")
        self.assertEqual(host["error_message"],
                         "--gpus minor 9: no GPU of this host has device minor 9 "
                         "(the driver's minors: 0,1,2,3,4,5,6,7)")

    def test_1_unknown_index_fails_the_host(self):
        code, host, _ = self.run_permuted("--gpus", "6-9", "--dry-run")
        self.assertEqual(code & 2, 2)
        self.assertEqual(host["status"], "failed")
        self.assertEqual(host["error_message"],
                         "--gpus 6-9: this host has no GPU 8-9 (its GPUs: 0-7)")

    def test_2_minors_select_the_jobs_gpus_by_device_file(self):
        code, host, report = self.run_permuted("--gpus", "minor:0-3")
        self.assertEqual(code, 0, host["error_message"])
        self.assertEqual(report["scope"]["gpus"], [0, 1, 2, 3])  # as given
        fates = {}
        for h in host["holders"]:
            fates.setdefault(h["owner"]["slurm_job"], set()).add(h["fate"])
        self.assertTrue(fates["41"] <= {"terminated", "killed"}, fates)
        self.assertEqual(fates["42"], {"out_of_scope"})
        states = {g["index"]: g["state"] for g in host["gpus_after"]}
        self.assertEqual({i for i, s in states.items() if s == "out_of_scope"}, {0, 4, 5, 7})
        self.assertLessEqual({states[i] for i in (1, 2, 3, 6)}, {"clean", "protected_only"})
        jobs = self.fleet.ground_truth()["permuted"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], [])
        self.assertEqual(jobs["42"]["workers_alive"], jobs["42"]["workers"])
        self.assertEqual(jobs["42"]["processes"], self.before["permuted"]["jobs"]["42"]["processes"])


if __name__ == "__main__":
    unittest.main()
