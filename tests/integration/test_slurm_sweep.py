"""contrib/slurm/fleetreap-sweep.sbatch end to end (issue 14): the batch
script runs `fleetreap --local` on every node of its allocation through
srun and merges the reports. No Slurm runs here: stand-in `scontrol show
hostnames` and `srun` first on PATH; the srun runs its task inside each
simulated node (Fleet.exec, the node's own namespaces, with a job's
SLURM_* environment; never on this machine) and, like the real one, loses
the task of a node that is down. The merged report must agree with the
fleet's ground truth, and the lost node must count as without a report.
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
import shlex, sys
sys.path.insert(0, {sim!r})
from simfleet import Fleet
args = sys.argv[1:]
while args and args[0].startswith("-"):
    args.pop(0)
fleet = Fleet.attach({workdir!r})
rc = 0
for node in {nodes!r}:
    if node not in fleet.hosts:
        print(f"srun: error: {{node}}: task 0: Communication connection failure",
              file=sys.stderr)
        rc = 1
        continue
    env = "SLURM_JOB_ID=77 SLURM_JOB_GPUS=0 SLURMD_NODENAME=" + node
    proc = fleet.exec(node, f"export {{env}}; " + shlex.join(args), timeout=120)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
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

    def test_sweep_merges_every_node(self):
        out = os.path.join(self.tmp, "out")
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", SLURM_JOB_ID="77",
                   SLURM_JOB_NODELIST="node[01-04]", FLEETREAP_BIN=BIN,
                   FLEETREAP_REPORT_DIR=out)
        proc = subprocess.run(["bash", SWEEP, "--playbook", playbook_path("default.yaml")],
                              capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(proc.returncode, 3, proc.stderr)  # node02 dirty, node04 lost
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
