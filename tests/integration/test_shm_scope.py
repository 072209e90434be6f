"""/dev/shm under a scope, end to end: the real fleetreap binary against
simulated GPU nodes (over real SSH for --gpus, as slurmd runs the shipped
epilog for a Slurm job), checked against the fleet's own ground truth. The
workers of the run's job map NCCL-like segments (gpuload's FAKEGPU_SHM);
under --gpus and the Slurm epilog the job's own segments are removed once
its workers are gone, and every other tenant's are kept: a live tenant's
(same uid and another), leftovers no holder held (same uid and another), a
segment the job mapped but another user owns, and, with the playbook's
shm_under_scope: none, the job's own. Before shm_under_scope, a scoped run
removed nothing (the job's leftovers stayed).
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import os
import shlex
import unittest

from fleet_case import BIN, SOURCE, FleetCase, by_name, needs_cgroups, run_json
from host_setup import HostSetup, user_id
from simfleet import HostSpec

EPILOG = os.path.join(SOURCE, "contrib", "slurm", "fleetreap-epilog")
DEFAULT_PLAYBOOK = os.path.join(SOURCE, "playbooks", "default.yaml")


def leftover(host, name, user, mode=0o600):
    """A /dev/shm file that 'user' owns and no process holds."""
    path = os.path.join(host.dir, "shm", name)
    with open(path, "wb") as f:
        f.truncate(4096)
    os.chown(path, user_id(user), -1)
    os.chmod(path, mode)


class ShmUnderGpusScopeTest(FleetCase):
    PREFIX = "shmscope-"
    SPECS = [HostSpec("owned", scenario="clean", bystanders=5),
             HostSpec("none", scenario="clean", bystanders=5)]

    # The run's job (--gpus 4-7): researcher's workers on GPUs 4-5, and one
    # on GPU 6 that maps a segment gpuops owns (made 0666 beforehand).
    OURS = ["nccl-job-4", "nccl-job-5"]
    KEPT = ["nccl-live-0", "nccl-live-1", "nccl-dead-researcher", "nccl-dead-gpuops",
            "nccl-foreign-6"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pids = {}
        for name in ("owned", "none"):
            host = cls.fleet.host(name)
            h = HostSetup(cls.fleet, host)
            leftover(host, "nccl-dead-researcher", "researcher")
            leftover(host, "nccl-dead-gpuops", "gpuops")
            leftover(host, "nccl-foreign-6", "gpuops", mode=0o666)
            job = h.workload(gpus="4-5", visible="4-5", mib=30720, user="researcher",
                             detach=True, shm="nccl-job-")
            foreign = h.workload(gpus="6", visible="6", mib=30720, user="researcher",
                                 detach=True, shm="nccl-foreign-")
            same_uid = h.workload(gpus="0", visible="0", mib=30720, user="researcher",
                                  detach=True, shm="nccl-live-")
            other_uid = h.workload(gpus="1", visible="1", mib=30720, user="gpuops",
                                   detach=True, shm="nccl-live-", shm_fd=True)
            cls.pids[name] = {"job": [job[4], job[5], foreign[6]],
                              "tenants": [same_uid[0], other_uid[1]]}

    def shm(self, host):
        return self.fleet.ground_truth()[host]["shm_remaining"]

    def alive(self, host, pids):
        live = {p["pid"] for p in self.fleet.ground_truth()[host]["gpu_processes"]}
        return sorted(pid for pid in pids if pid in live)

    def test_gpus_scope_removes_the_jobs_own_segments_only(self):
        before = self.shm("owned")
        self.assertTrue(set(self.OURS + self.KEPT) <= set(before), before)
        code, report = run_json(self.fleet, "--limit", "owned", "--gpus", "4-7")
        host = by_name(report)["owned"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertEqual(self.alive("owned", self.pids["owned"]["job"]), [])
        tenants = self.pids["owned"]["tenants"]
        self.assertEqual(self.alive("owned", tenants), sorted(tenants))
        self.assertEqual(sorted(host["shm_removed"]), self.OURS)
        self.assertEqual(host.get("shm_kept", []), [])
        after = self.shm("owned")
        for name in self.OURS:
            self.assertNotIn(name, after)
        for name in self.KEPT:
            self.assertIn(name, after)

    def test_shm_under_scope_none_removes_nothing(self):
        path = os.path.join(self.tmp, "none.yaml")
        with open(DEFAULT_PLAYBOOK) as f:
            text = f.read()
        self.assertIn("shm_under_scope: owned\n", text)
        with open(path, "w") as f:
            f.write(text.replace("shm_under_scope: owned\n", "shm_under_scope: none\n"))
        code, report = run_json(self.fleet, "--limit", "none", "--gpus", "4-7", playbook=path)
        host = by_name(report)["none"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertEqual(self.alive("none", self.pids["none"]["job"]), [])
        self.assertEqual(host["shm_removed"], [])
        after = self.shm("none")
        for name in self.OURS + self.KEPT:
            self.assertIn(name, after)


@needs_cgroups
class ShmUnderSlurmEpilogTest(FleetCase):
    PREFIX = "shmepilog-"
    SPECS = [HostSpec("node", scenario="clean", bystanders=5)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        host = cls.fleet.host("node")
        h = HostSetup(cls.fleet, host)
        h.daemon("nvidia-persistenced")
        h.sleeper(argv=("/usr/sbin/slurmd", "-D", "-s"), comm="slurmd",
                  exe="/usr/sbin/slurmd", cgroup="/system.slice/slurmd.service")
        leftover(host, "nccl-41-stale", "gpuops")  # job 41's user, held by no one
        h.slurm_job(41, "0-3", user="gpuops", shm="nccl-41-")
        h.slurm_job(42, "4-7", user="researcher", shm="nccl-42-")

    def test_epilog_removes_its_jobs_segments_only(self):
        settings = {"FLEETREAP_BIN": BIN,
                    "FLEETREAP_REPORT_DIR": os.path.join(self.tmp, "reports")}
        command = " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items()) + " " + EPILOG
        proc = self.fleet.exec_epilog("node", 41, command)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stdout)
        truth = self.fleet.ground_truth()["node"]
        self.assertEqual(truth["jobs"]["41"]["workers_alive"], [])
        self.assertEqual(truth["jobs"]["42"]["workers_alive"], truth["jobs"]["42"]["workers"])
        shm = truth["shm_remaining"]
        for gpu in range(4):
            self.assertNotIn(f"nccl-41-{gpu}", shm)
        for gpu in range(4, 8):
            self.assertIn(f"nccl-42-{gpu}", shm)
        self.assertIn("nccl-41-stale", shm)


if __name__ == "__main__":
    unittest.main()
