#!/usr/bin/env python3
"""--metrics FILE is Prometheus text exposition format as node_exporter's
textfile collector reads it, checked with the format's
reference parser (Debian's python3-prometheus-client): the golden report's
run rendered through `fleetreap merge --metrics`, every family a gauge with
HELP, no sample timestamps, the values the report says; the file is 0644
and read back as an unprivileged user (uid 65534, as node_exporter runs in
Debian's package and kube-prometheus), as the textfile collector does.
Needs no simulated fleet.
"""
import json
import os
import stat
import shutil
import subprocess
import sys
import tempfile
import unittest

from prometheus_client.parser import text_string_to_metric_families

from fleet_case import BIN, SOURCE

GOLDEN = os.path.join(SOURCE, "tests", "testdata", "golden")


class MetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="fleetreap-metrics-")
        os.chmod(cls.dir, 0o755)  # a textfile directory, as node_exporter's package makes it
        cls.path = os.path.join(cls.dir, "fleetreap.prom")
        proc = subprocess.run([BIN, "merge", os.path.join(GOLDEN, "report.json"),
                               "--metrics", cls.path, "--color", "never"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 3, proc.stderr
        with open(cls.path) as f:
            cls.text = f.read()
        cls.families = {f.name: f for f in text_string_to_metric_families(cls.text)}
        with open(os.path.join(GOLDEN, "report.json")) as f:
            cls.report = json.load(f)

    def samples(self, name):
        return self.families[name].samples

    def test_textfile_conventions(self):
        # Host names and counts only, read by node_exporter as its own user.
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o644)
        self.assertEqual(os.listdir(self.dir), ["fleetreap.prom"])  # renamed into place
        self.assertTrue(self.text.endswith("\n"))
        for name, family in self.families.items():
            self.assertTrue(name.startswith("fleetreap_"), name)
            self.assertEqual(family.type, "gauge", name)
            self.assertTrue(family.documentation, name)
            for sample in family.samples:
                self.assertIsNone(sample.timestamp, sample)   # the collector refuses them

    def test_an_unprivileged_reader_parses_it(self):
        reader = ("import sys; from prometheus_client.parser import "
                  "text_string_to_metric_families as parse; "
                  "print(sum(len(f.samples) for f in parse(open(sys.argv[1]).read())))")
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               sys.executable, "-c", reader, self.path],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(int(proc.stdout),
                         sum(len(f.samples) for f in self.families.values()))

    def test_other_reports_stay_private(self):
        out = tempfile.mkdtemp(prefix="fleetreap-private-")
        self.addCleanup(shutil.rmtree, out, True)
        paths = {flag: os.path.join(out, name) for flag, name in
                 [("--json", "r.json"), ("--junit", "r.xml"), ("--html", "r.html"),
                  ("--summary-md", "r.md"), ("--metrics", "r.prom")]}
        argv = [BIN, "merge", os.path.join(GOLDEN, "report.json"), "--color", "never"]
        for flag, path in paths.items():
            argv += [flag, path]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        for flag, path in paths.items():
            want = 0o644 if flag == "--metrics" else 0o600
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), want, flag)

    def test_every_outcome_is_a_snake_case_zero_or_one(self):
        by_host = {}
        for s in self.samples("fleetreap_host_outcome"):
            by_host.setdefault(s.labels["host"], {})[s.labels["outcome"]] = s.value
        outcomes = {"clean", "cleaned", "would_clean", "dirty", "not_ready", "failed",
                    "unreachable", "not_started", "no_report"}
        for host, values in by_host.items():
            self.assertEqual(set(values), outcomes, host)
            self.assertEqual(sum(values.values()), 1, host)
        self.assertEqual({s.labels["outcome"] for s in self.samples("fleetreap_hosts")},
                         outcomes)
        # A few series per host, not one per GPU: at most 30 samples a host.
        self.assertLessEqual(sum(len(f.samples) for f in self.families.values()),
                             10 + 30 * len(by_host))

    def test_values_are_the_reports(self):
        self.assertEqual(self.samples("fleetreap_run_exit_code")[0].value, 3)
        self.assertEqual(self.samples("fleetreap_run_ready")[0].value, 0)
        self.assertAlmostEqual(self.samples("fleetreap_run_timestamp_seconds")[0].value,
                               1796007845.123)
        hosts = {s.labels["outcome"]: s.value for s in self.samples("fleetreap_hosts")}
        self.assertEqual(hosts["clean"], 10)
        self.assertEqual(hosts["cleaned"], 2)
        self.assertEqual(hosts["unreachable"], 2)
        outcome = {s.labels["host"]: s.labels["outcome"]
                   for s in self.samples("fleetreap_host_outcome") if s.value == 1}
        self.assertEqual(outcome, {h["name"]: h["outcome"] for h in self.report["hosts"]})
        states = {(s.labels["host"], s.labels["state"]): s.value
                  for s in self.samples("fleetreap_host_gpus")}
        self.assertEqual(states[("gpu13", "ghost")], 1)
        self.assertEqual(states[("gpu05", "ghost")], 0)   # present, at 0
        before = sum(g["memory_used_mib"] for g in next(
            h for h in self.report["hosts"] if h["name"] == "gpu05")["gpus_before"]
            if g.get("memory_used_mib") is not None)
        memory = {(s.labels["host"], s.labels["when"]): s.value
                  for s in self.samples("fleetreap_host_gpu_memory_used_bytes")}
        self.assertEqual(memory[("gpu05", "before")], before * 1024 * 1024)
        self.assertEqual(memory[("gpu05", "after")], 0)
        signals = {(s.labels["host"], s.labels["signal"]): s.value
                   for s in self.samples("fleetreap_host_signals")}
        self.assertEqual(signals[("gpu05", "TERM")], 8)

    def test_a_bad_path_exits_64(self):
        proc = subprocess.run([BIN, "merge", os.path.join(GOLDEN, "report.json"),
                               "--metrics", "/nonexistent/x.prom"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 64, proc.stderr)
        self.assertIn("--metrics /nonexistent/x.prom: cannot write there", proc.stderr)


if __name__ == "__main__":
    unittest.main()
