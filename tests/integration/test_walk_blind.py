"""A holder walk that cannot run, end to end on the simulated fleet. On a
real host of ~100,000 processes the scan's find over /proc/PID/task or its
grep over every maps file can fail to start (an argument list too long:
exit 126); these hosts get a find or a grep that fails that way in their
/usr/bin overlay, and no perl (a host with perl walks /proc with one perl,
which takes no such list). On a host with perl, a perl that dies is blind
the same way. The scan says so ("blind"), the host is dirty with a
message naming it, whatever the GPUs read, and /dev/shm keeps every
candidate (none is removed on a guess). Needs root and the built sim tools.
"""

import unittest

from fleet_case import FleetCase, by_name, run_json
from simfleet import HostSpec

# A wrapper in the host's /usr/bin overlay (never this machine's /usr/bin):
# the tool exits 126 when it is handed paths ending in TAIL, as the shell
# does when exec fails with E2BIG.
WRAPPER = ("mv /usr/bin/{tool} /usr/bin/{tool}.real && "
           "printf '#!/bin/sh\\nfor a in \"$@\"; do case $a in *{tail}) "
           "echo \"{tool}: Argument list too long\" >&2; exit 126;; esac; done\\n"
           "exec /usr/bin/{tool}.real \"$@\"\\n' >/usr/bin/{tool} && chmod 755 /usr/bin/{tool}")

# No perl on the host: the walk is the shell path's find and grep.
NO_PERL = "rm -f /usr/bin/perl /usr/bin/perl5*"
# A perl that dies whatever it runs (killed by a signal).
DYING_PERL = ("rm -f /usr/bin/perl5* && printf '#!/bin/sh\\nkill -9 $$\\n' >/usr/bin/perl && "
              "chmod 755 /usr/bin/perl")

SHM_LEFT = {"nccl-WU88OE", "nccl-Ab12Cd", "psm_4f1e2b7a", "sem.vllm_lock", "sem.mp-a3bx9k2q",
            "sgl_shm_mm_7f3e", "vllm_offload_engine0.mmap"}


class WalkBlindTest(FleetCase):
    PREFIX = "blindtest-"
    SPECS = [HostSpec("blind01", scenario="vllm_incident"),
             HostSpec("blind02", scenario="shm_leftovers"),
             HostSpec("blind03", scenario="vllm_incident"),
             HostSpec("blind04", scenario="shm_leftovers")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name in ("blind01", "blind02"):
            cls.fleet.exec(name, NO_PERL, check=True)
        cls.fleet.exec("blind01", WRAPPER.format(tool="grep", tail="/maps"), check=True)
        cls.fleet.exec("blind02", WRAPPER.format(tool="find", tail="/task"), check=True)
        cls.fleet.exec("blind04", DYING_PERL, check=True)
        cls.rc, cls.report = run_json(cls.fleet, playbook="vllm.yaml")
        cls.hosts = by_name(cls.report)

    def test_a_blind_maps_walk_still_signals_what_it_saw_but_is_never_clean(self):
        host = self.hosts["blind01"]
        self.assertEqual(host["status"], "dirty", host)
        self.assertIn("the holder walk could not run", host["error_message"])
        # The fd walk ran: the orphaned workers were found and freed.
        self.assertEqual(host["term_sent"] + host["kill_sent"], 8, host)
        self.assertTrue(all(g["memory_used_mib"] == 0 for g in host["gpus_after"]), host)
        self.assertEqual(self.fleet.ground_truth()["blind01"]["gpu_processes"], [])

    def test_a_blind_fd_walk_removes_no_shm_segment(self):
        host = self.hosts["blind02"]
        self.assertEqual(host["status"], "dirty", host)
        self.assertIn("the holder walk could not run", host["error_message"])
        self.assertEqual(host.get("shm_removed", []), [], host)
        left = set(self.fleet.exec("blind02", "ls /dev/shm").stdout.split())
        self.assertLessEqual(SHM_LEFT, left)

    def test_a_perl_that_dies_is_blind_and_removes_no_shm_segment(self):
        host = self.hosts["blind04"]
        self.assertEqual(host["status"], "dirty", host)
        self.assertIn("the holder walk could not run", host["error_message"])
        self.assertEqual(host.get("shm_removed", []), [], host)
        left = set(self.fleet.exec("blind04", "ls /dev/shm").stdout.split())
        self.assertLessEqual(SHM_LEFT, left)

    def test_a_host_whose_walk_ran_is_clean(self):
        host = self.hosts["blind03"]
        self.assertEqual(host["status"], "clean", host)
        self.assertEqual(self.rc & 1, 1)  # the blind hosts are dirty


if __name__ == "__main__":
    unittest.main()
