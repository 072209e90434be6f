"""The sim_tools target builds exactly what a simulated fleet copies
(simfleet.SIM_TOOLS), so that the demo, the tests and scripts/fleet, which
all build that one target, can never miss a tool again (the demo once
built four of the five and the fleet died on bystanders); and a fleet over a
bin directory that lacks one fails in one line naming it, before anything
starts. Needs no root: nothing comes up.
"""

import os
import shutil
import tempfile
import unittest

import simfleet

BIN_DIR = os.environ.get("FLEETREAP_SIM_BIN_DIR", "")


class SimToolsTest(unittest.TestCase):
    def test_the_target_builds_what_simfleet_copies(self):
        with open(os.path.join(BIN_DIR, "sim_tools.txt")) as f:
            built = {line.strip() for line in f if line.strip()}
        self.assertEqual(built, set(simfleet.SIM_TOOLS),
                         "tests/sim/CMakeLists.txt FLEETREAP_SIM_TOOLS and simfleet.SIM_TOOLS "
                         "differ")

    def test_a_missing_tool_is_named_before_anything_starts(self):
        bin_dir = tempfile.mkdtemp(prefix="simtools-")
        workdir = tempfile.mkdtemp(prefix="simtools-fleet-")
        self.addCleanup(shutil.rmtree, bin_dir, True)
        self.addCleanup(shutil.rmtree, workdir, True)
        for tool in simfleet.SIM_TOOLS:
            if tool != "bystanders":
                path = os.path.join(bin_dir, tool)
                open(path, "w").close()
                os.chmod(path, 0o755)
        self.assertEqual(simfleet.missing_tools(bin_dir), ["bystanders"])
        fleet = simfleet.Fleet(workdir, bin_dir=bin_dir)
        with self.assertRaises(simfleet.SimError) as raised:
            fleet.up([simfleet.HostSpec("gpu01")])
        self.assertEqual(str(raised.exception),
                         f"sim tools missing in {bin_dir}: bystanders (build them: "
                         "bash scripts/build.sh normal --target sim_tools)")
        self.assertEqual(os.listdir(workdir), [])   # nothing made, no net claimed


if __name__ == "__main__":
    unittest.main(verbosity=2)
