"""Protection is for the host's daemons only, end to end: the real fleetreap
binary against a simulated GPU node over real SSH, checked against the
fleet's own ground truth. The genuine root-owned MPS server run by a user,
and a root nv-hostengine whose environment preloads a library, are jobs
(reported named_like and signalled); a worker whose main thread exited (its
exe unreadable) and whose comm reads "sshd" is not protected by that comm;
the daemons themselves survive.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import unittest

from fleet_case import FleetCase, by_name, needs_cgroups, run_json
from host_setup import HostSetup
from simfleet import HostSpec


@needs_cgroups
class ProtectHostDaemonsTest(FleetCase):
    PREFIX = "hostdaemons-"
    SPECS = [HostSpec("borrow", scenario="clean", bystanders=10),
             HostSpec("pidfile", scenario="clean", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        h = HostSetup(cls.fleet, cls.fleet.host("borrow"))
        # The genuine ones, root's: protected.
        cls.root_mps = h.daemon("nvidia-cuda-mps-server")
        cls.root_engine = h.daemon("nv-hostengine")
        mps = "/usr/bin/nvidia-cuda-mps-server"
        cls.user_mps = h.workload(gpus="", hold_gpus="3", mib=90000, argv=(mps,), exe=mps,
                                  user="gpuops", visible="")["parent"]
        engine = "/usr/bin/nv-hostengine"
        cls.preloaded = h.workload(gpus="", hold_gpus="4", mib=50000, argv=(engine, "-n"),
                                   exe=engine, visible="",
                                   wrap="env LD_PRELOAD=libc.so.6 sh -c")["parent"]
        cls.leaderless = h.workload(gpus="5", visible="5", mib=30720, hold="threads",
                                    worker_comm="sshd", user="gpuops", detach=True)[5]
        # DCGM outside the system folders, known by its PID file alone,
        # /var/run/nvhostengine.pid (a file directly in /var/run).
        cls.srv_engine = HostSetup(cls.fleet, cls.fleet.host("pidfile")).daemon(
            "nv-hostengine", path="/srv/dcgm/bin/nv-hostengine")
        code, report = run_json(cls.fleet, "--limit", "borrow")
        cls.host = by_name(report)["borrow"]
        cls.truth = cls.fleet.ground_truth()["borrow"]

    def holder(self, pid):
        return next(h for h in self.host["holders"] if h["pid"] == pid)

    def assert_signalled(self, pid):
        holder = self.holder(pid)
        self.assertIsNone(holder["protected_by"], holder)
        self.assertIn(holder["fate"], ("terminated", "killed"), holder)
        live = {p["pid"] for p in self.truth["gpu_processes"]}
        self.assertNotIn(pid, live)

    def test_the_host_ends_clean(self):
        self.assertEqual(self.host["status"], "clean", self.host["error_message"])
        for name, pid in (("nvidia-cuda-mps-server", self.root_mps),
                          ("nv-hostengine", self.root_engine)):
            self.assertTrue(self.truth["daemons"][name]["alive"], name)
            self.assertIn(self.holder(pid)["protected_by"], (name, name + " (pid file)"))

    def test_a_users_own_mps_server_is_a_job(self):
        self.assert_signalled(self.user_mps)
        self.assertEqual(self.holder(self.user_mps)["named_like"], "nvidia-cuda-mps-server")

    def test_a_preloaded_daemon_is_a_job(self):
        self.assert_signalled(self.preloaded)
        self.assertEqual(self.holder(self.preloaded)["named_like"], "nv-hostengine")

    def test_an_unreadable_exe_is_not_protected_by_its_comm(self):
        self.assert_signalled(self.leaderless)

    def test_a_pid_file_directly_in_var_run_is_read(self):
        code, report = run_json(self.fleet, "--limit", "pidfile")
        host = by_name(report)["pidfile"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        holder = next(h for h in host["holders"] if h["pid"] == self.srv_engine)
        self.assertEqual(holder["protected_by"], "nv-hostengine (pid file)", holder)
        truth = self.fleet.ground_truth()["pidfile"]
        self.assertTrue(truth["daemons"]["nv-hostengine"]["alive"])


if __name__ == "__main__":
    unittest.main()
