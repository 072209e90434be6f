"""Restarters and causes end to end (docs/playbooks.md, "Never ready while a
restarter lives"): supervisors that restart their killed worker after 0.5,
3, 6 and 20 s (each new worker opening its GPU 3 s after it starts), a
parent that never reaps (named like a Ray raylet), a unit with
Restart=always and RestartSec=5s, a shell that restarts nothing, orphans
(the fast path) and the seed: a KillMode=process unit already stopped, its
workers left in its cgroup. Each host is judged by the fleet's own ground
truth after its restart window, not at the moment fleetreap ended: a host
reported clean must still be clean then. Needs root and the built sim tools.
"""

import os
import tempfile
import time
import unittest

from fleet_case import FleetCase, by_name, run_json
from simfleet import HostSpec

SHAPES = {
    "rs01": "supervisor_restart_500ms",
    "rs02": "supervisor_restart_3s",
    "rs03": "supervisor_restart_6s",
    "rs04": "supervisor_restart_20s",
    "rs05": "raylet_never_reaps",
    "rs06": "restart_unit_5s",
    "rs07": "shell_parent",
    "rs08": "orphans",
    "rs09": "vllm_incident",
}
SUPERVISED = ("rs01", "rs02", "rs03", "rs04")
# The longest restart window: 20 s of delay, 3 s to open the GPU, and margin.
WINDOW_S = 26


def findings(host, kind):
    return [f for f in host.get("findings", []) if f["kind"] == kind]


class RestartersTest(FleetCase):
    PREFIX = "restartest-"
    SPECS = [HostSpec(name, scenario=s) for name, s in SHAPES.items()]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The seed: the operator stopped the unit; KillMode=process left the
        # workers running in its cgroup.
        cls.fleet.exec("rs09", "systemctl stop vllm.service", check=True)
        out = tempfile.mkdtemp(prefix="restartest-")
        cls.md, cls.junit, cls.html = (os.path.join(out, n)
                                       for n in ("summary.md", "junit.xml", "report.html"))
        started = time.monotonic()
        cls.rc, report = run_json(cls.fleet, "--summary-md", cls.md, "--junit", cls.junit,
                                  "--html", cls.html, timeout=400)
        cls.hosts = by_name(report)
        # Ground truth once every restart window has passed.
        time.sleep(max(0.0, WINDOW_S - (time.monotonic() - started)))
        cls.truth = cls.fleet.ground_truth()

    def gpu_mib(self, name, gpu):
        return self.truth[name]["gpus"][gpu]["memory_used_mib"]

    def test_a_host_called_clean_is_still_clean_after_the_restart_window(self):
        for name, shape in SHAPES.items():
            host = self.hosts[name]
            with self.subTest(host=name, shape=shape):
                if host["status"] in ("clean", "not_ready"):  # GPUs called empty
                    held = [g for g in self.truth[name]["gpus"] if g["memory_used_mib"] > 0]
                    self.assertEqual(held, [], (host.get("findings"), host["timings"]))

    def test_each_supervised_restart_is_caught_and_the_supervisor_named(self):
        # Caught and cleaned (GPU 0 empty), but the supervisor that started
        # the worker again lives on: not ready, with it as the reason.
        for name in SUPERVISED:
            host = self.hosts[name]
            with self.subTest(host=name, shape=SHAPES[name]):
                self.assertEqual(host["status"], "not_ready", host.get("error_message"))
                self.assertRegex(host["summary"],
                                 r"workers respawned by their parent supervisord, which lives on$")
                self.assertEqual(host["rounds"], 2, host["holders"])
                # The settle after the last wave carried the /dev/shm clean:
                # the watch ends with a re-scan, no clean_shm round trip.
                steps = [t["step"] for t in host["timings"]]
                self.assertEqual(steps[-1], "rescan", steps)
                self.assertRegex(host["respawning_parent"], r"^\d+ \(supervisord\)$")
                self.assertEqual(self.gpu_mib(name, 0), 0)
                alive = findings(host, "restarter_alive")
                self.assertEqual(len(alive), 1, host["findings"])
                self.assertEqual(alive[0]["names"], ["supervisord"])
                self.assertEqual(alive[0]["detail"], "kill %d" % alive[0]["pids"][0])
                self.assertIn("/usr/bin/supervisord -n", alive[0]["text"])
                self.assertTrue(alive[0]["reason"], alive)
                self.assertIn("restarter alive", host["error_message"])
                cause = findings(host, "cause")
                self.assertEqual([c["cause"] for c in cause], ["restarter"], cause)

    def test_a_parent_that_never_reaps_is_watched_and_named(self):
        host = self.hosts["rs05"]
        self.assertEqual(host["status"], "clean", host.get("error_message"))
        alive = findings(host, "restarter_alive")
        self.assertEqual([a["names"] for a in alive], [["raylet"]], host["findings"])
        # Watched up to respawn_wait: re-scans after the wave, not one.
        steps = [t["step"] for t in host["timings"]]
        self.assertGreaterEqual(steps.count("rescan"), 5, steps)
        self.assertEqual([c["cause"] for c in findings(host, "cause")], ["job_outside_unit"])

    def test_a_unit_that_keeps_restarting_is_never_ready(self):
        host = self.hosts["rs06"]
        self.assertEqual(host["status"], "dirty", host["findings"])
        alive = findings(host, "restarter_alive")
        self.assertTrue(alive, host["findings"])
        self.assertEqual(alive[0]["units"], ["trainer.service"])
        self.assertEqual(alive[0]["restart"], "always")
        self.assertEqual(alive[0]["detail"], "systemctl stop trainer.service")
        self.assertIn("RestartSec=5s", alive[0]["text"])
        self.assertGreater(self.gpu_mib("rs06", 1), 0)  # and the truth agrees
        self.assertEqual(self.rc & 1, 1)

    def test_a_shell_that_restarts_nothing_is_named_after_the_watch(self):
        host = self.hosts["rs07"]
        self.assertEqual(host["status"], "clean", host.get("error_message"))
        alive = findings(host, "restarter_alive")
        self.assertEqual([a["names"] for a in alive], [["bash"]], host["findings"])
        self.assertEqual(host["rounds"], 1)

    def test_orphans_keep_the_fast_path(self):
        host = self.hosts["rs08"]
        self.assertEqual(host["status"], "clean", host.get("error_message"))
        self.assertEqual([t["step"] for t in host["timings"]],
                         ["connect", "inspect", "term+rescan+clean_shm"])
        self.assertEqual(findings(host, "restarter_alive"), [])
        self.assertEqual([c["cause"] for c in findings(host, "cause")], ["orphan"])

    def test_the_seed_names_the_units_kill_mode(self):
        host = self.hosts["rs09"]
        self.assertEqual(host["status"], "clean", host.get("error_message"))
        cause = findings(host, "cause")
        self.assertEqual(len(cause), 1, host["findings"])
        self.assertEqual(cause[0]["cause"], "outlived_unit_stop")
        self.assertEqual(cause[0]["units"], ["vllm.service"])
        self.assertEqual(cause[0]["kill_mode"], "process")
        self.assertEqual(cause[0]["count"], 8)
        self.assertEqual(findings(host, "restarter_alive"), [])
        with open(self.md, encoding="utf-8") as f:
            summary = f.read()
        self.assertIn("### Why the GPUs were held", summary)
        self.assertIn("outlived the stop of unit vllm.service (KillMode=process)", summary)
        self.assertIn("### Restarters", summary)

    def test_every_report_names_the_restarter_and_the_cause(self):
        alive = findings(self.hosts["rs02"], "restarter_alive")[0]["text"]
        self.assertTrue(alive.startswith("restarter alive: pid "), alive)
        for path in (self.md, self.junit, self.html):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with self.subTest(report=os.path.basename(path)):
                self.assertIn("restarter alive: pid", text)
                self.assertIn("stop it with: systemctl stop trainer.service", text)
                self.assertIn("re-parented to init after their parent died", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
