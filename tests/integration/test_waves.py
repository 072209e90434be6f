"""Waves end to end on a simulated fleet of 20 hosts: `--waves 1,10%,100%
--max-fail 1` runs gpu01, then gpu02 and gpu03; both fail (one unreachable,
one with ghost memory), so the cap stops the run before wave 3: its 17 hosts
are reported not started with the reason in the table, JSON, JUnit,
Markdown, metrics and journal, are left untouched (a vLLM server among them
keeps running), the exit code has the stopped bit (4), and --failed-hosts
lists them, so `--limit @failed.txt` picks them up and cleans the vLLM
host. Also: --list-hosts and --dry-run print the waves, --wave-by takes
whole racks (a variable no host sets is refused, hosts lacking it are
warned about), and bad wave flags (--max-fail alone among them) exit 64.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import re
import subprocess
import unittest

from fleet_case import FleetCase, fleetreap_argv, live_processes, playbook_path
from simfleet import HostSpec

NAMES = ["gpu%02d" % i for i in range(1, 21)]
SCENARIO = {"gpu02": "unreachable", "gpu03": "ghost_memory", "gpu10": "vllm_incident"}
WAVE3 = NAMES[3:]
STOPPED = "stopped by --max-fail 1: 2 hosts failed after wave 2 of 3"


class WavesTest(FleetCase):
    PREFIX = "waves-"
    SPECS = [HostSpec(n, scenario=SCENARIO.get(n, "clean"), shape="lean") for n in NAMES]

    def fleetreap(self, *args):
        argv = fleetreap_argv(self.fleet, "--playbook", playbook_path("default.yaml"),
                              "--connect-timeout", "3s", "--retries", "0",
                              "--color", "never", *args)
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def test_1_list_hosts_and_dry_run_print_the_waves(self):
        proc = self.fleetreap("--waves", "1,10%,100%", "--max-fail", "1", "--list-hosts")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "wave 1/3: 1 host: gpu01\n"
                                      "wave 2/3: 2 hosts: gpu[02-03]\n"
                                      "wave 3/3: 17 hosts: gpu[04-20]\n"
                                      "stops once more than 1 host fails\n")
        proc = self.fleetreap("--canary", "1", "--max-fail", "1", "--dry-run", "--quiet")
        self.assertEqual(proc.returncode, 2, proc.stderr)   # gpu02 could not be inspected
        self.assertTrue(proc.stdout.startswith("wave 1/2: 1 host: gpu01\n"
                                               "wave 2/2: 19 hosts: gpu[02-20]\n"), proc.stdout)
        self.assertIn("DRY RUN: ", proc.stdout)   # a dry run inspects every host
        self.assertNotIn("not started", proc.stdout)

    def test_2_wave_by_rack(self):
        racks = self.out("racks.yaml")
        with open(racks, "w") as f:
            f.write("all:\n  hosts:\n")
            for i, name in enumerate(NAMES):
                f.write(f"    {name}: {{rack: r{i // 5 + 1}}}\n")
        proc = self.fleetreap("--hosts", racks, "--wave-by", "rack", "--list-hosts")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "wave 1/4: 5 hosts (rack r1): gpu[01-05]\n"
                                      "wave 2/4: 5 hosts (rack r2): gpu[06-10]\n"
                                      "wave 3/4: 5 hosts (rack r3): gpu[11-15]\n"
                                      "wave 4/4: 5 hosts (rack r4): gpu[16-20]\n"
                                      "stops once every host of a wave fails\n")
        # A variable no selected host sets (a typo) is refused; one some lack is warned about.
        proc = self.fleetreap("--hosts", racks, "--wave-by", "rakc", "--list-hosts")
        self.assertEqual(proc.returncode, 64, proc.stderr)
        self.assertRegex(proc.stderr, r"--wave-by rakc: no selected host sets it; hosts set: "
                                      r"(\S+, )*rack\b")
        with open(racks, "a") as f:
            f.write("    gpu21: {gpu_model: h200}\n")
        proc = self.fleetreap("--hosts", racks, "--wave-by", "rack", "--list-hosts")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("--wave-by rack: 1 of 21 hosts do not set it (gpu21)", proc.stderr)
        self.assertIn("wave 5/5: 1 host (rack (none)): gpu21\n", proc.stdout)

    def test_3_bad_flags_exit_64(self):
        for args, error in ((("--waves", "0,50%"), '--waves: "0" is not a wave size'),
                            (("--max-fail", "ten"), '--max-fail: "ten" is not a cap'),
                            (("--canary", "-1"), "--canary: must be 1 or more"),
                            # Alone, the cap would make one wave of every host and cap nothing.
                            (("--max-fail", "2"), "--max-fail 2: the cap is checked between "
                                                  "waves")):
            proc = self.fleetreap(*args)
            self.assertEqual(proc.returncode, 64, proc.stderr)
            self.assertIn(error, proc.stderr)

    def test_4_the_cap_stops_before_wave_3_and_the_rerun_picks_up(self):
        before = live_processes(self.fleet)
        report, failed = self.out("run.json"), self.out("failed.txt")
        junit, md, prom = self.out("run.xml"), self.out("run.md"), self.out("run.prom")
        journal = self.out("run.journal")
        proc = self.fleetreap("--waves", "1,10%,100%", "--max-fail", "1", "--json", report,
                              "--failed-hosts", failed, "--junit", junit, "--summary-md", md,
                              "--metrics", prom, "--journal", journal)
        self.assertEqual(proc.returncode, 1 | 2 | 4, proc.stderr)
        with open(report) as f:
            doc = json.load(f)
        self.assertEqual([h["name"] for h in doc["hosts"]], NAMES[:3])
        self.assertEqual(doc["not_started"], WAVE3)
        self.assertEqual(doc["stopped"], STOPPED)
        self.assertEqual(doc["exit_code"], 7)
        self.assertFalse(doc["interrupted"])
        statuses = {h["name"]: h["status"] for h in doc["hosts"]}
        self.assertEqual(statuses, {"gpu01": "clean", "gpu02": "unreachable", "gpu03": "dirty"})
        # The table: one row for the 17 with the reason, and the verdict.
        self.assertRegex(proc.stdout, r"gpu\[04-20\] +not started +" + re.escape(STOPPED))
        self.assertIn("STOPPED: 1/20 hosts clean, 1 dirty, 1 unreachable, 17 not started",
                      proc.stdout)
        with open(junit) as f:
            xml = f.read()
        self.assertIn('<property name="stopped" value="%s"/>' % STOPPED, xml)
        self.assertEqual(xml.count('message="not started: %s"' % STOPPED), 17)
        with open(md) as f:
            self.assertIn(STOPPED, f.read())
        with open(prom) as f:
            metrics = f.read()
        self.assertIn("fleetreap_run_stopped 1\n", metrics)
        self.assertIn('fleetreap_hosts{outcome="not_started"} 17\n', metrics)
        self.assertIn("fleetreap_run_exit_code 7\n", metrics)
        with open(journal) as f:
            last = json.loads(f.read().splitlines()[-1])
        self.assertEqual(last["stopped"], STOPPED)
        with open(failed) as f:
            self.assertEqual(f.read().split(), ["gpu02", "gpu03"] + WAVE3)
        # Wave 3 was never touched: the vLLM server on gpu10 still runs.
        after = live_processes(self.fleet)
        self.assertEqual(after["gpu10"], before["gpu10"])

        # The re-run: every host of the list, the 17 of wave 3 included.
        proc = self.fleetreap("--limit", "@" + failed, "--json", self.out("rerun.json"))
        self.assertEqual(proc.returncode, 3, proc.stderr)
        with open(self.out("rerun.json")) as f:
            doc = json.load(f)
        self.assertEqual([h["name"] for h in doc["hosts"]], ["gpu02", "gpu03"] + WAVE3)
        self.assertEqual(doc["not_started"], [])
        self.assertIsNone(doc["stopped"])
        gpu10 = next(h for h in doc["hosts"] if h["name"] == "gpu10")
        self.assertEqual(gpu10["status"], "clean")
        self.assertNotEqual(live_processes(self.fleet)["gpu10"], before["gpu10"])


if __name__ == "__main__":
    unittest.main()
