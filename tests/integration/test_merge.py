"""fleetreap merge end to end: each simulated node runs
`fleetreap --local --json` inside its own namespaces (as srun or a Slurm
epilog would run it; never against this machine's process table), and
`fleetreap merge` joins the per-node reports into one fleet report whose
table rows, statuses, failed-hosts file and exit code are those of one SSH
run over the same fleet, and agree with the fleet's ground truth. Bad input
exits 65 naming the file.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import subprocess
import unittest

from fleet_case import BIN, FleetCase, fleetreap_argv, local_command, playbook_path
from simfleet import HostSpec

PLAYBOOK = playbook_path("default.yaml")
NODES = ("node01", "node02", "node03")


def rows(table):
    """The table without its verdict line's timing ("in 1.2 s")."""
    lines = table.strip().splitlines()
    return lines[:-1], lines[-1].split(" in ")[0]


class MergeTest(FleetCase):
    PREFIX = "mergetest-"
    SPECS = [HostSpec("node01", scenario="vllm_incident"),
             HostSpec("node02", scenario="ghost_memory"),
             HostSpec("node03", scenario="clean")]

    def local_reports(self, *extra):
        paths = []
        for node in NODES:
            proc = self.fleet.exec(node, local_command("--playbook", PLAYBOOK, *extra),
                                   timeout=120)
            self.assertIn("{", proc.stdout, proc.stderr[-2000:])
            # A dry run's reports go beside the real ones, each named after
            # its node: a --local report named after a host is that host's.
            folder = os.path.join(self.tmp, "dry") if extra else self.tmp
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"{node}.json")
            with open(path, "w") as f:
                f.write(proc.stdout[proc.stdout.index("{"):])
            paths.append(path)
        return paths

    def merge(self, *args):
        return subprocess.run([BIN, "merge", "--color", "never", *args],
                              capture_output=True, text=True, timeout=60)

    def test_1_dry_run_merge_reads_like_the_ssh_run(self):
        ssh = subprocess.run(fleetreap_argv(self.fleet, "--playbook", PLAYBOOK, "--dry-run",
                                            "--quiet", "--color", "never"),
                             capture_output=True, text=True, timeout=300)
        merged = self.merge(*self.local_reports("--dry-run"))
        self.assertEqual(merged.returncode, ssh.returncode, merged.stderr)
        self.assertEqual(rows(merged.stdout), rows(ssh.stdout))

    def test_2_real_runs_merge_into_one_report(self):
        paths = self.local_reports()
        failed = os.path.join(self.tmp, "failed.txt")
        junit = os.path.join(self.tmp, "junit.xml")
        summary = os.path.join(self.tmp, "summary.md")
        proc = self.merge("--json", "-", "--failed-hosts", failed, "--junit", junit,
                          "--summary-md", summary, *paths)
        report = json.loads(proc.stdout)
        self.assertEqual(proc.returncode, 1, proc.stderr)  # node02: ghost memory
        self.assertEqual(report["exit_code"], 1)
        self.assertEqual([h["name"] for h in report["hosts"]], list(NODES))
        status = {h["name"]: h["status"] for h in report["hosts"]}
        self.assertEqual(status, {"node01": "clean", "node02": "dirty", "node03": "clean"})
        # The truth: every node is as clean as cleaning can make it; node02's
        # GPU 2 keeps its leaked memory, which only a reset frees.
        truth = self.fleet.ground_truth()
        for node in NODES:
            self.assertTrue(truth[node]["clean"], node)
            self.assertEqual(truth[node]["gpu_processes"], [], node)
        leaked = {node: [g["index"] for g in truth[node]["gpus"] if g["memory_used_mib"]]
                  for node in NODES}
        self.assertEqual(leaked, {"node01": [], "node02": [2], "node03": []})
        self.assertEqual(report["summary"]["changed"], 1)
        with open(failed) as f:
            self.assertEqual(f.read(), "node02\n")
        with open(junit) as f:
            self.assertIn('tests="3" failures="1"', f.read())
        with open(summary) as f:
            self.assertIn("node02", f.read())
        self.assertIn("dirty", proc.stderr)  # the table goes to stderr with --json -

    def test_3_bad_input_exits_65_naming_the_file(self):
        paths = [os.path.join(self.tmp, f"{node}.json") for node in NODES]
        bad = os.path.join(self.tmp, "table.json")
        with open(bad, "w") as f:
            f.write("node04 clean\n")
        dry = os.path.join(self.tmp, "dry", "node02.json")
        cases = [([paths[0], bad], f"fleetreap: {bad}: not JSON (parse error at byte 2)"),
                 ([paths[0], paths[0]],
                  f"fleetreap: {paths[0]}: host node01 is also in {paths[0]}"),
                 ([paths[0], dry],
                  f"fleetreap: {dry}: a dry run cannot be merged with a real run ({dry} is "
                  f"a dry run, {paths[0]} is not)")]
        for args, error in cases:
            proc = self.merge(*args)
            self.assertEqual(proc.returncode, 65, proc.stderr)
            self.assertEqual(proc.stderr.strip(), error)
            self.assertEqual(proc.stdout, "")
        self.assertEqual(self.merge().returncode, 64)

    def test_4_a_node_without_a_report_says_so(self):
        paths = [os.path.join(self.tmp, f"{node}.json") for node in NODES]
        expect = os.path.join(self.tmp, "nodes.txt")
        with open(expect, "w") as f:
            f.write("node01\nnode02\nnode03\nnode04\n")
        failed = os.path.join(self.tmp, "failed-expect.txt")
        proc = self.merge("--expect", expect, "--failed-hosts", failed, "--json", "-", *paths)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        doc = json.loads(proc.stdout)
        self.assertEqual(doc["not_started"], [])
        self.assertEqual(doc["no_report"],
                         [{"name": "node04", "why": "no report among the merged files"}])
        self.assertRegex(proc.stderr, r"node04\s+no report\s+no report among the merged files\n")
        with open(failed) as f:
            self.assertEqual(f.read(), "node02\nnode04\n")

    def test_5_a_node_report_cannot_speak_for_another_node(self):
        # node03 (root on its own host) adds node04, whose report never
        # came, as clean: the review's recipe. Named after node03, the file
        # must hold node03 alone.
        forged = os.path.join(self.tmp, "forged")
        os.makedirs(forged, exist_ok=True)
        paths = []
        for node in NODES:
            with open(os.path.join(self.tmp, f"{node}.json")) as f:
                doc = json.load(f)
            if node == "node03":
                other = json.loads(json.dumps(doc["hosts"][0]))
                other["name"] = "node04"
                doc["hosts"].append(other)
            paths.append(os.path.join(forged, f"{node}.json"))
            with open(paths[-1], "w") as f:
                json.dump(doc, f)
        expect = os.path.join(self.tmp, "nodes.txt")
        with open(expect, "w") as f:
            f.write("node01\nnode02\nnode03\nnode04\n")
        proc = self.merge("--expect", expect, *paths)
        self.assertEqual(proc.returncode, 65, proc.stdout + proc.stderr)
        self.assertEqual(proc.stderr.strip(),
                         f"fleetreap: {paths[2]}: the report of node node03 must hold that host "
                         "alone; it holds node03, node04")

    def test_6_without_expect_a_local_report_holds_the_host_it_is_named_after(self):
        # No --expect: each --local report still speaks for its own node only,
        # and a merged report (named after none of its hosts) merges again.
        with open(os.path.join(self.tmp, "node03.json")) as f:
            doc = json.load(f)
        renamed = os.path.join(self.tmp, "renamed")
        os.makedirs(renamed, exist_ok=True)
        wrong = os.path.join(renamed, "node04.json")
        with open(wrong, "w") as f:
            json.dump(doc, f)
        paths = [os.path.join(self.tmp, f"{node}.json") for node in NODES[:2]]
        proc = self.merge(*paths, wrong)
        self.assertEqual(proc.returncode, 65, proc.stdout + proc.stderr)
        self.assertEqual(proc.stderr.strip(),
                         f"fleetreap: {wrong}: the report of node node04 must hold that host "
                         "alone; it holds node03")
        self.assertEqual(proc.stdout, "")
        fleet = os.path.join(self.tmp, "fleet.json")
        proc = self.merge("--json", fleet, *paths)
        self.assertEqual(proc.returncode, 1, proc.stderr)  # node02: ghost memory
        proc = self.merge("--json", "-", fleet, os.path.join(self.tmp, "node03.json"))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual([h["name"] for h in json.loads(proc.stdout)["hosts"]], list(NODES))


if __name__ == "__main__":
    unittest.main(verbosity=2)
