#!/usr/bin/env python3
"""--metrics FILE is Prometheus text exposition format as node_exporter's
textfile collector reads it, checked with the format's
reference parser (Debian's python3-prometheus-client): the golden report's
run rendered through `fleetreap merge --metrics`, every family a gauge with
HELP, no sample timestamps, the values the report says. Needs no simulated
fleet.
"""
import json
import os
import stat
import subprocess
import tempfile
import unittest

from prometheus_client.parser import text_string_to_metric_families

from fleet_case import BIN, SOURCE

GOLDEN = os.path.join(SOURCE, "tests", "testdata", "golden")


class MetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="fleetreap-metrics-")
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
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        self.assertEqual(os.listdir(self.dir), ["fleetreap.prom"])  # renamed into place
        self.assertTrue(self.text.endswith("\n"))
        for name, family in self.families.items():
            self.assertTrue(name.startswith("fleetreap_"), name)
            self.assertEqual(family.type, "gauge", name)
            self.assertTrue(family.documentation, name)
            for sample in family.samples:
                self.assertIsNone(sample.timestamp, sample)   # the collector refuses them

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
                   for s in self.samples("fleetreap_host_outcome")}
        self.assertEqual(outcome, {h["name"]: h["outcome"] for h in self.report["hosts"]})
        states = {(s.labels["host"], s.labels["gpu"]): s.labels["state"]
                  for s in self.samples("fleetreap_gpu_state")}
        self.assertEqual(states[("gpu13", "3")], "ghost")
        memory = {(s.labels["host"], s.labels["gpu"], s.labels["when"]): s.value
                  for s in self.samples("fleetreap_gpu_memory_used_bytes")}
        self.assertEqual(memory[("gpu05", "0", "before")], 70000 * 1024 * 1024)
        self.assertEqual(memory[("gpu05", "0", "after")], 0)
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
