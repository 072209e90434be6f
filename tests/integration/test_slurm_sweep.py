"""contrib/slurm/fleetreap-sweep.sbatch end to end: the batch
script runs `fleetreap --local` on every node of its allocation through
srun and merges the reports. No Slurm runs here: stand-in `scontrol show
hostnames` and `srun` first on PATH; the srun runs its task inside each
simulated node (Fleet.exec, the node's own namespaces, with a job's
SLURM_* environment; never on this machine) and, like the real one, loses
the task of a node that is down; it prints each task's lines as srun
--label does ("N: line"), and the batch step files task N's report as the
Nth node's. The merged report must agree with the fleet's ground truth, and
the lost node must count as without a report. A node whose task prints a
report naming another node (FORGE=node03>node04) makes the merge refuse.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import subprocess
import unittest

from fleet_case import BIN, SIM_DIR, SOURCE, FleetCase, playbook_path
from simfleet import HostSpec

SWEEP = os.path.join(SOURCE, "contrib", "slurm", "fleetreap-sweep.sbatch")
NODES = ("node01", "node02", "node03", "node04")   # node04: down, no sim host

SCONTROL = """#!/bin/sh
[ "$1 $2 $3" = "show hostnames node[01-04]" ] || {{ echo "scontrol: bad args: $*" >&2; exit 1; }}
printf '%s\\n' {nodes}
"""

SRUN = """#!/usr/bin/python3
import os, shlex, sys
sys.path.insert(0, {sim!r})
from simfleet import Fleet
args = sys.argv[1:]
while args and args[0].startswith("-"):
    args.pop(0)
fleet = Fleet.attach({workdir!r})
rc = 0
for task, node in enumerate({nodes!r}):
    if node not in fleet.hosts:
        print(f"srun: error: {{node}}: task {{task}}: Communication connection failure",
              file=sys.stderr)
        rc = 1
        continue
    env = "SLURM_JOB_ID=77 SLURM_JOB_GPUS=0 SLURMD_NODENAME=" + node
    proc = fleet.exec(node, f"export {{env}}; " + shlex.join(args), timeout=120)
    # --label: each line of a task's output, prefixed with its number.
    out = proc.stdout
    forger, _, victim = os.environ.get("FORGE", "").partition(">")
    if node == forger:   # this node's task speaks for another node instead
        out = out.replace(f'"{{node}}"', f'"{{victim}}"')
    for stream, text in ((sys.stdout, out), (sys.stderr, proc.stderr)):
        stream.write("".join(f"{{task}}: {{line}}" for line in text.splitlines(True)))
    rc = max(rc, proc.returncode)
sys.exit(rc)
"""


class SlurmSweepTest(FleetCase):
    PREFIX = "slurmsweeptest-"
    SPECS = [HostSpec("node01", scenario="vllm_incident"),
             HostSpec("node02", scenario="ghost_memory"),
             HostSpec("node03", scenario="clean")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin = os.path.join(cls.tmp, "bin")
        os.mkdir(cls.bin)
        for name, text in (("scontrol", SCONTROL.format(nodes=" ".join(NODES))),
                           ("srun", SRUN.format(sim=SIM_DIR,
                                                workdir=cls.fleet.workdir, nodes=NODES))):
            with open(os.path.join(cls.bin, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(cls.bin, name), 0o755)

    def sweep(self, name, **env):
        out = os.path.join(self.tmp, name)
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", SLURM_JOB_ID="77",
                   SLURM_JOB_NODELIST="node[01-04]", FLEETREAP_BIN=BIN,
                   FLEETREAP_REPORT_DIR=out, **env)
        proc = subprocess.run(["bash", SWEEP, "--playbook", playbook_path("default.yaml")],
                              capture_output=True, text=True, timeout=300, env=env)
        return out, proc

    def test_a_node_cannot_speak_for_another(self):
        # node03's task prints a report naming node04 (whose task was lost):
        # it lands in nodes/node03.json all the same, and merge refuses it.
        out, proc = self.sweep("forged", FORGE="node03>node04")
        self.assertEqual(proc.returncode, 65, proc.stderr)
        self.assertIn(os.path.join(out, "nodes", "node03.json") + ": the report of node node03 "
                      "must hold that host alone; it holds node04", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "fleet.json")))

    def test_sweep_merges_every_node(self):
        out, proc = self.sweep("out")
        self.assertEqual(proc.returncode, 3, proc.stderr)  # node02 dirty, node04 lost
        # Only the batch step writes there (umask 077): the nodes' reports
        # came through their own srun output, not a shared folder.
        self.assertEqual(os.stat(out).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.join(out, "nodes")).st_mode & 0o777, 0o700)
        self.assertEqual(sorted(os.listdir(os.path.join(out, "nodes"))),
                         ["node01.json", "node02.json", "node03.json"])
        with open(os.path.join(out, "fleet.json")) as f:
            report = json.load(f)
        self.assertIsNone(report["scope"])   # whole nodes, not the sweep job's scope
        status = {h["name"]: h["status"] for h in report["hosts"]}
        self.assertEqual(status, {"node01": "clean", "node02": "dirty", "node03": "clean"})
        self.assertEqual(report["not_started"], [])
        self.assertEqual([h["name"] for h in report["no_report"]], ["node04"])
        with open(os.path.join(out, "failed.txt")) as f:
            self.assertEqual(f.read(), "node02\nnode04\n")
        truth = self.fleet.ground_truth()
        for node in NODES[:3]:
            self.assertEqual(truth[node]["gpu_processes"], [], node)
        self.assertTrue(os.path.exists(os.path.join(out, "junit.xml")))
        self.assertTrue(os.path.exists(os.path.join(out, "summary.md")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
