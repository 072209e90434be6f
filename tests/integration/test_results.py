"""Reading the result end to end on a simulated fleet: nothing is
lost (a bad output path exits 64 before any host is touched; a controller
killed with SIGKILL mid-run leaves a journal of every finished host and the
hosts in flight, which `fleetreap merge` turns into the normal reports;
report and log files are 0600; command lines are redacted unless
--no-redact), and the terminal says why (each host that is not clean gets
its reason, -v logs each step, -vv each command and reply).
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import re
import signal
import stat
import subprocess
import threading
import unittest

import scenarios
from fleet_case import (BIN, FleetCase, fleetreap_argv, live_processes, playbook_path,
                        scratch_fleet)
from scenarios import wait_until
from simfleet import HostSpec

SECRET = "sk-live-0123456789"


@scenarios.scenario
def results_secret_argv(h):
    """vLLM workers started with an API key and an HF token on their command line."""
    h.daemon("nvidia-persistenced")
    h.workload(mib=96844, detach=True, worker_comm="python3",
               worker_argv=("python3", "-m", "vllm.entrypoints.openai.api_server",
                            "--api-key", SECRET, "HF_TOKEN=hf_" + SECRET,
                            "--tokenizer", "meta/llama"))


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


class ResultsTest(FleetCase):
    """Dry runs only: the fleet stays as it came up."""
    PREFIX = "results-"
    SPECS = [HostSpec("gpu01", scenario="results_secret_argv"),
             HostSpec("gpu02", scenario="unreachable"),
             HostSpec("gpu03", scenario="host_key_changed"),
             HostSpec("gpu04", scenario="clean"),
             HostSpec("gpu05", scenario="ghost_memory")]

    def fleetreap(self, *args):
        argv = fleetreap_argv(self.fleet, "--playbook", playbook_path("default.yaml"),
                              "--dry-run", "--connect-timeout", "3s", "--retries", "0",
                              "--color", "never", *args)
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)

    def test_reports_and_logs_are_private_and_redacted(self):
        out = os.path.join(self.tmp, "private")
        os.makedirs(out)
        report, logs = os.path.join(out, "r.json"), os.path.join(out, "logs")
        journal = os.path.join(out, "run.journal")
        proc = self.fleetreap("--json", report, "--junit", os.path.join(out, "r.xml"),
                              "--log-dir", logs, "--journal", journal)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertFalse(os.path.exists(report + ".journal"))   # only the default one goes
        for path in (report, journal, os.path.join(out, "r.xml")):
            self.assertEqual(mode(path), 0o600, path)
        self.assertEqual(mode(logs), 0o700)
        for name in os.listdir(logs):
            self.assertEqual(mode(os.path.join(logs, name)), 0o600, name)
        with open(report) as f:
            doc = json.load(f)
        gpu01 = next(h for h in doc["hosts"] if h["name"] == "gpu01")
        workers = [h for h in gpu01["holders"] if "--api-key" in h["cmdline"]]
        self.assertEqual(len(workers), 8, gpu01["holders"])
        for holder in workers:
            self.assertIn("--api-key <redacted> HF_TOKEN=<redacted> --tokenizer meta/llama",
                          holder["cmdline"])
        for path in (report, journal, os.path.join(out, "r.xml")):
            with open(path) as f:
                self.assertNotIn(SECRET, f.read(), path)

    def test_no_redact_keeps_the_command_line(self):
        proc = self.fleetreap("--limit", "gpu01", "--json", "-", "--no-redact", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("--api-key " + SECRET, proc.stdout)

    def test_every_host_that_is_not_clean_says_why(self):
        proc = self.fleetreap()
        lines = proc.stdout.splitlines()
        refused = [i for i, line in enumerate(lines) if re.match(r"gpu02\s+unreachable\s+refused", line)]
        self.assertEqual(len(refused), 1, proc.stdout)
        self.assertRegex(lines[refused[0] + 1], r"^    (gpu02: )?connection refused by 127\.0\.\d+\.\d+", proc.stdout)
        key = [i for i, line in enumerate(lines) if re.match(r"gpu03\s+unreachable\s+host_key", line)]
        self.assertEqual(len(key), 1, proc.stdout)
        # The reason wraps at the table's width: its lines after the first are indented 6.
        reason = lines[key[0] + 1]
        for line in lines[key[0] + 2:]:
            if not line.startswith("      "):
                break
            reason += " " + line.strip()
        self.assertRegex(reason, r"^    host key for gpu03 .* has CHANGED: .*refusing to connect",
                         proc.stdout)
        # The CI progress line carries it too.
        self.assertRegex(proc.stderr, r"\] gpu02 unreachable [0-9.]+ s: refused; connection refused by ")

    def test_dry_run_prints_the_plan_per_host(self):
        proc = self.fleetreap("--limit", "gpu01,gpu04")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        # The total, wrapped at 100 columns off a terminal.
        self.assertRegex("\n".join(lines[:2]), r"^plan: would signal 8 processes on 1 host, remove \d+ "
                         r"/dev/shm entr(y|ies), stop 0 units\s+\(-v lists", proc.stdout)
        self.assertTrue(all(len(line) <= 100 for line in lines[:-1]), proc.stdout)
        self.assertIn("gpu01: would signal 8", lines)
        terms = [re.match(r"^    TERM +x(\d+) +python3 +(GPUs? [0-9,-]+|-) +root\b", line)
                 for line in lines if line.startswith("    TERM ")]
        self.assertTrue(all(terms), proc.stdout)
        self.assertEqual(sum(int(m.group(1)) for m in terms), 8, proc.stdout)
        self.assertNotIn(" pid ", proc.stdout)   # PIDs only under -v and in the JSON
        # argv[0], not the kernel's 15-character comm (nvidia-persiste).
        # Its owner and reason on the next line where they do not fit.
        self.assertRegex(proc.stdout, r"\n    leave +x1 +nvidia-persistenced [^\n]*"
                                      r"(\n        [^\n]*)?protected: ")
        self.assertRegex(proc.stdout, r"gpu04: nothing to signal\n")
        self.assertRegex(lines[-1], r"^DRY RUN: ")
        verbose = self.fleetreap("--limit", "gpu01", "-v")
        self.assertRegex(verbose.stdout, r"\n      gpu01: TERM \d+[-,0-9]*; leave \d+")

    def test_the_scope_is_honoured_in_the_summary(self):
        proc = self.fleetreap("--limit", "gpu05", "--gpus", "4-7")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"gpu05\s+clean\s+4/4 GPUs 0 MiB, 4 GPUs out of scope\n")

    def test_verbose_logs_each_step_and_very_verbose_each_reply(self):
        proc = self.fleetreap("--limit", "gpu01", "-v")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stderr, r"fleetreap: info: gpu01: started: connect to ")
        self.assertRegex(proc.stderr, r"fleetreap: info: gpu01: inspect: .*9 holders \(8 to act on, "
                                      r"1 left alone\); GPUs 8 busy \([0-9.]+ s\)")
        self.assertRegex(proc.stderr, r"fleetreap: info: gpu01: finished: would clean: .*"
                                      r"\([0-9.]+ s: connect [0-9.]+ s, inspect [0-9.]+ s")
        self.assertRegex(proc.stdout, r"where the time went \(median / slowest host, per step\):\n"
                                      r"    connect +[0-9.]+ s / [0-9.]+ s gpu01 \(1 host\)\n")
        self.assertNotIn("reply:", proc.stderr)
        proc = self.fleetreap("--limit", "gpu01", "-vv")
        self.assertRegex(proc.stderr, r"fleetreap: debug: gpu01: run inspect: [^(]*scan \(timeout \d+ ms\): ")
        self.assertRegex(proc.stderr, r"fleetreap: debug: gpu01: reply: exit 0 \(\d+ ms\), stdout \(\d+ bytes\)")


class NothingIsLostTest(unittest.TestCase):

    def test_a_bad_output_path_exits_64_before_any_host_is_touched(self):
        with scratch_fleet("results-path-", [HostSpec("gpu01", scenario="orphans")]) as (tmp, fleet):
            before = live_processes(fleet)
            for args, error in (
                    (["--json", "/nonexistent/dir/r.json"],
                     "fleetreap: --json /nonexistent/dir/r.json: cannot write there: No such file or directory\n"),
                    (["--junit", tmp], f"fleetreap: --junit {tmp}: is a directory\n"),
                    (["--summary-md", os.path.join(tmp, "x"), "--json", os.path.join(tmp, "x")],
                     f"fleetreap: --summary-md {tmp}/x and --json {tmp}/x name the same file\n")):
                proc = subprocess.run(fleetreap_argv(fleet, *args), capture_output=True, text=True,
                                      timeout=120)
                self.assertEqual((proc.returncode, proc.stderr, proc.stdout), (64, error, ""))
            self.assertEqual(live_processes(fleet), before)

    def test_sigkilled_controller_leaves_a_journal_that_merge_reads(self):
        specs = [HostSpec("gpu01", scenario="clean"),
                 HostSpec("gpu02", scenario="ignore_term"),   # 10 s TERM grace in flight
                 HostSpec("gpu03", scenario="clean")]
        with scratch_fleet("results-kill-", specs) as (tmp, fleet):
            report = os.path.join(tmp, "r.json")
            journal = report + ".journal"
            proc = subprocess.Popen(
                fleetreap_argv(fleet, "--playbook", playbook_path("default.yaml"), "--forks", "2",
                               "--json", report, "--quiet"),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

            def events():
                try:
                    with open(journal) as f:
                        return [json.loads(line) for line in f if line.endswith("\n")]
                except (OSError, ValueError):
                    return []

            def finished(name):
                return any(e.get("event") == "finished" and e["host"]["name"] == name
                           for e in events())
            self.assertTrue(wait_until(lambda: finished("gpu01") and finished("gpu03"), timeout=60),
                            events())
            self.assertFalse(finished("gpu02"))
            proc.send_signal(signal.SIGKILL)   # the process this test started, by PID
            proc.communicate(timeout=30)
            self.assertFalse(os.path.exists(report))
            self.assertEqual(mode(journal), 0o600)
            lines = events()
            self.assertEqual(lines[0]["selected"], ["gpu01", "gpu02", "gpu03"])
            self.assertIn({"event": "started", "host": "gpu02"},
                          [{k: e[k] for k in ("event", "host")} for e in lines[1:]
                           if e.get("event") == "started"])

            merged = subprocess.run([BIN, "merge", journal, "--json", "-", "--color", "never"],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(merged.returncode, 2, merged.stderr)
            doc = json.loads(merged.stdout)
            self.assertEqual([h["name"] for h in doc["hosts"]], ["gpu01", "gpu03"])
            self.assertEqual(doc["no_report"],
                             [{"name": "gpu02", "why": "in flight when the journal ended"}])
            self.assertTrue(doc["interrupted"])
            self.assertRegex(merged.stderr, r"gpu02\s+no report\s+in flight when the journal ended\n")

    def test_journal_dash_streams_each_host_on_stdout_as_it_ends(self):
        specs = [HostSpec("gpu01", scenario="clean"),
                 HostSpec("gpu02", scenario="ignore_term"),   # 10 s TERM grace in flight
                 HostSpec("gpu03", scenario="clean")]
        with scratch_fleet("results-stream-", specs) as (tmp, fleet):
            report = os.path.join(tmp, "r.xml")
            errors = open(os.path.join(tmp, "stderr"), "w+")
            self.addCleanup(errors.close)
            proc = subprocess.Popen(
                fleetreap_argv(fleet, "--playbook", playbook_path("default.yaml"), "--forks", "2",
                               "--journal", "-", "--junit", report, "--color", "never"),
                stdout=subprocess.PIPE, stderr=errors, text=True)
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")))
            reader.start()

            def finished():
                return [json.loads(line)["host"]["name"] for line in list(lines)
                        if '"event":"finished"' in line]
            try:
                self.assertTrue(wait_until(lambda: "gpu01" in finished() and "gpu03" in finished(),
                                           timeout=60), lines)
                # Read while the run goes on: gpu02 is still in its TERM grace.
                self.assertIsNone(proc.poll())
                self.assertNotIn("gpu02", finished())
                self.assertFalse(os.path.exists(report))
                proc.wait(timeout=120)
            finally:
                if proc.poll() is None:
                    proc.kill()   # the process this test started, by PID
                reader.join(timeout=30)
            errors.seek(0)
            stderr = errors.read()
            self.assertEqual(proc.returncode, 0, stderr)
            events = [json.loads(line) for line in lines]
            self.assertEqual(events[0]["selected"], ["gpu01", "gpu02", "gpu03"])
            self.assertEqual(events[-1]["event"], "ended")
            self.assertEqual(sorted(finished()), ["gpu01", "gpu02", "gpu03"])
            self.assertRegex(stderr, r"READY: 3/3 hosts clean")   # the table moved to stderr
            with open(report) as f:
                self.assertEqual(f.read().count("<testcase "), 3)


if __name__ == "__main__":
    unittest.main()
