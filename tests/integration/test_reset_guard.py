"""The GPU reset under control (playbooks/reset.yaml, reset_stops_daemons),
over SSH on simulated hosts whose GPU 2 holds driver-leaked memory while
protected daemons (nvidia-persistenced, nv-hostengine) hold every GPU in
their units:

* inside the scope: with a co-tenant's job on GPU 5, a run scoped to GPU 2
  stops no daemon (they serve GPU 5 too) and names the units and the
  commands; the same host unscoped is reset;
* never on a guess: a stop that fails for one unit resets nothing, names
  the failure, and starts the unit it did stop again;
* never left stopped: a host deadline too short for stop + reset + start
  starts nothing; Ctrl-C and a dropped connection in the middle of a slow
  reset leave the host's guard to start the units again.

After every run the daemons' ground truth is read from the host itself
(tests/sim ground_truth.py and the host's systemctl), not from the report.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import os
import signal
import subprocess
import time
import unittest

from fleet_case import (FleetCase, by_name, fleetreap_argv, needs_cgroups, parse_report,
                        playbook_path, run_json)
from host_setup import HostSetup
from scenarios import wait_until
from simfleet import HostSpec

UNITS = ["nvidia-dcgm.service", "nvidia-persistenced.service"]


@needs_cgroups
class ResetGuardTest(FleetCase):
    PREFIX = "resetguardtest-"
    SPECS = [HostSpec(name, scenario="ghost_memory", bystanders=2)
             for name in ("scoped", "whole", "stopfail", "deadline", "interrupt", "dropped")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name in ("scoped", "whole", "stopfail", "interrupt", "dropped"):
            HostSetup(cls.fleet, cls.fleet.host(name)).daemon("nv-hostengine")
        for name in ("scoped", "whole"):  # the co-tenant: its job on GPU 5
            HostSetup(cls.fleet, cls.fleet.host(name)).docker_container("tenantb", gpus="5")
        with open(os.path.join(cls.fleet.host("stopfail").state, "units",
                               "nvidia-dcgm.service"), "a") as f:
            f.write("FakeStopFails=1\n")
        for name in ("interrupt", "dropped"):
            with open(os.path.join(cls.fleet.host(name).state, "reset_sleep"), "w") as f:
                f.write("8\n")
        cls.before = cls.fleet.ground_truth()
        cls.hosts = {}
        for args in (["--limit", "scoped", "--gpus", "2"], ["--limit", "whole,stopfail"],
                     ["--limit", "deadline", "--host-timeout", "40s"]):
            _, report = run_json(cls.fleet, *args, playbook="reset.yaml")
            cls.hosts.update(by_name(report))
        cls.after = cls.fleet.ground_truth()

    def units_state(self, host):
        out = self.fleet.exec(host, "systemctl is-active -- " + " ".join(UNITS)).stdout
        return out.split()

    def daemons_untouched(self, host):
        for name in ("nvidia-persistenced", "nv-hostengine"):
            if name in self.before[host]["daemons"]:
                self.assertTrue(self.after[host]["daemons"][name]["alive"], (host, name))

    def test_a_scoped_run_stops_no_daemon_and_says_what_would(self):
        h = self.hosts["scoped"]
        self.assertEqual(h["status"], "dirty")
        self.assertEqual(h["reset_units_stopped"], [])
        self.assertEqual(h["gpus_reset"], [])
        self.assertIn("the run's scope", h["reset_blocked_by"])
        self.assertIn("systemctl stop -- 'nvidia-persistenced.service'", h["reset_blocked_by"])
        self.assertIn("nvidia-smi --gpu-reset -i 2", h["reset_blocked_by"])
        self.daemons_untouched("scoped")
        self.assertEqual(self.after["scoped"]["gpus"][2]["ghost_mib"], 10151)
        job = self.after["scoped"]["jobs"]["docker:tenantb"]
        self.assertEqual(job["workers_alive"], job["workers"])

    def test_the_same_host_unscoped_is_reset_and_its_daemons_run_again(self):
        h = self.hosts["whole"]
        self.assertEqual(h["status"], "clean", (h.get("error_message"), h["reset_blocked_by"]))
        self.assertEqual(h["gpus_reset"], [2])
        self.assertEqual(sorted(h["reset_units_stopped"]), UNITS)
        self.assertEqual(sorted(h["reset_units_started"]), UNITS)
        self.assertEqual(self.after["whole"]["gpus"][2]["ghost_mib"], 0)
        self.assertEqual(self.units_state("whole"), ["active", "active"])

    def test_a_failed_stop_resets_nothing_and_starts_what_it_stopped(self):
        h = self.hosts["stopfail"]
        self.assertEqual(h["status"], "dirty")
        self.assertEqual(h["gpus_reset"], [])
        self.assertIn("Job for nvidia-dcgm.service canceled", h["reset_blocked_by"])
        self.assertIn("no GPU reset tried", h["reset_blocked_by"])
        self.assertEqual(h["reset_units_stopped"], ["nvidia-persistenced.service"])
        self.assertEqual(h["reset_units_started"], ["nvidia-persistenced.service"])
        self.assertEqual(self.after["stopfail"]["gpus"][2]["ghost_mib"], 10151)
        self.assertTrue(self.after["stopfail"]["daemons"]["nv-hostengine"]["alive"])
        self.assertEqual(self.units_state("stopfail"), ["active", "active"])

    def test_a_deadline_too_short_for_the_reset_starts_nothing(self):
        h = self.hosts["deadline"]
        self.assertEqual(h["status"], "dirty", h.get("error_message"))
        self.assertIn("the host deadline", h["reset_blocked_by"])
        self.assertIn("not started", h["reset_blocked_by"])
        self.assertEqual(h["reset_units_stopped"], [])
        self.daemons_untouched("deadline")

    def cut_mid_reset(self, host, cut):
        """Runs reset.yaml on 'host', calls cut(proc) once the daemons'
        units are stopped (the reset sleeping), and returns the report and
        the units' states once the guard had time to start them."""
        argv = fleetreap_argv(self.fleet, "--playbook", playbook_path("reset.yaml"),
                              "--command-timeout", "8s", "--json", "-", "--quiet", "--color",
                              "never", "--limit", host)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stopped = wait_until(lambda: not self.fleet.ground_truth()[host]["daemons"]
                                 ["nvidia-persistenced"]["alive"], timeout=60, interval=0.2)
            self.assertTrue(stopped, "the reset never stopped the daemons")
            cut(proc)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        report = parse_report(subprocess.CompletedProcess(argv, proc.returncode, out, err))
        wait_until(lambda: self.units_state(host) == ["active", "active"], timeout=30,
                   interval=0.5)
        return by_name(report).get(host), self.units_state(host)

    def test_ctrl_c_mid_reset_leaves_no_daemon_stopped(self):
        h, states = self.cut_mid_reset("interrupt", lambda p: p.send_signal(signal.SIGINT))
        self.assertEqual(states, ["active", "active"])
        names = sorted(p["name"] for p in self.fleet.ground_truth()["interrupt"]["protected"])
        self.assertEqual(names, ["nv-hostengine", "nvidia-persistenced"])
        self.assertIsNotNone(h)
        self.assertNotEqual(h["status"], "clean")

    def test_a_dropped_connection_mid_reset_leaves_no_daemon_stopped(self):
        def drop(_):
            self.fleet.exec("dropped", "for p in /proc/[0-9]*; do "
                            "[ \"$(readlink $p/exe)\" = /usr/sbin/sshd ] && "
                            "kill -KILL ${p#/proc/}; done; true")
        h, states = self.cut_mid_reset("dropped", drop)
        self.assertEqual(states, ["active", "active"])
        names = sorted(p["name"] for p in self.fleet.ground_truth()["dropped"]["protected"])
        self.assertEqual(names, ["nv-hostengine", "nvidia-persistenced"])
        self.assertIsNotNone(h)
        self.assertNotEqual(h["status"], "clean")
        self.assertIn("not known to run again", h["error_message"])
        self.assertEqual(sorted(h["reset_units_stopped"]), UNITS)


if __name__ == "__main__":
    unittest.main()
