"""Readiness end to end (docs/readiness.md): simulated hosts that are empty but
not ready, one reason each (readiness_scenarios.py), read by the real
fleetreap binary over SSH and with --local inside each host. Each must be
reported with its named reason and next step, status not_ready when a
blocking finding holds (exit code bit 1, none for a dry run), clean when
only warnings do. Needs root and the built sim tools.
"""

import os
import re
import subprocess
import tempfile
import unittest

from fleet_case import BIN, SOURCE, FleetCase, by_name, fleetreap_argv, run_json, run_local
from simfleet import HostSpec

# host -> (scenario, status, {(check, reason, gpu or bus id, severity)}, a next step)
EXPECTED = {
    "rd01": ("ready_remap_pending", "not_ready",
             {("remapped_rows", "remapped_rows_pending", 3, "block")},
             "reset the GPU before the rollout"),
    "rd02": ("ready_ecc_errors", "not_ready",
             {("ecc", "ecc_uncorrected_volatile", 1, "block")},
             "reset the GPU before the rollout; drain it if they return"),
    "rd03": ("ready_fabric_manager_down", "not_ready",
             {("fabric", "fabric_manager_not_running", -1, "block")} |
             {("fabric", "fabric_not_registered", g, "block") for g in range(8)},
             "start nvidia-fabricmanager"),
    "rd04": ("ready_nvswitch_ok", "clean", set(), None),
    "rd05": ("ready_xid_79", "not_ready", {("xid", "xid_79", 5, "block")},
             "drain and reboot"),
    "rd06": ("ready_xid_informational", "clean", {("xid", "xid_13", 2, "warn")}, None),
    "rd07": ("ready_kernel_log_rotated", "clean",
             {("kernel_log", "kernel_log_rotated", -1, "warn")}, None),
    "rd08": ("ready_pcie_x8", "not_ready", {("pcie_link", "pcie_width_degraded", 6, "block")},
             "drain and reseat the GPU or check its slot and riser"),
    "rd09": ("ready_driver_gpu_missing", "not_ready",
             {("gpu_count", "gpu_not_answering", "0000:ec:00.0", "block")}, "drain and reboot"),
    "rd10": ("clean", "clean", set(), None),
    "rd11": ("recovery_action", "not_ready",
             {("recovery_action", "recovery_action_reset", 4, "block")},
             "reset the GPU before the rollout"),
}


def findings(host):
    readiness = host.get("readiness") or {}
    out = set()
    for f in readiness.get("findings", []):
        where = f["gpu"] if f["gpu"] is not None else (f["bus_id"] or -1)
        out.add((f["check"], f["reason"], where, f["severity"]))
    return out


class ReadinessTest(FleetCase):
    PREFIX = "readiness-"
    SPECS = [HostSpec(name, scenario=scenario) for name, (scenario, *_) in EXPECTED.items()]

    def check_host(self, name, host, how):
        scenario, status, expected, next_step = EXPECTED[name]
        self.assertIsNotNone(host.get("readiness"), f"{how} {name}: readiness not read")
        self.assertEqual(findings(host), expected, f"{how} {name} ({scenario})")
        self.assertEqual(host["status"], status, f"{how} {name}: {host.get('error_message')}")
        self.assertEqual(host["readiness"]["ready"], status != "not_ready")
        if next_step:
            steps = {f["next_step"] for f in host["readiness"]["findings"]}
            self.assertIn(next_step, steps, f"{how} {name}")
            texts = [f["text"] for f in host["readiness"]["findings"]]
            self.assertTrue(any(t.endswith(": " + next_step) for t in texts), texts)

    def test_each_state_over_ssh(self):
        rc, report = run_json(self.fleet)
        hosts = by_name(report)
        for name in EXPECTED:
            self.check_host(name, hosts[name], "ssh")
        self.assertEqual(rc & 1, 1, "a not_ready host sets bit 1")
        self.assertEqual(rc & 2, 0, [h.get("error_message") for h in report["hosts"]])
        not_ready = sum(1 for v in EXPECTED.values() if v[1] == "not_ready")
        self.assertEqual(report["summary"]["not_ready"], not_ready)

    def test_a_dry_run_reports_readiness_and_exits_clean(self):
        rc, report = run_json(self.fleet, "--dry-run", "--limit", "rd01,rd05,rd10")
        self.assertEqual(rc, 0)
        hosts = by_name(report)
        for name in ("rd01", "rd05", "rd10"):
            self.check_host(name, hosts[name], "dry run")

    def test_each_state_with_local_inside_the_host(self):
        for name in EXPECTED:
            rc, report = run_local(self.fleet, name)
            host = report["hosts"][0]
            self.check_host(name, host, "--local")
            self.assertEqual(rc, 1 if EXPECTED[name][1] == "not_ready" else 0, name)

    def test_every_report_names_the_reason_and_next_step(self):
        tmp = tempfile.mkdtemp(prefix="readiness-reports-")
        files = {k: os.path.join(tmp, k) for k in ("junit.xml", "summary.md", "drain.txt")}
        argv = fleetreap_argv(self.fleet, "--limit", "rd01,rd03,rd10", "--color", "never",
                              "--junit", files["junit.xml"], "--summary-md", files["summary.md"],
                              "--drain-reasons", files["drain.txt"])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 1, proc.stderr[-2000:])
        remap = "GPU 3: row remapping pending (2 rows remapped): reset the GPU before the rollout"
        fabric = "fabric manager not running on an NVSwitch system: start nvidia-fabricmanager"
        table = proc.stdout + proc.stderr
        self.assertRegex(table, r"rd01\s+not ready\s+" + re.escape(remap))
        self.assertIn("rd03", table)
        texts = {}
        for name, path in files.items():
            with open(path) as f:
                texts[name] = f.read()
        self.assertIn("not ready: " + remap, texts["junit.xml"])
        self.assertIn(remap, texts["summary.md"])
        drain = dict(line.split(" ", 1) for line in texts["drain.txt"].splitlines())
        self.assertEqual(set(drain), {"rd01", "rd03"})
        self.assertTrue(drain["rd01"].startswith("fleetreap: not ready: " + remap), drain)
        self.assertIn("not ready: GPU 0: fabric state In Progress: start nvidia-fabricmanager",
                      drain["rd03"])
        self.assertIn(fabric, texts["junit.xml"])

    def test_the_slurm_prolog_refuses_a_node_that_is_not_ready(self):
        script = os.path.join(SOURCE, "contrib", "slurm", "fleetreap-epilog")
        command = (f"export SLURM_JOB_ID=7 SLURM_JOB_GPUS=0 FLEETREAP_BIN={BIN} "
                   f"FLEETREAP_REPORT_DIR=/root/fleetreap-reports; {script} --prolog")
        proc = self.fleet.exec("rd05", command, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("fleetreap: not ready: GPU 5: Xid 79", proc.stderr)
        self.assertIn("drain and reboot", proc.stderr)
        ok = self.fleet.exec("rd10", command, timeout=120)
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_ready_off_checks_nothing(self):
        from fleet_case import playbook_path
        with open(playbook_path("default.yaml")) as f:
            text = f.read()
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text + "\nready: off\n")
            path = f.name
        try:
            rc, report = run_json(self.fleet, "--limit", "rd01,rd05", playbook=path)
        finally:
            os.unlink(path)
        self.assertEqual(rc, 0)
        for host in report["hosts"]:
            self.assertEqual(host["status"], "clean")
            self.assertIsNone(host["readiness"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
