"""What a real H200 showed, on the simulated fleet: holders that
only map a device file, holders whose main thread exited (state Z) while a
thread holds the devices, workers whose reaper is late or absent (a killed
worker stays a zombie: gone for every wait, its memory proven by the
verify), and a host that ends dirty after removing /dev/shm leftovers (every
removal and every entry kept, with why, reported). Each test fails on the
the code before these shapes were handled. Needs root and the built sim tools.
"""

import os
import subprocess
import unittest

from fleet_case import FleetCase, by_name, fleetreap_argv, playbook_path, run_json
from host_setup import HostSetup
from simfleet import HostSpec

SCENARIOS = {
    "h200a": "map_holder",
    "h200b": "leader_exited",
    "h200c": "late_reaper",
    "h200d": "never_reaped",
    "h200e": "shm_dirty",
    "h200f": "mps_node",
}


class RealGpuShapesTest(FleetCase):
    PREFIX = "realgpu-"
    SPECS = [HostSpec(name, scenario=s, bystanders=5) for name, s in SCENARIOS.items()]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = cls.fleet.ground_truth()
        cls.smi_before = {h: cls.smi(h) for h in ("h200a", "h200b")}
        # term_grace 2s: the late reaper (3 s) reaps after it; a wait that
        # counted zombies as present would run it out and then KILL them.
        with open(playbook_path("default.yaml")) as f:
            text = f.read().replace("term_grace: 10s", "term_grace: 2s")
        cls.playbook = os.path.join(cls.tmp, "grace2s.yaml")
        with open(cls.playbook, "w") as f:
            f.write(text)
        cls.dry_exit, dry = run_json(cls.fleet, "--dry-run", playbook=cls.playbook)
        cls.dry = by_name(dry)
        cls.exit, report = run_json(cls.fleet, playbook=cls.playbook, command_timeout="20s")
        cls.hosts = by_name(report)
        cls.after = cls.fleet.ground_truth()

    @classmethod
    def smi(cls, host):
        """What the host's nvidia-smi shows: (the PIDs --query-compute-apps
        lists, memory.used per GPU)."""
        def query(args):
            proc = cls.fleet.exec(host, "nvidia-smi " + args + " --format=csv,noheader,nounits")
            return [line.split(",")[0].strip() for line in proc.stdout.splitlines() if line]
        pids = {int(p) for p in query("--query-compute-apps=pid")}
        return pids, [int(m) for m in query("--query-gpu=memory.used")]

    def test_nvidia_smi_charges_them_as_on_the_h200(self):
        # Mappings only: the memory counts, no process is named (the H200's
        # checks-2026-12-02/mapped.txt); a Z leader whose threads hold the
        # devices is listed by its PID.
        pids, used = self.smi_before["h200a"]
        self.assertEqual(pids, set())
        self.assertEqual(used, [8806] * 8)
        pids, used = self.smi_before["h200b"]
        self.assertEqual(pids, self.gpu_pids("h200b"))
        self.assertEqual(used, [6754] * 8)

    def test_nvidia_smi_frees_a_zombies_charged_memory(self):
        # The never-reaped host's TERM'd workers stay zombies with every
        # thread exited: memory the driver charged them is free.
        zombies = [h["pid"] for h in self.hosts["h200d"]["holders"] if h["fate"] == "terminated"]
        self.assertTrue(zombies)
        state = self.fleet.exec("h200d", f"cat /proc/{zombies[0]}/stat").stdout
        self.assertEqual(state.rsplit(")", 1)[1].split()[0], "Z", state)
        HostSetup(self.fleet, self.fleet.host("h200d")).charge(zombies[0], 0, 30720)
        pids, used = self.smi("h200d")
        self.assertNotIn(zombies[0], pids)
        self.assertEqual(used[0], 0)

    def gpu_pids(self, host):
        return {p["pid"] for p in self.before[host]["gpu_processes"]}

    def test_holders_found_by_mappings_and_by_every_threads_fds(self):
        for host in ("h200a", "h200b"):
            truth = self.gpu_pids(host)
            self.assertEqual(len(truth), 8, self.before[host])
            planned = {h["pid"] for h in self.dry[host]["holders"] if h["fate"] == "would_term"}
            self.assertEqual(planned, truth, host)
            found = {h["pid"]: h for h in self.dry[host]["holders"]}
            for pid in truth:  # found by the devices they hold, not only by nvidia-smi
                self.assertIn("/dev/nvidiactl", found[pid]["devices"], (host, found[pid]))
            if host == "h200b":
                self.assertTrue(all(found[p]["state"] == "Z" for p in truth), found)

    def test_they_are_cleaned_by_term(self):
        for host in ("h200a", "h200b"):
            h = self.hosts[host]
            self.assertEqual(h["status"], "clean", (host, h.get("error_message"), h["gpus_after"]))
            self.assertEqual(h["term_sent"], 8, host)
            self.assertEqual(h["kill_sent"], 0, host)
            self.assertEqual(self.after[host]["gpu_processes"], [], host)

    def test_zombies_count_as_gone(self):
        # Late or never reaped: TERM'd workers are zombies, their files
        # closed; none is KILLed or called unkillable, and the verify proves
        # the GPUs clean.
        for host in ("h200c", "h200d"):
            h = self.hosts[host]
            self.assertEqual(h["status"], "clean", (host, h.get("error_message"), h["gpus_after"]))
            self.assertEqual(h["term_sent"], 8, host)
            self.assertEqual(h["kill_sent"], 0, (host, h["timings"]))
            fates = {x["fate"] for x in h["holders"]}
            self.assertEqual(fates, {"terminated"}, host)
            # Before zombies counted as gone, the TERM wait ran out term_grace on the zombies
            # and left them "present", so the ladder went on to a KILL wave.
            steps = [t["step"] for t in h["timings"]]
            self.assertNotIn("kill", steps, (host, h["timings"]))
            self.assertTrue(all(g["memory_used_mib"] == 0 for g in self.after[host]["gpus"]))

    def test_shm_outcomes_are_reported_when_the_host_ends_dirty(self):
        h = self.hosts["h200e"]
        self.assertEqual(h["status"], "dirty")
        self.assertEqual(sorted(h["shm_removed"]), ["nccl-WU88OE", "psm_4f1e2b7a"])
        self.assertEqual(h["shm_kept"], ["nccl-inuse: in use"])
        self.assertEqual(self.dry["h200e"]["shm_kept"], ["nccl-inuse: in use"])
        self.assertEqual(sorted(self.dry["h200e"]["shm_would_remove"]),
                         ["nccl-WU88OE", "psm_4f1e2b7a"])

    def test_the_table_names_what_was_kept(self):
        argv = fleetreap_argv(self.fleet, "--playbook", playbook_path("default.yaml"),
                              "--limit", "h200e", "--dry-run", "--color", "never")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertIn("1 /dev/shm entry kept", proc.stdout)
        self.assertIn("/dev/shm kept nccl-inuse: in use", proc.stdout)


    def test_mps_clients_are_jobs_and_the_servers_own_context_is_allowed(self):
        h = self.hosts["h200f"]
        self.assertEqual(h["status"], "clean", (h.get("error_message"), h["gpus_after"]))
        gpu0 = next(g for g in h["gpus_after"] if g["index"] == 0)
        self.assertEqual(gpu0["state"], "protected_only", gpu0)
        self.assertIn("nvidia-cuda-mps", gpu0["detail"])
        self.assertIn("allowance of 256 MiB", gpu0["detail"])
        daemons = self.after["h200f"]["daemons"]
        for name in ("nvidia-cuda-mps-control", "nvidia-cuda-mps-server", "nvidia-persistenced"):
            self.assertTrue(daemons[name]["alive"], name)
        fates = {x["pid"]: (x["fate"], x["user"]) for x in h["holders"]}
        # The client and gpuops's own control daemon are jobs: signalled.
        jobs = {pid for pid, (fate, _) in fates.items() if fate in ("terminated", "killed")}
        self.assertEqual(len(jobs), 2, fates)
        self.assertIn(("terminated", "gpuops"), fates.values())


if __name__ == "__main__":
    unittest.main()
