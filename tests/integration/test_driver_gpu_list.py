"""The smaller holes of the verdict, end to end: the real fleetreap binary
against simulated GPU nodes over real SSH. Without an inventory GPU count,
an idle host whose driver lists 8 GPUs while nvidia-smi shows 7 is not
clean: the driver's own GPU list (/proc/driver/nvidia/gpus) says how many
there are, not the device files that happen to be held. The readiness check
names the GPU with its next step, so the host is not_ready (exit bit 1), the
missing GPU in its readings.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import unittest

from fleet_case import FleetCase, run_local
from simfleet import HostSpec


class DriverGpuListTest(FleetCase):
    PREFIX = "driverlist-"
    SPECS = [HostSpec("hidden", scenario="gpu_not_listed", bystanders=5),
             HostSpec("idle", scenario="clean", bystanders=5)]

    def test_a_gpu_only_the_driver_lists_keeps_the_host_from_clean(self):
        # --local: no inventory, so no fleetreap_expected_gpus.
        code, report = run_local(self.fleet, "idle")
        self.assertEqual(report["hosts"][0]["status"], "clean", report["hosts"][0])
        code, report = run_local(self.fleet, "hidden")
        hidden = report["hosts"][0]
        self.assertEqual(hidden["status"], "not_ready", hidden)
        self.assertEqual(code & 1, 1)
        reasons = [f["reason"] for f in hidden["readiness"]["findings"]]
        self.assertIn("gpu_not_answering", reasons)
        states = [g["state"] for g in hidden["gpus_after"]]
        self.assertEqual(len(states), 8, hidden["gpus_after"])
        self.assertEqual(states.count("clean"), 7, states)
        self.assertEqual(states.count("missing"), 1, states)

if __name__ == "__main__":
    unittest.main()
