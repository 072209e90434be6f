"""The shipped Slurm epilog and prolog (contrib/slurm) end to end,
inside simulated shared Slurm nodes (tests/sim's slurm_shared: job 41 on
GPUs 0-3, job 42 on GPUs 4-7, each with orphaned workers in its job
cgroup), run as slurmd runs them (Fleet.exec_epilog: root, slurmd's cgroup,
the job's environment). Job 41's epilog cleans job 41 and exits 0 while job
42 is untouched; a ghost GPU or a process that escaped the job's cgroup on
one of the job's GPUs makes it exit non-zero with one line on stderr naming
the GPU and the holder (slurmd then drains the node); the prolog refuses a
job whose GPUs are not clean and changes nothing. Never a Slurm command.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import re
import shlex
import subprocess
import unittest

from fleet_case import BIN, SOURCE, FleetCase, needs_cgroups
from host_setup import HostSetup
from simfleet import HostSpec

CONTRIB = os.path.join(SOURCE, "contrib", "slurm")
EPILOG = os.path.join(CONTRIB, "fleetreap-epilog")
PROLOG = os.path.join(CONTRIB, "fleetreap-prolog")
SLURMD_CGROUP = "/system.slice/slurmd.service"


@needs_cgroups
class SlurmEpilogTest(FleetCase):
    PREFIX = "slurmepilogtest-"
    SPECS = [HostSpec("shared", scenario="slurm_shared"),
             HostSpec("ghost", scenario="slurm_shared"),
             HostSpec("escaped", scenario="slurm_shared"),
             HostSpec("permuted", scenario="slurm_shared")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        HostSetup(cls.fleet, cls.fleet.host("ghost")).leak(2, 10151)
        # A worker of job 41 that left the job's cgroup (sglang#23627) and
        # sits on GPU 3: not the job's to kill, and GPU 3 is not clean.
        cls.escapee = HostSetup(cls.fleet, cls.fleet.host("escaped")).workload(
            gpus="3", mib=30720, title="sglang::scheduler_DP0_TP0_EP0", detach=True,
            visible="3", user="gpuops", cgroup="/user.slice/user-1000.slice/session-3.scope")[3]
        # /dev/nvidia0 is nvidia-smi's GPU 6 and /dev/nvidia6 GPU 0:
        # job 41 (minors 0-3) sits on indexes 6,1,2,3, job 42 (4-7) on 4,5,0,7.
        HostSetup(cls.fleet, cls.fleet.host("permuted")).gpu_minors([6, 1, 2, 3, 4, 5, 0, 7])
        cls.before = cls.fleet.ground_truth()

    def report_dir(self, host):
        return os.path.join(self.tmp, f"reports-{host}")

    def hook(self, host, script, job, env=None):
        settings = {"FLEETREAP_BIN": BIN, "FLEETREAP_REPORT_DIR": self.report_dir(host),
                    **(env or {})}
        command = " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items()) + " " + script
        if env is None or "SLURM_JOB_ID" not in env:
            return self.fleet.exec_epilog(host, job, command)
        return self.fleet.exec(host, command, cgroup=SLURMD_CGROUP, timeout=120)

    def report(self, host, name):
        with open(os.path.join(self.report_dir(host), name)) as f:
            return json.load(f)

    def assert_job_42_untouched(self, host):
        jobs = self.fleet.ground_truth()[host]["jobs"]
        self.assertEqual(jobs["42"]["workers_alive"], jobs["42"]["workers"])
        self.assertEqual(jobs["42"]["processes"], self.before[host]["jobs"]["42"]["processes"])

    def test_1_epilog_translates_minors_to_indexes(self):
        # SLURM_JOB_GPUS=0,1,2,3 are device minors: before the minor-to-index translation the scope
        # read them as indexes, left job 41's worker on /dev/nvidia0 (GPU 6)
        # alone and judged GPU 0, job 42's.
        proc = self.hook("permuted", EPILOG, 41)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stdout)
        jobs = self.fleet.ground_truth()["permuted"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], [])
        self.assert_job_42_untouched("permuted")
        host = self.report("permuted", "job-41.json")["hosts"][0]
        after = {g["index"]: g["state"] for g in host["gpus_after"]}
        self.assertEqual({i for i, s in after.items() if s == "out_of_scope"}, {0, 4, 5, 7})

    def test_1_epilog_fails_on_a_minor_the_driver_does_not_know(self):
        env = dict(self.fleet.host("permuted").jobs["42"]["epilog_env"], SLURM_JOB_GPUS="9")
        proc = self.hook("permuted", EPILOG, 42, env=env)
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        self.assertIn("SLURM_JOB_GPUS minor 9: no GPU of this host has device minor 9",
                      proc.stdout + proc.stderr)
        self.assert_job_42_untouched("permuted")

    def test_1_epilog_cleans_its_job_only(self):
        proc = self.hook("shared", EPILOG, 41)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stdout)
        report = self.report("shared", "job-41.json")
        self.assertEqual(report["scope"]["slurm_job"], "41")
        self.assertEqual(report["scope"]["gpus"], [0, 1, 2, 3])
        self.assertEqual(report["hosts"][0]["name"], "shared")
        self.assertEqual(report["exit_code"], 0)
        with open(os.path.join(self.report_dir("shared"), "job-41.log")) as f:
            self.assertIn("READY", f.read())
        jobs = self.fleet.ground_truth()["shared"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], [])
        self.assert_job_42_untouched("shared")

    def test_2_prolog_accepts_clean_gpus_and_refuses_busy_ones(self):
        # After job 41's epilog GPUs 0-3 are free; 4-7 are still job 42's.
        ok = self.hook("shared", PROLOG, None,
                       {"SLURM_JOB_ID": "43", "SLURM_JOB_GPUS": "0,1,2,3"})
        self.assertEqual((ok.returncode, ok.stderr), (0, ""), ok.stdout)
        busy = self.hook("shared", PROLOG, None,
                         {"SLURM_JOB_ID": "44", "SLURM_JOB_GPUS": "4,5,6,7"})
        self.assertNotEqual(busy.returncode, 0)
        report = self.report("shared", "job-44.prolog.json")
        self.assertTrue(report["dry_run"])
        holder = next(h for h in report["hosts"][0]["holders"]
                      if 4 in h["gpus"] and h["owner"]["slurm_job"] == "42")
        self.assertRegex(busy.stderr,
                         r"^fleetreap: GPU 4 held by pid \d+ \(pt_main_thread\), outside the run's "
                         r"scope \(\+3 more GPUs not clean\)\n$")
        self.assertEqual(len(busy.stderr.splitlines()), 1)
        pid = int(re.search(r"pid (\d+)", busy.stderr).group(1))
        self.assertIn(pid, self.before["shared"]["jobs"]["42"]["workers"], holder)
        self.assert_job_42_untouched("shared")

    def test_3_ghost_gpu_fails_the_epilog_with_one_line(self):
        proc = self.hook("ghost", EPILOG, 41)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stderr,
                         "fleetreap: GPU 2 ghost memory (10151 MiB, no process holds it)\n")
        jobs = self.fleet.ground_truth()["ghost"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], [])   # cleaned all the same
        self.assert_job_42_untouched("ghost")
        self.assertEqual(self.report("ghost", "job-41.json")["hosts"][0]["status"], "dirty")

    def test_4_escaped_holder_fails_the_epilog_and_is_left_alone(self):
        proc = self.hook("escaped", EPILOG, 41)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        host = self.report("escaped", "job-41.json")["hosts"][0]
        name = next(h["name"] for h in host["holders"] if h["pid"] == self.escapee)
        self.assertEqual(proc.stderr, f"fleetreap: GPU 3 held by pid {self.escapee} ({name}), "
                                      "outside the run's scope\n")
        truth = self.fleet.ground_truth()["escaped"]
        self.assertIn(self.escapee, {p["pid"] for p in truth["gpu_processes"]})
        self.assertEqual(truth["jobs"]["41"]["workers_alive"], [])
        self.assert_job_42_untouched("escaped")

    def test_5_without_a_job_it_refuses_and_touches_nothing(self):
        proc = self.fleet.exec("shared", f"FLEETREAP_BIN={BIN} FLEETREAP_REPORT_DIR="
                                         f"{self.report_dir('shared')} {EPILOG}",
                               cgroup=SLURMD_CGROUP)
        self.assertEqual(proc.returncode, 64)
        self.assertEqual(proc.stderr, "fleetreap: SLURM_JOB_ID is not set: the epilog works on "
                                      "one Slurm job, run it from slurmd\n")
        self.assert_job_42_untouched("shared")

    def test_6_scripts_never_call_slurm(self):
        for path in (EPILOG, PROLOG):
            with open(path) as f:
                code = [line for line in f if not line.lstrip().startswith("#")]
            for line in code:
                self.assertIsNone(re.search(r"\b(scontrol|squeue|sinfo|sacctmgr|srun|sbatch|"
                                            r"salloc|scancel)\b", line), line)
            mode = os.stat(path).st_mode
            self.assertTrue(mode & 0o111, path)
        subprocess.run(["bash", "-n", EPILOG], check=True)

    def test_7_installed_epilog_finds_its_fleetreap(self):
        # `cmake --install` puts the scripts in PREFIX/libexec/fleetreap and
        # the binary in PREFIX/bin; without FLEETREAP_BIN they find it there.
        prefix = os.path.join(self.tmp, "prefix")
        subprocess.run(["cmake", "--install", os.path.dirname(BIN), "--prefix", prefix],
                       check=True, capture_output=True, timeout=120)
        libexec = os.path.join(prefix, "libexec", "fleetreap")
        self.assertEqual(sorted(os.listdir(libexec)),
                         ["fleetreap-drain", "fleetreap-epilog", "fleetreap-prolog",
                          "fleetreap-sweep.sbatch"])
        command = (f"FLEETREAP_REPORT_DIR={self.report_dir('shared')} "
                   f"{os.path.join(libexec, 'fleetreap-epilog')}")
        proc = self.fleet.exec_epilog("shared", 42, command)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stdout)
        jobs = self.fleet.ground_truth()["shared"]["jobs"]
        self.assertEqual(jobs["42"]["workers_alive"], [])
        self.assertEqual(self.report("shared", "job-42.json")["scope"]["slurm_job"], "42")

    def test_8_fleetreap_args_are_words_never_globs(self):
        # FLEETREAP_ARGS is split on blanks; a pattern in it stays a word:
        # the playbook literally named "pb*.yaml" is read, not pb-bad.yaml.
        folder = os.path.join(self.tmp, "args")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(SOURCE, "playbooks", "default.yaml")) as f:
            default = f.read()
        with open(os.path.join(folder, "pb*.yaml"), "w") as f:
            f.write(default)
        with open(os.path.join(folder, "pb-bad.yaml"), "w") as f:
            f.write("not: [a playbook\n")
        proc = self.hook("shared", PROLOG, None,
                         {"SLURM_JOB_ID": "45", "SLURM_JOB_GPUS": "0,1",
                          "FLEETREAP_ARGS": f"--playbook {folder}/pb*.yaml"})
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
