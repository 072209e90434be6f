"""fleetreap sweep end to end on a simulated fleet: two rounds one second
apart against hosts with a vLLM server holding every GPU, ghost memory,
/dev/shm leftovers and an idle host; nothing is signalled or removed (the
processes and /dev/shm are as they were, even with the default playbook,
which would TERM and KILL), the metrics say the memory is held, each round
rewrites the reports and logs one line; SIGTERM ends a sweep cleanly
(exit 0, its reports written); --log-dir, --journal, the run id and the
host-key warning work as in a run. Also measures a round's cost on an idle host
(wall and CPU), printed for docs/benchmarks.md.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import json
import os
import re
import resource
import signal
import stat
import subprocess
import tempfile
import time
import unittest

from fleet_case import BIN, SOURCE, FleetCase, live_processes, playbook_path
from scenarios import wait_until
from simfleet import HostSpec

ROUND = re.compile(r"^fleetreap: sweep round (\d+): DRY RUN: .* in ([0-9.]+) s, nothing changed",
                   re.M)


class SweepTest(FleetCase):
    PREFIX = "sweep-"
    SPECS = [HostSpec("gpu01", scenario="vllm_incident"),
             HostSpec("gpu02", scenario="ghost_memory"),
             HostSpec("gpu03", scenario="shm_leftovers"),
             HostSpec("gpu04", scenario="clean")]

    def argv(self, *args):
        return [BIN, "sweep", "--hosts", self.fleet.inventory, "--known-hosts",
                self.fleet.known_hosts, "--identity", self.fleet.key, "--color", "never", *args]

    def shm(self):
        return sorted(os.listdir(os.path.join(self.fleet.hosts["gpu03"].dir, "shm")))

    def test_1_two_rounds_signal_nothing_and_report_memory_held(self):
        before, shm = live_processes(self.fleet), self.shm()
        prom, report = os.path.join(self.tmp, "sweep.prom"), os.path.join(self.tmp, "sweep.json")
        for playbook in ("inspect.yaml", "default.yaml"):   # the default one would TERM and KILL
            proc = subprocess.run(self.argv("--interval", "1s", "--rounds", "2", "--playbook",
                                            playbook_path(playbook), "--metrics", prom,
                                            "--json", report),
                                  capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            rounds = ROUND.findall(proc.stderr)
            self.assertEqual([r for r, _ in rounds], ["1", "2"], proc.stderr)
            self.assertNotIn("(exit", proc.stderr)   # the sweep exits 0, not a dry run's code
            self.assertEqual(live_processes(self.fleet), before, playbook)
            self.assertEqual(self.shm(), shm)
        with open(prom) as f:
            metrics = f.read()
        self.assertIn("fleetreap_run_dry_run 1\n", metrics)
        self.assertIn('fleetreap_host_signals{host="gpu01",signal="TERM"} 0\n', metrics)
        self.assertIn('fleetreap_host_signals{host="gpu01",signal="KILL"} 0\n', metrics)
        held = re.findall(r'fleetreap_host_gpu_memory_used_bytes\{host="gpu01",'
                          r'when="before"\} (\d+)', metrics)
        self.assertEqual(len(held), 1, metrics)
        self.assertGreater(int(held[0]), 8 * 90 * 1024 ** 3)
        self.assertIn('fleetreap_host_gpus{host="gpu01",state="busy"} 8\n', metrics)
        self.assertIn('fleetreap_host_gpus{host="gpu02",state="ghost"} 1\n', metrics)
        self.assertEqual(stat.S_IMODE(os.stat(prom).st_mode), 0o644)  # node_exporter reads it
        with open(report) as f:
            doc = json.load(f)
        self.assertTrue(doc["dry_run"])
        self.assertEqual(doc["playbook"], "inspect")
        gpu03 = next(h for h in doc["hosts"] if h["name"] == "gpu03")
        self.assertTrue(gpu03["shm_would_remove"], gpu03)

    def test_2_sigterm_ends_the_sweep_cleanly(self):
        report = os.path.join(self.tmp, "term.json")
        proc = subprocess.Popen(self.argv("--interval", "10m", "--json", report),
                                stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: os.path.exists(report), timeout=120)
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(len(ROUND.findall(err)), 1, err)
        with open(report) as f:
            self.assertEqual(len(json.load(f)["hosts"]), 4)

    def test_3_bad_sweep_flags_exit_64(self):
        for args, error in ((("--interval", "0s"), "sweep: --interval"),
                            (("--waves", "1"), "sweep: changes nothing, so it runs no waves"),
                            (("--rounds", "x"), "sweep: --rounds")):
            proc = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 64, proc.stderr)
            self.assertIn(error, proc.stderr)

    def test_4_cost_of_a_round_on_an_idle_host(self):
        rounds = 5
        host_before = self.host_cpu_usec("gpu04")
        start = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(self.argv("--limit", "gpu04", "--interval", "1s", "--rounds",
                                        str(rounds)),
                              capture_output=True, text=True, timeout=300)
        end = resource.getrusage(resource.RUSAGE_CHILDREN)
        host_after = self.host_cpu_usec("gpu04")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        walls = [float(w) for _, w in ROUND.findall(proc.stderr)]
        self.assertEqual(len(walls), rounds, proc.stderr)
        cpu = (end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime) / rounds
        print(f"\nsweep cost, idle host (clean, 8 GPUs), {rounds} rounds: wall per round "
              f"{min(walls):.2f}-{max(walls):.2f} s (median {sorted(walls)[rounds // 2]:.2f} s), "
              f"controller CPU {cpu * 1000:.0f} ms per round (user+sys)" +
              (f", host CPU {(host_after - host_before) / 1000 / rounds:.0f} ms per round "
               "(the host's cgroup: sshd, the scan, nvidia-smi)"
               if host_before is not None and host_after is not None else ""))

    def test_5_a_sweep_is_assembled_as_a_run_is(self):
        """--log-dir, --journal, the run id and the host-key warning mean in
        a sweep what they mean in a run (one run assembly, run_setup.h)."""
        logs, journal = os.path.join(self.tmp, "logs"), os.path.join(self.tmp, "sweep.journal")
        report = os.path.join(self.tmp, "assembled.json")
        proc = subprocess.run(self.argv("--limit", "gpu04,gpu01", "--rounds", "1", "--log-dir",
                                        logs, "--journal", journal, "--json", report, "-v"),
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(logs)), ["gpu01.log", "gpu04.log"])
        with open(os.path.join(logs, "gpu04.log")) as f:
            self.assertIn("nvidia-smi", f.read())
        run_id = re.search(r"^fleetreap: info: run (\S+)$", proc.stderr, re.M)
        self.assertIsNotNone(run_id, proc.stderr)
        with open(journal) as f:
            first = json.loads(f.readline())
        self.assertEqual(first["run"]["run_id"], run_id.group(1))
        self.assertEqual(sorted(first["selected"]), ["gpu01", "gpu04"])
        with open(report) as f:
            self.assertEqual(json.load(f)["run_id"], run_id.group(1))
        # A journal that defaults to beside --json goes once the report is written.
        proc = subprocess.run(self.argv("--limit", "gpu04", "--rounds", "1", "--json", report),
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(os.path.exists(report + ".journal"))
        proc = subprocess.run(self.argv("--limit", "gpu04", "--rounds", "1",
                                        "--host-key-policy", "off"),
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("--host-key-policy off: host keys are NOT checked", proc.stderr)

    def host_cpu_usec(self, name):
        """usage_usec of the host's cgroup (every process of the host,
        bystanders included), or None without cgroups."""
        cgroup = self.fleet.hosts[name].cgroup
        if not cgroup:
            return None
        with open(os.path.join(cgroup, "cpu.stat")) as f:
            return int(f.read().split("usage_usec ")[1].split()[0])


@unittest.skipUnless(os.path.exists("/usr/bin/systemd-analyze"), "no systemd-analyze")
class SystemdUnitsTest(unittest.TestCase):
    def test_units_verify_and_sweep_report_only(self):
        units = os.path.join(SOURCE, "contrib", "systemd")
        with tempfile.TemporaryDirectory() as tmp:
            for name in os.listdir(units):
                with open(os.path.join(units, name)) as f:
                    text = f.read()
                if name.endswith(".service"):
                    self.assertIn("ExecStart=/usr/bin/fleetreap sweep ", text)
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text.replace("/usr/bin/fleetreap", BIN))
            proc = subprocess.run(["systemd-analyze", "verify",
                                   *sorted(os.path.join(tmp, n) for n in os.listdir(tmp))],
                                  capture_output=True, text=True, timeout=60)
            # The man page is not installed here; anything else is a finding.
            findings = [line for line in (proc.stdout + proc.stderr).splitlines()
                        if "man fleetreap(1)" not in line]
            self.assertEqual(findings, [])


if __name__ == "__main__":
    unittest.main()
