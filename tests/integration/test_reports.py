"""Every report of one run over a mixed simulated fleet, checked together:
the folded table and verdict on stdout, the per-host CI lines on stderr, the
JSON (validated against docs/json-schema.json), JUnit, Markdown, the
failed-hosts list and its re-run with --limit @FILE, the per-host command
logs, the exit code, colour rules and `--json -`. Needs root, the built
fleetreap (FLEETREAP_BIN) and the simulator tools (FLEETREAP_SIM_BIN_DIR).
"""

import json
import os
import re
import signal
import subprocess
import unittest
import xml.etree.ElementTree as ET

import jsonschema

from fleet_case import SOURCE, FleetCase, by_name, fleetreap_argv, scratch_fleet
from scenarios import wait_until
from simfleet import HostSpec

ANSI = re.compile(r"\x1b\[")


class ReportsTest(FleetCase):
    PREFIX = "reports-"
    SPECS = [
        HostSpec("gpu01", scenario="clean"),
        HostSpec("gpu02", scenario="clean"),
        HostSpec("gpu03", scenario="clean"),
        HostSpec("gpu04", scenario="orphans"),
        HostSpec("gpu05", scenario="orphans"),
        HostSpec("gpu06", scenario="ghost_memory"),
        HostSpec("gpu07", scenario="unreachable"),
        HostSpec("gpu08", scenario="no_sudo"),
        HostSpec("gpu09", scenario="shm_leftovers"),
    ]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.out = os.path.join(cls.tmp, "out")
        os.makedirs(cls.out)
        cls.files = {name: os.path.join(cls.out, name)
                     for name in ("report.json", "report.xml", "summary.md", "failed.txt")}
        cls.result = cls.fleetreap(
            "--json", cls.files["report.json"], "--junit", cls.files["report.xml"],
            "--summary-md", cls.files["summary.md"], "--failed-hosts", cls.files["failed.txt"],
            "--log-dir", os.path.join(cls.out, "logs"), "--color", "never",
            "--connect-timeout", "3s", "--retries", "0")
        with open(cls.files["report.json"]) as f:
            cls.report = json.load(f)
        cls.hosts = by_name(cls.report)

    @classmethod
    def fleetreap(cls, *args, env=None):
        argv = fleetreap_argv(cls.fleet, *args, identity=False)
        run_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        run_env.update(env or {})
        return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=run_env)

    def read(self, name):
        with open(self.files[name]) as f:
            return f.read()

    def test_the_ghost_memory_hint_runs_as_written(self):
        """The row's next step, `--playbook reset.yaml`, from a folder that
        has no such file: the shipped reset playbook is found and planned."""
        proc = subprocess.run(
            fleetreap_argv(self.fleet, "--limit", "gpu06", "--playbook", "reset.yaml",
                           "--dry-run", "--json", "-", "--quiet", identity=False),
            capture_output=True, text=True, timeout=120, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        self.assertEqual(doc["playbook"], "reset")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "reset.yaml")))

    def test_exit_code_has_both_bits(self):
        self.assertEqual(self.result.returncode, 3, self.result.stderr)
        self.assertEqual(self.report["exit_code"], 3)

    def test_table_folds_identical_outcomes_and_ends_with_the_verdict(self):
        lines = self.result.stdout.splitlines()
        self.assertRegex(lines[-1], r"^NOT READY: 6/9 hosts clean \(3 cleaned\), 1 dirty, "
                                    r"1 failed, 1 unreachable in \d+\.\d s \(exit 3\)$")
        # Indented lines under a row are its hosts' reasons.
        reasons = [line for line in lines[:-1] if line.startswith("    ")]
        self.assertTrue(any("connection refused" in line for line in reasons), reasons)
        self.assertIn("    ghost memory needs a GPU reset: run with --playbook reset.yaml", reasons)
        lines = [line for line in lines if not line.startswith("    ")]
        rows = {line.split()[0]: line for line in lines[:-1]}
        self.assertRegex(rows["gpu[01-03]"], r"^gpu\[01-03\]\s+clean\s+8/8 GPUs 0 MiB$")
        self.assertRegex(rows["gpu[04-05]"], r"^gpu\[04-05\]\s+cleaned\s+8 killed \(TERM 8\)")
        self.assertRegex(rows["gpu06"], r"^gpu06\s+dirty\s+.*GPU 2 ghost memory \(10151 MiB\)")
        self.assertRegex(rows["gpu07"], r"^gpu07\s+unreachable\s+refused")
        self.assertRegex(rows["gpu08"], r"^gpu08\s+failed\s+sudo")
        self.assertRegex(rows["gpu09"], r"^gpu09\s+cleaned\s+.*/dev/shm entr")
        order = [line.split()[1] for line in lines[:-1]]
        # Problems first, the clean hosts last, next to the verdict.
        self.assertEqual(order, sorted(order, key=["dirty", "failed", "unreachable", "cleaned",
                                                   "clean"].index))
        self.assertIsNone(ANSI.search(self.result.stdout))

    def test_ci_log_has_one_line_per_host_and_no_redraws(self):
        host_lines = [l for l in self.result.stderr.splitlines() if re.match(r"^\[\d+/9\] ", l)]
        self.assertEqual(sorted(l.split()[1] for l in host_lines),
                         [s.name for s in self.SPECS], self.result.stderr)
        self.assertNotIn("\r", self.result.stderr)

    def test_json_validates_and_keeps_every_host(self):
        with open(os.path.join(SOURCE, "docs", "json-schema.json")) as f:
            schema = json.load(f)
        errors = [e.message for e in
                  jsonschema.Draft202012Validator(schema).iter_errors(self.report)]
        self.assertEqual(errors, [])
        self.assertEqual(self.report["summary"], {
            "total": 9, "clean": 6, "dirty": 1, "unreachable": 1, "failed": 1, "not_ready": 0,
            "not_started": 0, "no_report": 0, "changed": 3})
        self.assertEqual([h["name"] for h in self.report["hosts"]], [s.name for s in self.SPECS])
        self.assertEqual(self.hosts["gpu01"]["outcome"], "clean")
        cleaned = self.hosts["gpu04"]
        self.assertEqual((cleaned["status"], cleaned["outcome"], cleaned["changed"]),
                         ("clean", "cleaned", True))
        fates = [h["fate"] for h in cleaned["holders"] if h["fate"] != "protected"]
        self.assertEqual(fates, ["terminated"] * 8)
        self.assertTrue(all(g["memory_used_mib"] > 0 for g in cleaned["gpus_before"]))
        self.assertTrue(all(g["memory_used_mib"] == 0 for g in cleaned["gpus_after"]))
        ghost = self.hosts["gpu06"]
        self.assertEqual(ghost["status"], "dirty")
        self.assertEqual(ghost["gpus_after"][2]["state"], "ghost")
        self.assertEqual(ghost["gpus_after"][2]["memory_used_mib"], 10151)
        self.assertEqual((self.hosts["gpu07"]["status"], self.hosts["gpu07"]["error_kind"]),
                         ("unreachable", "refused"))
        self.assertEqual((self.hosts["gpu08"]["status"], self.hosts["gpu08"]["error_kind"]),
                         ("failed", "sudo"))
        self.assertTrue(self.hosts["gpu09"]["shm_removed"])

    def test_junit_fails_dirty_unreachable_and_failed_hosts(self):
        root = ET.parse(self.files["report.xml"]).getroot()
        suite = root.find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors")),
                         ("9", "1", "2"))
        failures = {case.get("name"): (bad.tag, bad.get("type"))
                    for case in suite.findall("testcase")
                    for bad in list(case) if bad.tag in ("failure", "error")}
        self.assertEqual(failures, {"gpu06": ("failure", "dirty"), "gpu07": ("error", "refused"),
                                    "gpu08": ("error", "sudo")})

    def test_markdown_summary(self):
        md = self.read("summary.md")
        self.assertTrue(md.startswith("## fleetreap: NOT READY\n"), md)
        self.assertIn("| `gpu[01-03]` | 3 | clean | 8/8 GPUs 0 MiB |", md)
        attention = md.split("### Needs attention", 1)[1]
        self.assertEqual(re.findall(r"^\| `(gpu\d+)` ", attention, re.M),
                         ["gpu06", "gpu07", "gpu08"])
        # Ghost memory: how much in the details, what frees it in the Error column.
        self.assertRegex(attention, r"\| `gpu06` \| [^|]+ \| dirty \| GPU 2 ghost memory \(10151 "
                                    r"MiB\) \| ghost memory needs a GPU reset: run with --playbook "
                                    r"reset.yaml \|\n")

    def test_failed_hosts_rerun_selects_just_those(self):
        self.assertEqual(self.read("failed.txt"), "gpu06\ngpu07\ngpu08\n")
        rerun = self.fleetreap("--limit", "@" + self.files["failed.txt"], "--json", "-",
                               "--connect-timeout", "3s", "--retries", "0")
        self.assertEqual(rerun.returncode, 3, rerun.stderr)
        doc = json.loads(rerun.stdout)  # the table went to stderr
        self.assertEqual([h["name"] for h in doc["hosts"]], ["gpu06", "gpu07", "gpu08"])
        self.assertIn("NOT READY: 0/3 hosts clean", rerun.stderr)

    def test_log_dir_has_every_command(self):
        logs = os.path.join(self.out, "logs")
        self.assertEqual(sorted(os.listdir(logs)), sorted(s.name + ".log" for s in self.SPECS))
        with open(os.path.join(logs, "gpu04.log"), "rb") as f:
            raw = f.read()
        # Text: the host's NUL-separated records show each NUL as "\0" and a line break.
        self.assertNotIn(b"\0", raw)
        text = raw.decode(errors="replace")
        self.assertRegex(text, r"\n  \| scan 1\\0\n")
        self.assertRegex(text, r"connected \(\d+ ms\)")
        # Each command named by its step and what it is.
        self.assertRegex(text, r"run inspect: [^(\n]*scan \(timeout \d+ ms\):\n  \$ ")
        self.assertRegex(text, r"run term: [^(\n]*signal[^(\n]* \(timeout \d+ ms\):\n  \$ ")
        self.assertRegex(text, r"exited 0 \(\d+ ms\)")
        with open(os.path.join(logs, "gpu07.log")) as f:
            self.assertIn("connect failed: refused", f.read())

    def test_dry_run_exits_0_unless_a_host_could_not_be_inspected(self):
        dirty = self.fleetreap("--dry-run", "--limit", "gpu01,gpu06", "--color", "never")
        self.assertEqual(dirty.returncode, 0, dirty.stderr)
        self.assertRegex(dirty.stdout, r"gpu06\s+dirty\s+GPU 2 ghost memory \(10151 MiB\)\n"
                                       r"    ghost memory needs a GPU reset: run with --playbook "
                                       r"reset\.yaml\n")
        self.assertRegex(dirty.stdout.splitlines()[-1],
                         r"^DRY RUN: 1/2 hosts clean, 1 dirty in .*nothing changed \(exit 0\)$")
        unreachable = self.fleetreap("--dry-run", "--limit", "gpu06,gpu07", "--retries", "0")
        self.assertEqual(unreachable.returncode, 2, unreachable.stderr)

    def test_colour_only_when_asked_and_the_flag_wins_over_no_color(self):
        always = self.fleetreap("--limit", "gpu01", "--color", "always")
        self.assertEqual(always.returncode, 0, always.stderr)
        self.assertIsNotNone(ANSI.search(always.stdout))
        # no-color.org: an explicit flag wins over NO_COLOR.
        no_color = self.fleetreap("--limit", "gpu01", "--color", "always",
                                  env={"NO_COLOR": "1"})
        self.assertIsNotNone(ANSI.search(no_color.stdout), no_color.stdout)
        never = self.fleetreap("--limit", "gpu01", "--color", "never", env={"NO_COLOR": ""})
        self.assertIsNone(ANSI.search(never.stdout + never.stderr))
        auto = self.fleetreap("--limit", "gpu01")
        self.assertIsNone(ANSI.search(auto.stdout + auto.stderr))  # pipes, not a terminal
        self.assertRegex(auto.stdout, r"READY: 1/1 host clean in \d+\.\d s \(exit 0\)\n$")


class InterruptTest(unittest.TestCase):
    """Ctrl-C: no new host starts, the one in flight finishes, every report
    is still written and names the hosts never started."""

    def test_ctrl_c_still_writes_every_report(self):
        self.interrupt_writes_every_report(signal.SIGINT)

    def test_hangup_stops_like_ctrl_c(self):
        """The operator's SSH session drops (SIGHUP): the run stops at a step
        boundary and writes every report, as for Ctrl-C."""
        self.interrupt_writes_every_report(signal.SIGHUP)

    def interrupt_writes_every_report(self, signal_number):
        specs = [HostSpec("gpu01", scenario="clean"),
                 HostSpec("gpu02", scenario="no_banner"),  # in flight for 3 s
                 HostSpec("gpu03", scenario="clean"),
                 HostSpec("gpu04", scenario="clean")]
        with scratch_fleet("reports-int-", specs) as (tmp, fleet):
            report, failed = os.path.join(tmp, "r.json"), os.path.join(tmp, "failed.txt")
            logs = os.path.join(tmp, "logs")
            env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
            proc = subprocess.Popen(
                fleetreap_argv(fleet, "--forks", "1", "--connect-timeout", "3s", "--retries", "0",
                               "--json", report, "--failed-hosts", failed, "--log-dir", logs,
                               identity=False),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            first = proc.stderr.readline()
            self.assertTrue(first.startswith("[1/4] gpu01 clean"), first)

            def gpu02_connecting():   # its log starts before the connect
                try:
                    with open(os.path.join(logs, "gpu02.log")) as f:
                        return "connect " in f.read()
                except OSError:
                    return False
            self.assertTrue(wait_until(gpu02_connecting, timeout=60))
            proc.send_signal(signal_number)
            stdout, stderr = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 2, stderr)
            self.assertIn("interrupted: starting no new hosts, waiting for 1 in flight", stderr)
            self.assertRegex(stdout, r"gpu\[03-04\]\s+not started\s+interrupted\n")
            self.assertRegex(stdout.splitlines()[-1], r"^INTERRUPTED: 1/4 hosts clean, "
                                                       r"1 unreachable, 2 not started in ")
            with open(report) as f:
                doc = json.load(f)
            self.assertTrue(doc["interrupted"])
            self.assertEqual([h["name"] for h in doc["hosts"]], ["gpu01", "gpu02"])
            self.assertEqual(doc["not_started"], ["gpu03", "gpu04"])
            with open(failed) as f:
                self.assertEqual(f.read(), "gpu02\ngpu03\ngpu04\n")


if __name__ == "__main__":
    unittest.main()
