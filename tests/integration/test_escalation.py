"""The escalation end to end: the real fleetreap binary against every
escalation scenario of the simulated fleet, over real SSH, checked against the
fleet's own ground truth (read from the machine's /proc, not from fleetreap's
report): GPUs end clean where they can, protected daemons keep their PIDs, the
GPU 5 straggler is caught, unkillable/ghost/lost/driver cases are named, and
no process outside the plan was touched. A dry run changes nothing.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import subprocess
import unittest

from fleet_case import (FleetCase, by_name, fleetreap_argv, live_processes, playbook_path,
                        run_json, scratch_fleet)
from simfleet import HostSpec

SCENARIOS = {
    "gpu01": "clean",
    "gpu02": "vllm_incident",
    "gpu03": "vllm_running_cgroup",
    "gpu04": "orphans",
    "gpu05": "ignore_term",
    "gpu06": "slow_exit",
    "gpu07": "straggler_gpu5",
    "gpu08": "protected_daemons",
    "gpu09": "shm_leftovers",
    "gpu10": "ghost_memory",
    "gpu11": "driver_missing",
    "gpu12": "nvidia_smi_hang",
    "gpu13": "gpu_lost",
    "gpu14": "no_sudo",
    "gpu15": "sudo_user",
    "gpu16": "straggler_slow_init",
}
# Hosts whose GPUs fleetreap can and must leave clean.
CLEANABLE = {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06", "gpu07", "gpu08",
             "gpu09", "gpu15", "gpu16"}


def run_fleetreap(fleet, *extra, playbook="vllm.yaml"):
    code, report = run_json(fleet, *extra, playbook=playbook)
    return code, by_name(report)


class EscalationTest(FleetCase):
    PREFIX = "esctest-"
    SPECS = [HostSpec(name, scenario=s) for name, s in SCENARIOS.items()]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = cls.fleet.ground_truth()
        cls.procs_before = live_processes(cls.fleet)

        # Dry run first: it must change nothing.
        cls.dry_exit, cls.dry = run_fleetreap(cls.fleet, "--dry-run")
        cls.after_dry = cls.fleet.ground_truth()
        cls.procs_after_dry = live_processes(cls.fleet)

        cls.exit, cls.report = run_fleetreap(cls.fleet)
        cls.after = cls.fleet.ground_truth()
        cls.procs_after = live_processes(cls.fleet)

        # Then the reset playbook on the ghost host: persistenced blocks it.
        _, cls.reset = run_fleetreap(cls.fleet, "--limit", "gpu10", playbook="reset.yaml")
        cls.after_reset = cls.fleet.ground_truth()

    def test_dry_run_changes_nothing_and_lists_the_plan(self):
        self.assertEqual(self.procs_after_dry, self.procs_before)
        for name in SCENARIOS:
            self.assertEqual(self.after_dry[name]["shm_remaining"],
                             self.before[name]["shm_remaining"], name)
        gpu02 = self.dry["gpu02"]
        self.assertEqual(gpu02["units_would_stop"], ["vllm.service"])
        self.assertEqual(gpu02["term_sent"], 0)
        fates = {h["fate"] for h in gpu02["holders"]}
        self.assertEqual(fates, {"would_term", "protected"})
        self.assertEqual(sorted(self.dry["gpu09"]["shm_would_remove"]),
                         self.before["gpu09"]["shm_must_remove"])

    def test_cleanable_hosts_end_clean_by_ground_truth(self):
        for name in sorted(CLEANABLE):
            with self.subTest(host=name, scenario=SCENARIOS[name]):
                truth = self.after[name]
                self.assertTrue(truth["clean"], json.dumps(truth, indent=1)[:1500])
                r = self.report[name]
                if SCENARIOS[name] in ("straggler_gpu5", "straggler_slow_init") and \
                        r["status"] == "not_ready":
                    # Emptied, but the supervisor that started the straggler
                    # lives on: not ready, with it as the reason.
                    reasons = [f["kind"] for f in r["findings"] if f["reason"]]
                    self.assertEqual(reasons, ["restarter_alive"], r["findings"])
                    continue
                self.assertEqual(r["status"], "clean", r.get("error_message"))

    def test_protected_daemons_keep_their_pids(self):
        for name in SCENARIOS:
            before = {(p["pid"], p["name"]) for p in self.before[name]["protected"]}
            after = {(p["pid"], p["name"]) for p in self.after[name]["protected"]}
            self.assertLessEqual(before, after, name)
            self.assertEqual(self.after[name]["protected_missing"], [], name)
        fates = {h["pid"]: h["fate"] for h in self.report["gpu08"]["holders"]}
        for p in self.before["gpu08"]["protected"]:
            self.assertEqual(fates.get(p["pid"]), "protected", p)

    def test_nothing_outside_the_plan_was_touched(self):
        for name in SCENARIOS:
            holders = {p["pid"] for p in self.before[name]["gpu_processes"]}
            planned = holders | {p["pid"] for p in
                                 self.report[name].get("holders", [])}
            vanished = {(pid, exe) for pid, exe in self.procs_before[name] - self.procs_after[name]
                        if pid not in planned}
            # Stopping vllm.service ends its API server: that is in the plan.
            if SCENARIOS[name] in ("vllm_incident", "vllm_running_cgroup", "sudo_user"):
                vanished = {v for v in vanished if "gpuload" not in v[1] and "python" not in v[1]}
            if SCENARIOS[name] in ("straggler_gpu5", "straggler_slow_init"):
                # The supervisor exits once its one respawned worker is gone.
                vanished = {v for v in vanished if "gpuload" not in v[1]}
            self.assertEqual(vanished, set(), name)

    def test_vllm_incident_stops_the_unit_and_terms_the_orphans(self):
        r = self.report["gpu02"]
        self.assertEqual(r["units_stopped"], ["vllm.service"])
        self.assertEqual(r["term_sent"], 8)
        self.assertEqual(r["kill_sent"], 0)

    def test_after_the_wave_one_round_trip_reads_the_gpus_once(self):
        # Orphans (no parent, no unit to restart them): the quick re-scan runs
        # nvidia-smi, then the /dev/shm clean (which touches no GPU), and is
        # the verify; both ride in the wave's round trip, which they follow
        # only when the wave left nothing (gpu05's TERM left its workers: the
        # KILL carries them).
        expected = {"gpu02": ["connect", "inspect", "stop_units+term+rescan+clean_shm"],
                    "gpu04": ["connect", "inspect", "term+rescan+clean_shm"],
                    "gpu05": ["connect", "inspect", "term+rescan+clean_shm",
                              "kill+rescan+clean_shm"]}
        for host, steps in expected.items():
            r = self.report[host]
            self.assertEqual([t["step"] for t in r["timings"]], steps, (host, r["timings"]))
            self.assertEqual(r["status"], "clean", (host, r.get("error_message")))
            self.assertTrue(self.after[host]["clean"], (host, self.after[host]))

    def test_a_settle_rescan_is_the_verify(self):
        # A host whose re-scans read the device files (a live parent) ends
        # with a plain re-scan; the /dev/shm clean after it carries no second
        # read of the GPUs (before: "clean_shm+verify").
        settled = []
        for host, r in self.report.items():
            steps = [t["step"] for t in r["timings"]]
            if "rescan" in steps:
                settled.append(host)
                after = steps[len(steps) - 1 - steps[::-1].index("rescan") + 1:]
                self.assertNotIn("clean_shm+verify", after, (host, steps))
                self.assertNotIn("verify", after, (host, steps))
        self.assertTrue(settled, {h: r["timings"] for h, r in self.report.items()})
        for host in settled:
            if host in CLEANABLE:
                self.assertTrue(self.after[host]["clean"], (host, self.after[host]))

    def test_ignore_term_needs_kill(self):
        r = self.report["gpu05"]
        self.assertGreater(r["kill_sent"], 0)
        self.assertTrue(all(h["fate"] == "killed" for h in r["holders"]), r["holders"])

    def test_slow_exit_needs_no_kill(self):
        r = self.report["gpu06"]
        self.assertEqual(r["kill_sent"], 0)
        self.assertTrue(all(h["fate"] == "terminated" for h in r["holders"]), r["holders"])

    def test_gpu5_straggler_is_caught(self):
        r = self.report["gpu07"]
        self.assertGreaterEqual(r["rounds"], 2)
        late = [h for h in r["holders"] if h["round"] >= 2]
        self.assertTrue(late, r["holders"])
        # A scan may catch it between opening /dev/nvidiactl and /dev/nvidia5,
        # as it may a real CUDA process: a holder either way, of GPU 5 at most.
        self.assertLessEqual(set(late[0]["gpus"]), {5})
        self.assertRegex(r["respawning_parent"], r"^\d+ \(ray::Supervisor\)$")
        self.assertEqual(self.after["gpu07"]["gpus"][5]["memory_used_mib"], 0)

    def test_a_restarted_worker_that_opens_its_gpu_late_is_caught(self):
        # The supervisor restarts the worker at once; the new one opens GPU 5
        # only 5 s later (as PyTorch does on an H200), long past the settle.
        # Caught and its GPU empty, but the supervisor that started it again
        # lives on: not ready (docs/playbooks.md).
        r = self.report["gpu16"]
        self.assertEqual(r["status"], "not_ready", r)
        self.assertTrue([f for f in r["findings"]
                         if f["kind"] == "restarter_alive" and f["reason"]], r["findings"])
        late = [h for h in r["holders"] if h["round"] == 2]
        self.assertEqual(len(late), 1, r["holders"])
        self.assertLessEqual(set(late[0]["gpus"]), {5})  # may be caught mid-open
        self.assertEqual(late[0]["fate"], "terminated")
        self.assertRegex(r["respawning_parent"], r"^\d+ \(supervisor\.py\)$")
        self.assertEqual(self.after["gpu16"]["gpus"][5]["memory_used_mib"], 0)

    def test_shm_leftovers_removed_and_others_kept(self):
        r = self.report["gpu09"]
        self.assertEqual(sorted(r["shm_removed"]), self.before["gpu09"]["shm_must_remove"])
        self.assertEqual(sorted(self.after["gpu09"]["shm_remaining"]),
                         self.before["gpu09"]["shm_must_keep"])

    def test_ghost_memory_is_named_not_killed(self):
        r = self.report["gpu10"]
        self.assertEqual(r["status"], "dirty")
        self.assertEqual(r["gpus_after"][2]["state"], "ghost")
        self.assertEqual(r["term_sent"] + r["kill_sent"], 0)

    def test_ghost_reset_stops_and_restarts_the_protected_daemons_unit(self):
        # NVIDIA's procedure (reset.yaml's reset_stops_daemons): the daemon
        # is stopped by its unit, never signalled, and runs again after.
        # tests/integration/test_gpu_reset.py has the cases where it cannot.
        r = self.reset["gpu10"]
        self.assertEqual(r["status"], "clean", (r.get("error_message"), r["gpus_after"]))
        self.assertEqual(r["gpus_reset"], [2])
        self.assertEqual(r["reset_units_stopped"], ["nvidia-persistenced.service"])
        self.assertEqual(r["reset_units_started"], ["nvidia-persistenced.service"])
        self.assertEqual(r["term_sent"] + r["kill_sent"], 0)
        self.assertEqual([p["name"] for p in self.after_reset["gpu10"]["protected"]],
                         ["nvidia-persistenced"])
        self.assertEqual(self.after_reset["gpu10"]["gpus"][2]["ghost_mib"], 0)

    def test_driver_missing_reports_the_tools_words(self):
        r = self.report["gpu11"]
        self.assertEqual(r["status"], "failed")
        self.assertIn("NVIDIA driver", r["nvidia_smi_error"])

    def test_nvidia_smi_hang_is_bounded(self):
        r = self.report["gpu12"]
        self.assertEqual(r["status"], "failed")
        self.assertEqual(r["error_kind"], "command_timeout")

    def test_lost_gpu_is_named(self):
        r = self.report["gpu13"]
        self.assertEqual(r["status"], "dirty")
        states = {g["index"]: g["state"] for g in r["gpus_after"]}
        self.assertEqual(states.pop(6), "lost")
        self.assertEqual(set(states.values()), {"clean"}, r["gpus_after"])

    def test_no_sudo_is_not_clean(self):
        r = self.report["gpu14"]
        self.assertIn(r["status"], ("failed", "dirty"))
        self.assertFalse(self.after["gpu14"]["clean"])

    def test_exit_code_says_not_ready(self):
        self.assertEqual(self.exit & 3, 3)  # dirty hosts and failed hosts


class RespawnWaitTest(unittest.TestCase):
    """A restarted worker that has not opened its GPU when respawn_wait ends:
    the host is not ready, and the report says who is starting what."""

    def test_a_restart_still_pending_leaves_the_host_dirty(self):
        specs = [HostSpec("gpu01", scenario="straggler_slow_init")]
        with scratch_fleet("respawnwait-", specs) as (tmp, fleet):
            playbook = os.path.join(tmp, "short_watch.yaml")
            with open(playbook_path("default.yaml")) as f:
                text = f.read().replace("respawn_wait: 30s", "respawn_wait: 2s")
            self.assertIn("respawn_wait: 2s", text)
            with open(playbook, "w") as f:
                f.write(text)
            argv = fleetreap_argv(fleet, "--playbook", playbook, "--json", "-", "--quiet",
                                  "--color", "never", identity=False)
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            host = json.loads(proc.stdout)["hosts"][0]
            self.assertEqual(host["status"], "dirty")
            self.assertRegex(host["respawning_parent"], r"^\d+ \(supervisor\.py\)$")
            self.assertRegex(host["error_message"],
                             r"^pid \d+ \(python3\), started by \d+ \(supervisor\.py\) "
                             r"after its GPU holder was signalled, holds no GPU yet$")
            self.assertTrue(all(g["state"] == "clean" for g in host["gpus_after"]))
            # The verdict was right: a few seconds later the restart holds GPU 5.
            import scenarios
            self.assertTrue(scenarios.wait_until(
                lambda: fleet.ground_truth()["gpu01"]["gpus"][5]["memory_used_mib"] > 0,
                timeout=15, interval=0.5))


if __name__ == "__main__":
    unittest.main(verbosity=2)
