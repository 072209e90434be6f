"""contrib/slurm/fleetreap-drain: after a fleet run, drain in
Slurm the nodes fleetreap found not clean, with --drain-reasons' one-line
reason, and resume only the nodes whose reason is fleetreap's; a node
drained or down for another reason is never touched. No Slurm runs here:
stand-in `sinfo` and `scontrol` first on PATH keep each node's state and
reason in files and record every update. The reasons file comes from a real
fleetreap merge of per-node reports.
"""

import json
import os
import subprocess
import tempfile
import unittest

from fleet_case import BIN, SOURCE

DRAIN = os.path.join(SOURCE, "contrib", "slurm", "fleetreap-drain")

SINFO = """#!/bin/sh
[ "$1" = --noheader ] || exit 2
node=${{2#--nodes=}}
case "$3" in
  --format=%E) cat "{state}/$node.reason" 2>/dev/null || echo none ;;
  --format=%T) cat "{state}/$node.state" 2>/dev/null || echo idle ;;
  *) exit 2 ;;
esac
"""

SCONTROL = """#!/bin/sh
echo "$@" >> "{state}/scontrol.log"
[ "$1" = update ] || exit 2
node=${{2#NodeName=}}
case "$3" in
  State=DRAIN) echo drained > "{state}/$node.state"; echo "${{4#Reason=}}" > "{state}/$node.reason" ;;
  State=RESUME) echo idle > "{state}/$node.state"; rm -f "{state}/$node.reason" ;;
  *) exit 2 ;;
esac
"""


def node_report(name, dirty):
    gpu = {"index": 5, "state": "busy" if dirty else "clean", "memory_used_mib": 70000}
    holder = {"pid": 4242, "name": "VLLM::Worker_TP5", "fate": "unkillable", "state": "D",
              "gpus": [5]}
    return {"schema_version": 1, "start_time": "2026-12-01T12:00:00.000Z",
            "playbook": "default", "dry_run": False,
            "hosts": [{"name": name, "status": "dirty" if dirty else "clean",
                       "gpus_after": [gpu], "holders": [holder] if dirty else []}]}


class SlurmDrainTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="slurmdraintest-")
        self.dir = self.tmp.name
        self.state = os.path.join(self.dir, "state")
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.state)
        os.mkdir(self.bin)
        for name, text in (("sinfo", SINFO), ("scontrol", SCONTROL)):
            with open(os.path.join(self.bin, name), "w") as f:
                f.write(text.format(state=self.state))
            os.chmod(os.path.join(self.bin, name), 0o755)
        # gpu01 dirty; gpu02 clean, drained by fleetreap before; gpu03 clean,
        # drained by an admin; gpu04 dirty but down for another reason;
        # gpu05 clean and idle.
        self.set_node("gpu02", "drained", "fleetreap: GPU 1 ghost memory (512 MiB, no process "
                                          "holds it)")
        self.set_node("gpu03", "drained", "bad DIMM, ticket 4711")
        self.set_node("gpu04", "down", "Not responding")
        paths = []
        for name in ("gpu01", "gpu02", "gpu03", "gpu04", "gpu05"):
            paths.append(os.path.join(self.dir, f"{name}.json"))
            with open(paths[-1], "w") as f:
                json.dump(node_report(name, name in ("gpu01", "gpu04")), f)
        self.reasons = os.path.join(self.dir, "reasons.txt")
        proc = subprocess.run([BIN, "merge", "--drain-reasons", self.reasons, "--color",
                               "never", *paths], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 1, proc.stderr)

    def tearDown(self):
        self.tmp.cleanup()

    def set_node(self, node, state, reason):
        with open(os.path.join(self.state, f"{node}.state"), "w") as f:
            f.write(state + "\n")
        with open(os.path.join(self.state, f"{node}.reason"), "w") as f:
            f.write(reason + "\n")

    def node(self, node):
        def read(kind, default):
            try:
                with open(os.path.join(self.state, f"{node}.{kind}")) as f:
                    return f.read().strip()
            except FileNotFoundError:
                return default
        return read("state", "idle"), read("reason", "none")

    def drain(self, *extra):
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}")
        return subprocess.run([DRAIN, *extra, self.reasons, "gpu01", "gpu02", "gpu03",
                               "gpu04", "gpu05"], capture_output=True, text=True,
                              timeout=60, env=env)

    def test_reasons_file(self):
        with open(self.reasons) as f:
            self.assertEqual(f.read(),
                             "gpu01 fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5), "
                             "unkillable in state D\n"
                             "gpu04 fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5), "
                             "unkillable in state D\n")

    def test_drains_ours_resumes_ours_leaves_others(self):
        proc = self.drain()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reason = "fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5), unkillable in state D"
        self.assertEqual(proc.stdout.splitlines(), [
            f"gpu01: drain: {reason}",
            "gpu02: resume (was drained by fleetreap)",
            "gpu04: left alone: down for another reason: Not responding"])
        self.assertEqual(self.node("gpu01"), ("drained", reason))
        self.assertEqual(self.node("gpu02"), ("idle", "none"))
        self.assertEqual(self.node("gpu03"), ("drained", "bad DIMM, ticket 4711"))
        self.assertEqual(self.node("gpu04"), ("down", "Not responding"))
        self.assertEqual(self.node("gpu05"), ("idle", "none"))
        with open(os.path.join(self.state, "scontrol.log")) as f:
            self.assertEqual(f.read().splitlines(), [
                f"update NodeName=gpu01 State=DRAIN Reason={reason}",
                "update NodeName=gpu02 State=RESUME"])
        # Run again: nothing left to do.
        again = self.drain()
        self.assertEqual(again.stdout.splitlines(),
                         ["gpu04: left alone: down for another reason: Not responding"])

    def test_dry_run_changes_nothing(self):
        proc = self.drain("--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(proc.stdout.splitlines()), 3)
        self.assertFalse(os.path.exists(os.path.join(self.state, "scontrol.log")))
        self.assertEqual(self.node("gpu01"), ("idle", "none"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
