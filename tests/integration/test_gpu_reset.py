"""The GPU reset rung by NVIDIA's procedure (playbooks/reset.yaml,
reset_stops_daemons), over SSH on simulated hosts whose GPU 2 holds driver-
leaked memory that no process owns, while protected daemons hold every GPU:
their units are stopped, the GPU is reset (the sim's nvidia-smi refuses while
any process holds it), the units are started again and the GPUs verified. A
daemon that runs in no unit is never signalled and blocks the reset, named;
a unit that does not come back leaves the host dirty, named; without the
setting nothing is stopped and the daemon is named, as before.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import os
import unittest

from fleet_case import FleetCase, by_name, needs_cgroups, playbook_path, run_json
from host_setup import HostSetup
from simfleet import HostSpec


@needs_cgroups
class GpuResetTest(FleetCase):
    PREFIX = "gpuresettest-"
    SPECS = [HostSpec(name, scenario="ghost_memory", bystanders=5)
             for name in ("units", "loose", "noreturn", "plain")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        HostSetup(cls.fleet, cls.fleet.host("units")).daemon("nv-hostengine")
        # DCGM started by hand, outside any unit.
        HostSetup(cls.fleet, cls.fleet.host("loose")).daemon(
            "nv-hostengine", cgroup="/user.slice/user-0.slice/session-1.scope")
        # A unit whose start fails after the reset.
        units = os.path.join(cls.fleet.host("noreturn").state, "units")
        with open(os.path.join(units, "nvidia-persistenced.service"), "a") as f:
            f.write("ExecStart=/bin/false\n")
        with open(playbook_path("reset.yaml")) as f:
            text = f.read().replace("reset_stops_daemons: true", "reset_stops_daemons: false")
        cls.plain_playbook = os.path.join(cls.tmp, "reset-plain.yaml")
        with open(cls.plain_playbook, "w") as f:
            f.write(text)
        cls.before = cls.fleet.ground_truth()
        _, report = run_json(cls.fleet, "--limit", "units,loose,noreturn", playbook="reset.yaml",
                             command_timeout="30s")
        cls.hosts = by_name(report)
        _, report = run_json(cls.fleet, "--limit", "plain", playbook=cls.plain_playbook)
        cls.hosts.update(by_name(report))
        cls.after = cls.fleet.ground_truth()

    def protected_names(self, host):
        return sorted(p["name"] for p in self.after[host]["protected"])

    def test_daemons_units_stop_for_the_reset_and_start_again(self):
        h = self.hosts["units"]
        self.assertEqual(h["status"], "clean", (h.get("error_message"), h["gpus_after"]))
        self.assertEqual(h["gpus_reset"], [2])
        self.assertEqual(sorted(h["reset_units_stopped"]),
                         ["nvidia-dcgm.service", "nvidia-persistenced.service"])
        self.assertEqual(sorted(h["reset_units_started"]), sorted(h["reset_units_stopped"]))
        self.assertEqual(self.after["units"]["gpus"][2]["ghost_mib"], 0)
        # Both daemons run again (new PIDs), and only them: no job was touched.
        self.assertEqual(self.protected_names("units"), ["nv-hostengine", "nvidia-persistenced"])
        self.assertEqual(h["term_sent"] + h["kill_sent"], 0)

    def test_a_daemon_outside_any_unit_blocks_the_reset_and_is_named(self):
        h = self.hosts["loose"]
        self.assertEqual(h["status"], "dirty")
        self.assertEqual(h["gpus_reset"], [])
        self.assertIn("no unit to stop", h["reset_blocked_by"])
        self.assertEqual(h["reset_units_stopped"], [])
        self.assertEqual(self.after["loose"]["gpus"][2]["ghost_mib"], 10151)
        self.assertEqual(self.after["loose"]["protected_missing"], [])

    def test_a_unit_that_does_not_come_back_leaves_the_host_dirty(self):
        h = self.hosts["noreturn"]
        self.assertEqual(h["status"], "dirty", h["gpus_after"])
        self.assertEqual(h["gpus_reset"], [2])
        self.assertEqual(h["reset_units_stopped"], ["nvidia-persistenced.service"])
        self.assertEqual(h["reset_units_started"], [])
        self.assertIn("nvidia-persistenced.service (failed)", h["error_message"])

    def test_without_the_setting_the_daemon_is_named_and_nothing_stops(self):
        h = self.hosts["plain"]
        self.assertEqual(h["status"], "dirty")
        self.assertIn("nvidia-persistenced (pid ", h["reset_blocked_by"])
        self.assertNotIn("no unit", h["reset_blocked_by"])
        self.assertEqual(h["gpus_reset"], [])
        self.assertEqual(self.after["plain"]["protected"], self.before["plain"]["protected"])


if __name__ == "__main__":
    unittest.main()
