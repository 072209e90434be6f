"""fleetreap on a real Slurm: Debian's slurmctld, slurmd
and munge over a simulated fleet (tests/sim/slurm_cluster.py: a slurmd in
each host's namespaces, Epilog= the shipped contrib/slurm/fleetreap-epilog
with the fleetreap under test). Jobs are real sbatch jobs whose batch
scripts start the sim's GPU workers on the GPUs Slurm gave them
($SLURM_JOB_GPUS); the cluster tracks processes with proctrack/linuxproc,
so workers that detach are orphaned at job end (re-parented to the host's
init, out of Slurm's sight) but stay in the job's cgroup (task/cgroup,
cgroup/v1: N:devices:/slurm_NODE/uid_0/job_J/step_batch/task_0). What must
hold:
  * the epilog of a job whose workers were orphaned kills them, and the
    node goes back to idle; a second job on the same node (other GPUs)
    keeps every process, same PIDs, until it is cancelled;
  * ghost memory on a job's GPU makes the epilog fail: slurmd drains the
    node with reason "Epilog error" (what 22.05 sets) and logs the epilog's
    one line naming the GPU;
  * srun --ntasks-per-node=1 fleetreap --local over a mixed fleet (clean,
    incident, ghost) plus fleetreap merge agrees with the ground truth, and
    fleetreap-drain drains the ghost node with a 'fleetreap:' reason (real
    scontrol), leaves the 'Epilog error' node alone, and resumes the node
    once a later run finds it clean;
  * the shipped fleetreap-sweep.sbatch, submitted with sbatch, runs
    fleetreap on every node of its allocation through srun from inside the
    first node and merges (exit 0 on clean nodes); on a dirty node the
    prolog refuses it (what real 22.05 does, see test_5);
  * the prolog (Prolog= fleetreap-prolog) refuses a job whose GPU holds
    ghost memory: slurmd drains the node ("Prolog error") and the job is
    requeued held, never run. Jobs without GPUs pass it unchecked.
A second, one-node cluster with the recommended proctrack/cgroup shows the
other case: slurmstepd kills the orphans itself (freezer cgroup) and the
epilog finds the job's GPUs clean with nothing to kill.
Needs root, writable cgroups and Debian's Slurm (scripts/setup.sh); skips
with the reason otherwise. Nothing is left running: the controller's
namespace and the hosts are ended by recorded PID.
"""

import json
import os
import subprocess
import sys
import time
import unittest

from fleet_case import BIN, SOURCE, FleetCase, needs_cgroups, scratch_fleet
from host_setup import HostSetup
from simfleet import HostSpec
from slurm_cluster import slurm_status

DRAIN = os.path.join(SOURCE, "contrib", "slurm", "fleetreap-drain")
SLURM_OK, SLURM_WHY = slurm_status()
# A node's PATH (the fake nvidia-smi is in /usr/local/bin, as on some hosts).
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# A batch script: the sim's vLLM-like workers on the job's GPUs, PIDs in
# /run/fakegpu/pids/job-ID (HOSTDIR/state/pids outside). Detached: the
# script returns once they run, and they are orphaned.
JOB = """#!/bin/bash
export FAKEGPU_GPUS=$SLURM_JOB_GPUS FAKEGPU_VISIBLE=$SLURM_JOB_GPUS FAKEGPU_MIB=70000 \\
  FAKEGPU_TITLE='VLLM::Worker_TP%d' FAKEGPU_ON_TERM=exit FAKEGPU_NO_FLAGS=1 \\
  FAKEGPU_PIDFILE=/run/fakegpu/pids/job-$SLURM_JOB_ID FAKEGPU_TITLE_PAD=nul FAKEGPU_COMM=python3
{detach}
bash -c 'exec -a python3 /usr/local/bin/gpuload -m vllm.entrypoints.openai.api_server'
{after}
"""


class SlurmJobs:
    """Helpers for a TestCase with self.fleet, self.slurm (the fleet's
    SlurmCluster) and self.tmp."""

    def submit(self, node, detach=True, after="", gpus=4):
        path = os.path.join(self.tmp, f"job-{time.monotonic_ns()}.sh")
        with open(path, "w") as f:
            f.write(JOB.format(detach="export FAKEGPU_DAEMONIZE=1 FAKEGPU_DETACH=1" if detach
                               else "", after=after))
        out = self.slurm.run(["sbatch", "--parsable", "-w", node, f"--gres=gpu:{gpus}",
                              "-o", os.path.join(self.tmp, "slurm-%j.out"), path])
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip().split(";")[0]

    def workers(self, node, job):
        """{gpu: pid} of a job's workers (PIDs inside the host), once up."""
        path = os.path.join(self.fleet.host(node).state, "pids", f"job-{job}")
        for _ in range(300):
            if os.path.exists(path):
                with open(path) as f:
                    pids = dict(line.split() for line in f)
                if len(pids) > 4:
                    return {int(k): int(v) for k, v in pids.items() if k != "parent"}
            time.sleep(0.1)
        self.fail(f"job {job}: workers never came up on {node}")

    def epilog_report(self, node, job, timeout=60):
        path = os.path.join(self.slurm.reports, node, f"job-{job}.json")
        deadline = time.monotonic() + timeout
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.slurm.wait_nodes(lambda n: "COMPLETING" not in n["State"], names=[node],
                              what=f"{node} done with job {job}'s epilog")
        with open(path) as f:
            return json.load(f)

    def gpu_pids(self, node):
        """{pid: gpus} of the GPU processes on 'node' now (ground truth)."""
        return {p["pid"]: p["gpus"] for p in self.fleet.ground_truth()[node]["gpu_processes"]}

    def slurmd_log(self, node):
        with open(os.path.join(self.fleet.host(node).dir, "slurm", "slurmd.log")) as f:
            return f.read()


@needs_cgroups
@unittest.skipUnless(SLURM_OK, SLURM_WHY)
class RealSlurmTest(SlurmJobs, FleetCase):
    PREFIX = "slurmrealtest-"
    SPECS = [HostSpec("shared", bystanders=10), HostSpec("ghost", bystanders=10),
             HostSpec("clean", bystanders=10),
             HostSpec("incident", scenario="vllm_incident", bystanders=10),
             HostSpec("leaky", scenario="ghost_memory", bystanders=10)]
    UP = {"slurm": {"fleetreap": BIN, "proctrack": "linuxproc", "prolog": True}}

    @classmethod
    def setUpClass(cls):
        cls.t0 = time.monotonic()
        super().setUpClass()
        cls.slurm = cls.fleet.slurm
        print(f"fleet and Slurm up in {time.monotonic() - cls.t0:.1f}s", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        print(f"whole suite {time.monotonic() - cls.t0:.1f}s", file=sys.stderr)

    # ---- tests ----------------------------------------------------------

    def test_1_epilog_cleans_orphans_and_spares_the_cotenant(self):
        t0 = time.monotonic()
        stay = self.submit("shared", detach=False)            # runs until cancelled
        stay_pids = self.workers("shared", stay)
        orphaned = self.submit("shared", after="sleep 1")     # its workers outlive it
        orphan_pids = self.workers("shared", orphaned)
        self.assertEqual(sorted(stay_pids) + sorted(orphan_pids), list(range(8)))
        self.assertEqual(self.slurm.node("shared")["State"], "MIXED")

        report = self.epilog_report("shared", orphaned)
        self.assertEqual(report["scope"]["slurm_job"], orphaned)
        self.assertEqual(report["scope"]["gpus"], sorted(orphan_pids))
        host = report["hosts"][0]
        self.assertEqual((host["status"], host["outcome"]), ("clean", "cleaned"), host)
        killed = {h["pid"] for h in host["holders"] if h["fate"] == "terminated"}
        self.assertEqual(killed, set(orphan_pids.values()))
        for holder in host["holders"]:
            if holder["pid"] in killed:
                self.assertEqual(holder["owner"]["slurm_job"], orphaned)
        now = self.gpu_pids("shared")
        self.assertFalse(set(orphan_pids.values()) & set(now), now)
        # The co-tenant: every worker alive, same PIDs, same GPUs.
        self.assertEqual(set(now), set(stay_pids.values()))
        self.assertEqual(self.slurm.job(orphaned)["JobState"], "COMPLETED")
        self.assertEqual(self.slurm.node("shared")["State"], "MIXED")   # not drained

        self.slurm.run(["scancel", stay], check=True)
        report = self.epilog_report("shared", stay)
        self.assertEqual(report["hosts"][0]["status"], "clean")   # Slurm killed its tree
        self.slurm.wait_nodes(lambda n: n["State"] == "IDLE", names=["shared"],
                              what="shared idle")
        self.assertTrue(self.fleet.ground_truth()["shared"]["clean"])
        print(f"orphans and co-tenant: {time.monotonic() - t0:.1f}s", file=sys.stderr)

    def test_2_ghost_memory_fails_the_epilog_and_drains(self):
        t0 = time.monotonic()
        job = self.submit("ghost", after="sleep 2")
        gpus = sorted(self.workers("ghost", job))
        HostSetup(self.fleet, self.fleet.host("ghost")).leak(gpus[2], 10151)
        report = self.epilog_report("ghost", job)
        host = report["hosts"][0]
        self.assertNotIn(host["status"], ("clean", "cleaned"), host)
        node = self.slurm.wait_nodes(lambda n: "DRAIN" in n["State"], names=["ghost"],
                                     what="ghost drained")["ghost"]
        # 22.05 sets its own reason; the epilog's line is in slurmd's log.
        self.assertTrue(node["Reason"].startswith("Epilog error"), node)
        line = f"fleetreap: GPU {gpus[2]} ghost memory (10151 MiB, no process holds it)"
        self.assertIn(f"error: epilog failed: rc:1 output:{line}", self.slurmd_log("ghost"))
        # The orphaned workers went all the same.
        self.assertEqual(self.gpu_pids("ghost"), {})
        print(f"ghost drain: {time.monotonic() - t0:.1f}s", file=sys.stderr)

    def test_3_srun_fleet_run_and_merge_agree_with_the_ground_truth(self):
        t0 = time.monotonic()
        nodes = ["clean", "incident", "leaky"]
        reports = os.path.join(self.tmp, "sweep")
        os.makedirs(reports)
        run = self.slurm.run(
            ["srun", f"--nodes={len(nodes)}", "--ntasks-per-node=1", "-w", ",".join(nodes),
             "sh", "-c", 'exec "$0" --local --json "$1/$(hostname).json" --quiet --color never',
             BIN, reports], env={"PATH": NODE_PATH}, timeout=120)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)   # leaky is dirty
        expected = os.path.join(reports, "expected.txt")
        with open(expected, "w") as f:
            f.write(self.slurm.run(["scontrol", "show", "hostnames", ",".join(nodes)],
                                   check=True).stdout)
        reasons = os.path.join(reports, "reasons.txt")
        merged = subprocess.run(
            [BIN, "merge", "--expect", expected, "--json", os.path.join(reports, "fleet.json"),
             "--drain-reasons", reasons, "--color", "never"]
            + [os.path.join(reports, f"{n}.json") for n in nodes],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(merged.returncode, 1, merged.stdout + merged.stderr)
        with open(os.path.join(reports, "fleet.json")) as f:
            fleet = {h["name"]: h for h in json.load(f)["hosts"]}
        truth = self.fleet.ground_truth()
        self.assertEqual(sorted(fleet), nodes)
        for name in nodes:   # verified clean: nothing holds a GPU and no memory is left
            self.assertEqual(fleet[name]["status"] == "clean",
                             truth[name]["clean"] and not truth[name]["ghost_gpus"],
                             (name, fleet[name]["status"]))
        self.assertEqual([(fleet[n]["status"], fleet[n]["outcome"]) for n in nodes],
                         [("clean", "clean"), ("clean", "cleaned"), ("dirty", "dirty")])
        self.assertEqual(truth["leaky"]["ghost_gpus"], [2])

        # The sweep was a job too: its epilog on leaky found the ghost GPU
        # (a job without GPUs is checked over all of them) and slurmd drained
        # the node. fleetreap-drain never touches a reason it did not set.
        states = self.slurm.wait_nodes(lambda n: "COMPLETING" not in n["State"], names=nodes,
                                       what="the sweep's epilogs done")
        self.assertTrue(states["leaky"]["Reason"].startswith("Epilog error"), states["leaky"])
        with open(reasons) as f:
            self.assertEqual(f.read(), "leaky fleetreap: GPU 2 ghost memory "
                                       "(10151 MiB, no process holds it)\n")
        drain = self.slurm.run([DRAIN, reasons] + nodes + ["ghost"], timeout=60)
        self.assertEqual(drain.returncode, 0, drain.stdout + drain.stderr)
        states = self.slurm.nodes()
        self.assertTrue(states["leaky"]["Reason"].startswith("Epilog error"), states["leaky"])
        self.assertTrue(states["ghost"]["Reason"].startswith("Epilog error"), states["ghost"])
        self.assertEqual((states["clean"]["State"], states["incident"]["State"]),
                         ("IDLE", "IDLE"))
        # An operator resumes leaky by hand; the next drain step (over real
        # scontrol) drains it again, now with the fleetreap reason.
        self.slurm.run(["scontrol", "update", "NodeName=leaky", "State=RESUME"], check=True)
        drain = self.slurm.run([DRAIN, reasons] + nodes, timeout=60)
        self.assertEqual(drain.returncode, 0, drain.stdout + drain.stderr)
        leaky = self.slurm.node("leaky")
        self.assertIn("DRAIN", leaky["State"])
        self.assertEqual(leaky["Reason"].split(" [")[0],
                         "fleetreap: GPU 2 ghost memory (10151 MiB, no process holds it)")

        # After a GPU reset, the next run (over SSH or --local) lists no
        # reason: the node is resumed, as only a 'fleetreap:' drain can be.
        os.remove(os.path.join(self.fleet.host("leaky").state, "leaked", "2"))   # reset
        again = self.fleet.exec("leaky", f"{BIN} --local --quiet --color never "
                                         "--drain-reasons /dev/null", timeout=60)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        empty = os.path.join(reports, "empty.txt")
        open(empty, "w").close()
        resume = self.slurm.run([DRAIN, empty, "leaky", "ghost"], timeout=60)
        self.assertEqual(resume.returncode, 0, resume.stdout + resume.stderr)
        # (after RESUME a node reads IDLE+NOT_RESPONDING until slurmd's next ping)
        states = self.slurm.wait_nodes(lambda n: n["State"] == "IDLE", names=["leaky"],
                                       what="leaky resumed")
        self.assertIn("DRAIN", states["ghost"]["State"])
        print(f"srun sweep, merge, drain: {time.monotonic() - t0:.1f}s", file=sys.stderr)

    def test_4_prolog_refuses_a_job_on_a_dirty_gpu(self):
        t0 = time.monotonic()
        # leaky is idle and clean again after test 3; now GPU 3 leaks.
        HostSetup(self.fleet, self.fleet.host("leaky")).leak(3, 2048)
        job = self.submit("leaky", gpus=8)
        node = self.slurm.wait_nodes(lambda n: "DRAIN" in n["State"], names=["leaky"],
                                     what="leaky drained by the prolog")["leaky"]
        self.assertTrue(node["Reason"].startswith("Prolog error"), node)
        self.assertIn("error: prolog failed: rc:1 output:fleetreap: GPU 3 ghost memory "
                      "(2048 MiB, no process holds it)", self.slurmd_log("leaky"))
        # The job never ran: requeued and held (22.05's default on a prolog failure).
        info = self.slurm.wait_job(job, states=("PENDING",))
        self.assertEqual((info["Reason"], info["Priority"], info["Restarts"]),
                         ("launch_failed_requeued_held", "0", "1"), info)
        self.assertFalse(os.path.exists(os.path.join(self.fleet.host("leaky").state, "pids",
                                                     f"job-{job}")))
        report = os.path.join(self.slurm.reports, "leaky", f"job-{job}.prolog.json")
        with open(report) as f:
            self.assertTrue(json.load(f)["dry_run"])
        self.slurm.run(["scancel", job], check=True)
        print(f"prolog refusal: {time.monotonic() - t0:.1f}s", file=sys.stderr)

    def sweep(self, nodes):
        """Submits contrib/slurm/fleetreap-sweep.sbatch over 'nodes'; returns
        (job id, its directory)."""
        sweep_dir = os.path.join(self.tmp, f"sweep-{'-'.join(nodes)}")
        os.makedirs(sweep_dir)
        out = self.slurm.run(
            ["sbatch", "--parsable", f"--nodes={len(nodes)}", "-w", ",".join(nodes),
             f"--chdir={sweep_dir}", "-o", os.path.join(sweep_dir, "sweep.out"),
             os.path.join(SOURCE, "contrib", "slurm", "fleetreap-sweep.sbatch")],
            env={"PATH": NODE_PATH, "FLEETREAP_BIN": BIN})
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip(), sweep_dir

    def test_5_the_shipped_sweep_job(self):
        t0 = time.monotonic()
        # On clean nodes it runs fleetreap on each through srun (from inside
        # the first node) and merges: exit 0, one clean host per node.
        job, sweep_dir = self.sweep(["clean", "shared"])
        info = self.slurm.wait_job(job, timeout=120)
        with open(os.path.join(sweep_dir, "sweep.out")) as f:
            log = f.read()
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), log)
        with open(os.path.join(sweep_dir, f"fleetreap-{job}", "fleet.json")) as f:
            fleet = {h["name"]: h["status"] for h in json.load(f)["hosts"]}
        self.assertEqual(fleet, {"clean": "clean", "shared": "clean"})
        # With Prolog= fleetreap-prolog, a sweep job never starts on a dirty
        # node: 22.05 gives the prolog of a batch job without GPUs
        # SLURM_JOB_GPUS listing every GPU, so the prolog checks them all,
        # refuses, and slurmd drains the node; the sweep is requeued held.
        # (An srun allocation, test 3, passes: no SLURM_JOB_GPUS there.)
        HostSetup(self.fleet, self.fleet.host("incident")).workload(
            mib=96844, title="VLLM::Worker_TP%d", detach=True)
        job, _ = self.sweep(["clean", "incident"])
        node = self.slurm.wait_nodes(lambda n: "DRAIN" in n["State"], names=["incident"],
                                     what="incident drained by the sweep's prolog")["incident"]
        self.assertTrue(node["Reason"].startswith("Prolog error"), node)
        self.assertRegex(self.slurmd_log("incident"),
                         r"error: prolog failed: rc:1 output:fleetreap: GPU 0 held by pid \d+ "
                         r"\(VLLM::Worker_TP\), outside the run's scope")
        info = self.slurm.wait_job(job, states=("PENDING",))
        self.assertEqual(info["Reason"], "launch_failed_requeued_held", info)
        self.slurm.run(["scancel", job], check=True)
        self.assertEqual(len(self.gpu_pids("incident")), 8)   # nothing was signalled
        print(f"sweep job: {time.monotonic() - t0:.1f}s", file=sys.stderr)

@needs_cgroups
@unittest.skipUnless(SLURM_OK, SLURM_WHY)
class RealSlurmCgroupTrackingTest(SlurmJobs, unittest.TestCase):
    """The recommended proctrack/cgroup: slurmstepd itself kills what the job
    left in its freezer cgroup, and the epilog is the check."""

    def test_slurm_kills_the_orphans_and_the_epilog_verifies(self):
        t0 = time.monotonic()
        with scratch_fleet("slurmcgtest-", [HostSpec("node", bystanders=10)],
                           slurm={"fleetreap": BIN, "proctrack": "cgroup"}) as (tmp, fleet):
            self.fleet, self.slurm, self.tmp = fleet, fleet.slurm, tmp
            job = self.submit("node", after="sleep 1")
            workers = self.workers("node", job)
            report = self.epilog_report("node", job)
            host = report["hosts"][0]
            self.assertEqual((host["status"], host["outcome"]), ("clean", "clean"), host)
            self.assertFalse(set(workers.values()) & set(self.gpu_pids("node")))
            fleet.slurm.wait_nodes(lambda n: n["State"] == "IDLE", what="node idle")
        print(f"proctrack/cgroup: {time.monotonic() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
