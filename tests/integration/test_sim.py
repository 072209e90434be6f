"""The simulated fleet itself works: real sshd logins with the plain OpenSSH
client, per-host process isolation, nvidia-smi computed from real process
state, systemd KillMode semantics, network faults, and a tear-down that leaves
nothing behind. Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR).
"""

import os
import subprocess
import sys
import unittest

import procfs
from fleet_case import FleetCase
from scenarios import wait_until
from simfleet import Fleet, HostSpec, scratch_dir


class SimFleetTest(FleetCase):
    PREFIX = "simtest-"
    SPECS = [
        HostSpec("gpu01", scenario="clean"),
        HostSpec("gpu02", scenario="vllm_incident"),
        HostSpec("gpu03", scenario="no_sudo"),
        HostSpec("gpu04", scenario="sudo_user"),
        HostSpec("gpu05", scenario="unreachable"),
        HostSpec("gpu06", scenario="no_banner"),
        HostSpec("gpu07", scenario="key_refused"),
        HostSpec("gpu08", scenario="host_key_changed"),
        HostSpec("gpu09", scenario="driver_missing"),
        HostSpec("gpu10", scenario="shm_leftovers"),
        HostSpec("gpu11", scenario="sshd_dies_on_stop"),
        HostSpec("gpu13", scenario="sshd_dies"),
        HostSpec("gpu14", scenario="vllm_running_cgroup"),
        HostSpec("gpu12", scenario="straggler_gpu5"),
    ]

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        os.rmdir(cls.tmp)   # the fleet's own files are gone

    def ssh(self, host, command, user="root", timeout=20):
        return subprocess.run(self.fleet.ssh_argv(host, command, user=user),
                              capture_output=True, text=True, timeout=timeout)

    def test_login_as_root_and_gpuops(self):
        for user in ("root", "gpuops"):
            r = self.ssh("gpu01", "id -un; hostname", user=user)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), [user, "gpu01"])

    def test_sudo_allowed_on_some_hosts_refused_on_others(self):
        self.assertEqual(self.ssh("gpu04", "sudo -n id -u", user="gpuops").stdout, "0\n")
        refused = self.ssh("gpu03", "sudo -n id -u", user="gpuops")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("sudo", refused.stderr)

    def test_ps_and_fuser_show_only_this_hosts_processes(self):
        r = self.ssh("gpu01", "ps -eo comm=")
        comms = r.stdout.split()
        self.assertIn("nvidia-persiste", comms)
        self.assertNotIn("VLLM::Worker_TP", comms)   # those live on gpu02
        # init, sshd, the daemon, this session... and the host's bystanders.
        bystanders = self.fleet.ground_truth()["gpu01"]["bystanders"]
        self.assertLess(len(comms), 12 + bystanders, comms)
        holders = self.ssh("gpu02", "fuser /dev/nvidia* 2>/dev/null").stdout.split()
        truth = self.fleet.ground_truth()["gpu02"]
        expected = {p["pid"] for p in truth["gpu_processes"]} | {p["pid"] for p in truth["protected"]}
        self.assertEqual({int(p) for p in holders}, expected)

    def test_nvidia_smi_loaded_versus_clean(self):
        loaded = self.ssh("gpu02", "nvidia-smi --query-gpu=index,memory.used --format=csv")
        self.assertEqual(loaded.stdout, "index, memory.used [MiB]\n" +
                         "".join(f"{k}, 96844 MiB\n" for k in range(8)))
        clean = self.ssh("gpu01", "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader")
        self.assertEqual(clean.stdout, "".join(f"{k}, 0 MiB\n" for k in range(8)))
        apps = self.ssh("gpu01", "nvidia-smi --query-compute-apps=pid,used_memory --format=csv")
        self.assertEqual(apps.stdout, "pid, used_gpu_memory [MiB]\n")

    def test_driver_missing(self):
        r = self.ssh("gpu09", "nvidia-smi --query-gpu=index,memory.used --format=csv,noheader; "
                              "echo rc=$?; ls /dev/nvidia* 2>&1 | head -1")
        self.assertTrue(r.stdout.startswith("NVIDIA-SMI has failed because it couldn't "
                                            "communicate with the NVIDIA driver."), r.stdout)
        self.assertIn("rc=9", r.stdout)
        self.assertIn("No such file", r.stdout)

    def test_killing_a_worker_frees_its_gpu(self):
        truth = self.fleet.ground_truth()["gpu10"]
        self.assertEqual(truth["gpu_processes"], [])
        # Every worker opens every GPU (peer access); one is charged on GPU 3.
        pids = [p["pid"] for p in self.fleet.ground_truth()["gpu12"]["gpu_processes"]
                if 3 in p["charged_gpus"]]
        self.assertEqual(len(pids), 1)
        self.ssh("gpu12", f"kill -KILL {pids[0]}")
        query = "nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 3"
        self.assertTrue(wait_until(lambda: self.ssh("gpu12", query).stdout == "0\n"))
        gpus = self.fleet.ground_truth()["gpu12"]["gpus"]
        self.assertEqual(gpus[3]["memory_used_mib"], 0)
        self.assertEqual(gpus[4]["memory_used_mib"], 70000)

    def test_straggler_respawns_once_on_gpu5(self):
        def gpu5_pid():
            out = [p["pid"] for p in self.fleet.ground_truth()["gpu12"]["gpu_processes"]
                   if 5 in p["charged_gpus"]]
            return out[0] if out else None
        first = gpu5_pid()
        self.fleet.exec("gpu12", f"kill -KILL {first}")
        second = wait_until(lambda: (gpu5_pid() or first) != first and gpu5_pid())
        self.assertTrue(second)
        self.fleet.exec("gpu12", f"kill -KILL {second}")
        self.assertTrue(wait_until(lambda: gpu5_pid() is None))

    def test_systemctl_stop_orphans_workers_with_killmode_process(self):
        r = self.ssh("gpu04", "sudo -n systemctl stop vllm.service; systemctl is-active vllm",
                     user="gpuops")
        self.assertEqual(r.stdout, "inactive\n", r.stderr)
        truth = self.fleet.ground_truth()["gpu04"]
        self.assertEqual(len(truth["gpu_processes"]), 8)
        self.assertEqual([p["name"] for p in truth["protected"]], ["nvidia-persistenced"])

    def test_systemctl_stop_ends_the_group_with_killmode_control_group(self):
        listed = self.ssh("gpu14", "systemctl list-units --no-legend --plain --state=active "
                                   "-- 'vllm*'")
        self.assertTrue(listed.stdout.startswith("vllm.service "), listed.stdout)
        r = self.ssh("gpu14", "systemctl stop -- vllm.service; echo rc=$?; "
                              "systemctl show -p MainPID,ActiveState vllm.service")
        self.assertEqual(r.stdout, "rc=0\nMainPID=0\nActiveState=inactive\n")
        self.assertEqual(self.fleet.ground_truth()["gpu14"]["gpu_processes"], [])
        missing = self.ssh("gpu14", "systemctl stop nope.service")
        self.assertEqual(missing.returncode, 5)
        self.assertEqual(missing.stderr, "Failed to stop nope.service: Unit nope.service "
                                         "not loaded.\n")

    def test_network_faults(self):
        refused = self.ssh("gpu05", "true")
        self.assertIn("Connection refused", refused.stderr)
        banner = self.ssh("gpu06", "true")
        self.assertNotEqual(banner.returncode, 0)
        self.assertIn("timed out", banner.stderr)
        key = self.ssh("gpu07", "true")
        self.assertIn("Permission denied", key.stderr)
        hostkey = self.ssh("gpu08", "true")
        self.assertIn("HOST IDENTIFICATION HAS CHANGED", hostkey.stderr + hostkey.stdout)

    def test_sshd_dies_mid_run(self):
        r = self.ssh("gpu11", "echo before; systemctl stop vllm.service; echo after")
        self.assertEqual(r.returncode, 255)
        self.assertNotIn("after", r.stdout)   # "before" may or may not make it out
        self.assertIn("Connection refused", self.ssh("gpu11", "true").stderr)
        r = self.ssh("gpu13", "nvidia-smi -L >/dev/null; echo first; nvidia-smi -L; echo after")
        self.assertEqual(r.returncode, 255)
        self.assertNotIn("after", r.stdout)
        self.assertIn("Connection refused", self.ssh("gpu13", "true").stderr)
        self.assertEqual(self.fleet.ground_truth()["gpu13"]["listener"], "none")

    def test_shm_ground_truth(self):
        truth = self.fleet.ground_truth()["gpu10"]
        self.assertIn("nccl-WU88OE", truth["shm_must_remove"])
        self.assertIn("keep-me.db", truth["shm_must_keep"])
        self.ssh("gpu10", "rm -f /dev/shm/nccl-* /dev/shm/psm_* /dev/shm/sem.vllm_lock "
                          "/dev/shm/sem.mp-* /dev/shm/sgl_shm_* /dev/shm/vllm_offload_*")
        self.assertTrue(self.fleet.ground_truth()["gpu10"]["clean"])


    def test_inventory_and_known_hosts(self):
        with open(self.fleet.inventory) as f:
            inventory = f.read()
        host = self.fleet.hosts["gpu03"]
        self.assertIn(f"    gpu03:\n      ansible_host: {host.address}\n      ansible_port: 22\n"
                      f"      ansible_user: gpuops\n      ansible_ssh_private_key_file: "
                      f"{self.fleet.key}\n      fleetreap_expected_gpus: 8\n"
                      "      ansible_become: true\n", inventory)
        self.assertIn("    scenario_vllm_incident:\n      hosts:\n        gpu02: {}\n", inventory)
        with open(self.fleet.known_hosts) as f:
            addresses = [line.split()[0] for line in f]
        self.assertEqual(addresses, [h.address for h in self.fleet.hosts.values()])

    def test_default_table_lists_workers(self):
        r = self.ssh("gpu02", "nvidia-smi")
        self.assertIn("VLLM::Worker_TP7", r.stdout)
        self.assertIn("96844MiB / 143771MiB", r.stdout)


class TearDownTest(unittest.TestCase):
    def test_two_fleets_at_once_do_not_collide(self):
        tmp = scratch_dir(prefix="simtwo-")
        with Fleet(os.path.join(tmp, "a")) as a, Fleet(os.path.join(tmp, "b")) as b:
            a.up([HostSpec("gpu01", scenario="clean")])
            b.up([HostSpec("gpu01", scenario="orphans")])
            self.assertNotEqual(a.hosts["gpu01"].address, b.hosts["gpu01"].address)
            self.assertEqual(a.ground_truth()["gpu01"]["gpu_processes"], [])
            self.assertEqual(len(b.ground_truth()["gpu01"]["gpu_processes"]), 8)
        os.rmdir(tmp)

    def test_down_leaves_nothing(self):
        tmp = scratch_dir(prefix="simdown-")
        workdir = os.path.join(tmp, "fleet")
        fleet = Fleet(workdir)
        fleet.up([HostSpec("a1", scenario="vllm_incident"), HostSpec("a2", scenario="no_banner")])
        pids = [h.unshare_pid for h in fleet.hosts.values()] + \
               [h.init_pid for h in fleet.hosts.values()]
        ns = {os.readlink(f"/proc/{h.init_pid}/ns/pid") for h in fleet.hosts.values()}
        fleet.down()
        for pid in pids:
            self.assertFalse(os.path.exists(f"/proc/{pid}/ns/pid"), pid)
        left = [p for p in procfs.list_pids() if procfs.read_proc_link(p, "ns/pid") in ns]
        self.assertEqual(left, [])
        with open("/proc/self/mountinfo") as f:
            self.assertNotIn(workdir, f.read())
        self.assertFalse(os.path.exists(workdir))
        os.rmdir(tmp)

    def test_cleanup_after_a_crashed_run(self):
        tmp = scratch_dir(prefix="simcrash-")
        workdir = os.path.join(tmp, "fleet")
        # A child process brings a persistent fleet up and dies without down().
        code = ("import sys; sys.path.insert(0, %r); from simfleet import Fleet, HostSpec; "
                "Fleet(%r, persistent=True).up([HostSpec('c1', scenario='orphans')]); "
                "import os; os._exit(1)") % (os.path.dirname(sys.modules[Fleet.__module__].__file__),
                                            workdir)
        subprocess.run([sys.executable, "-c", code], check=False)
        self.assertTrue(os.path.exists(os.path.join(workdir, "fleet.json")))
        self.assertEqual(Fleet.cleanup(workdir), 1)
        self.assertFalse(os.path.exists(workdir))
        os.rmdir(tmp)

    def test_down_stale_keeps_a_running_fleet(self):
        # The test command starts with 'scripts/fleet down --stale': a second
        # run beside this one must not end this fleet, only a crashed run's.
        tmp = scratch_dir(prefix="simstale-")
        crashed = os.path.join(tmp, "crashed")
        code = ("import sys; sys.path.insert(0, %r); from simfleet import Fleet, HostSpec; "
                "Fleet(%r, persistent=True).up([HostSpec('s1', scenario='orphans')]); "
                "import os; os._exit(1)") % (os.path.dirname(sys.modules[Fleet.__module__].__file__),
                                            crashed)
        subprocess.run([sys.executable, "-c", code], check=False)
        self.assertTrue(os.path.exists(os.path.join(crashed, "fleet.json")))
        fleet_cmd = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "fleet")
        with Fleet(os.path.join(tmp, "live")) as live:
            live.up([HostSpec("s2", scenario="orphans")])
            done = subprocess.run([sys.executable, fleet_cmd, "down", "--stale"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertFalse(os.path.exists(crashed), done.stderr)
            self.assertEqual(len(live.ground_truth()["s2"]["gpu_processes"]), 8)
            self.assertNotIn(live.workdir, done.stderr)
        os.rmdir(tmp)


if __name__ == "__main__":
    unittest.main(verbosity=2)
