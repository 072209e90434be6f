"""Never touch what is not ours, end to end: the real fleetreap
binary against simulated GPU nodes over real SSH and with --local inside a
host, checked against the fleet's own ground truth. Every protected daemon of
a real GPU node survives and is named; jobs that only name themselves like a
daemon are signalled; a scoped run (--gpus, --cgroup, a Slurm epilog's job)
never touches a co-tenant; holders are reported with their owner (unit and
its Restart=, container, pod, Slurm job); units that run a protected daemon
are skipped, playbook patterns that would stop one are refused; a shell that
does not see the host's PID namespace signals nothing.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import os
import subprocess
import tempfile
import unittest

from fleet_case import (BIN, SOURCE, FleetCase, by_name, local_command, needs_cgroups,
                        parse_report, run_json)
import host_setup
from host_setup import HostSetup
from scenarios import IMPOSTORS
from simfleet import HostSpec

# The built-in entries the sim's DAEMONS do not run, each installed
# root-owned 0755 at a system path of the host and holding every device at
# 0 MiB ('sshd' and 'systemd' under /opt: the host's own are in use).
OTHER_ENTRIES = {
    "nvidia-fabricmanager": "/usr/bin/nvidia-fabricmanager",
    "nvidia-imex-ctl": "/usr/bin/nvidia-imex-ctl",
    "nvidia-mig-parted": "/usr/bin/nvidia-mig-parted",
    "Xorg": "/usr/bin/Xorg",
    "Xwayland": "/usr/bin/Xwayland",
    "gdm*": "/usr/bin/gdm-x-session",
    "sshd": "/opt/openssh/sbin/sshd",
    "systemd": "/opt/systemd/systemd",
    "nvidia-smi": "/usr/bin/nvidia-smi",
    "fuser": "/usr/bin/fuser",
    # Monitoring agents that hold NVML at 0 MiB.
    "collectd": "/usr/sbin/collectd",
    "/opt/datadog-agent/bin/agent/agent": "/opt/datadog-agent/bin/agent/agent",
    "zabbix_agent2": "/usr/sbin/zabbix_agent2",
    "zabbix-agent2-plugin-nvidia-gpu":
        "/usr/libexec/zabbix-agent2-plugin/zabbix-agent2-plugin-nvidia-gpu",
    "otelopscol": "/opt/google-cloud-ops-agent/subagents/opentelemetry-collector/otelopscol",
    "nvidia_gpu_prometheus_exporter": "/usr/bin/nvidia_gpu_prometheus_exporter",
    "nvidia_gpu_exporter": "/usr/bin/nvidia_gpu_exporter",
}


def run_fleetreap(fleet, *extra, playbook="default.yaml"):
    code, report = run_json(fleet, *extra, playbook=playbook)
    return code, by_name(report), report


@needs_cgroups
class ProtectScopeTest(FleetCase):
    PREFIX = "protecttest-"
    SPECS = [HostSpec("daemons", scenario="gpu_node_daemons", bystanders=10),
             HostSpec("impost", scenario="impostors", bystanders=10),
             HostSpec("elsewhere", scenario="persistenced_elsewhere", bystanders=10),
             HostSpec("slurm", scenario="slurm_shared", bystanders=10),
             HostSpec("flags", scenario="slurm_shared", bystanders=10),
             HostSpec("boxes", scenario="container_shapes", bystanders=10),
             HostSpec("restart", scenario="restart_unit", bystanders=10),
             HostSpec("units", scenario="vllm_incident", bystanders=10),
             HostSpec("nested", scenario="vllm_incident", bystanders=10),
             HostSpec("others", scenario="vllm_incident", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        others = HostSetup(cls.fleet, cls.fleet.host("others"))
        cls.other_pids = {entry: others.impostor(path, gpus="0-7", mib=0, user="root")
                          for entry, path in OTHER_ENTRIES.items()}
        # An innocently named unit that runs DCGM, and a vLLM unit to stop.
        cls.telemetry = HostSetup(cls.fleet, cls.fleet.host("units")).daemon(
            "nv-hostengine", unit="gpu-telemetry.service")
        cls.before = cls.fleet.ground_truth()

    def fleet_run(self, hosts, *extra, playbook="default.yaml"):
        return run_fleetreap(self.fleet, "--limit", hosts, *extra, playbook=playbook)

    @classmethod
    def clean_daemon_node(cls):
        """One run over the GPU node with every daemon, shared by the
        per-daemon tests below."""
        if not hasattr(cls, "daemon_run"):
            rc, hosts, _ = run_fleetreap(cls.fleet, "--limit", "daemons")
            cls.daemon_run = (rc, hosts["daemons"], cls.fleet.ground_truth()["daemons"])
        return cls.daemon_run

    def test_gpu_node_with_every_daemon_ends_clean(self):
        rc, host, truth = self.clean_daemon_node()
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertEqual(rc, 0)
        self.assertEqual(truth["gpu_processes"], [])
        self.assertEqual(set(truth["daemons"]), set(host_setup.DAEMONS))

    def check_daemon(self, name):
        rc, host, truth = self.clean_daemon_node()
        self.assertTrue(truth["daemons"][name]["alive"], f"{name} was killed")
        before = self.before["daemons"]["daemons"][name]
        holder = next((h for h in host["holders"] if h["pid"] == before["pid"]), None)
        self.assertIsNotNone(holder, f"{name} (pid {before['pid']}) not reported")
        self.assertEqual(holder["fate"], "protected")
        self.assertIn(holder["protected_by"], (name, name + " (pid file)", "nvsm*"))

    @classmethod
    def clean_other_entries(cls):
        if not hasattr(cls, "others_run"):
            rc, hosts, _ = run_fleetreap(cls.fleet, "--limit", "others")
            cls.others_run = (rc, hosts["others"], cls.fleet.ground_truth()["others"])
        return cls.others_run

    def check_other_entry(self, entry):
        rc, host, truth = self.clean_other_entries()
        self.assertEqual(host["status"], "clean", host["error_message"])
        pid = self.other_pids[entry]
        holder = next((h for h in host["holders"] if h["pid"] == pid), None)
        self.assertIsNotNone(holder, f"{entry} (pid {pid}) not reported")
        self.assertEqual(holder["fate"], "protected")
        self.assertEqual(holder["protected_by"], entry)
        alive = {p["pid"] for p in truth["impostors"] if p["alive"]}
        self.assertIn(pid, alive)

    def test_every_entry_of_the_default_list_is_tested(self):
        with open(os.path.join(SOURCE, "docs", "protected-daemons.md")) as f:
            entries = {line.split("`")[1] for line in f if line.startswith("| `")}
        tested = set(host_setup.DAEMONS) | set(OTHER_ENTRIES)
        tested = {"nvsm*" if name == "nvsm-core" else name for name in tested}
        self.assertEqual(entries, tested)

    def test_a_job_named_like_a_daemon_is_a_job(self):
        rc, hosts, _ = self.fleet_run("impost")
        host = hosts["impost"]
        truth = self.fleet.ground_truth()["impost"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertTrue(all(d["alive"] for d in truth["daemons"].values()))
        by_exe = {h["exe"]: h for h in host["holders"]}
        for path, user, mode, gpu, mib in IMPOSTORS:
            with self.subTest(impostor=path):
                holder = by_exe[path]
                self.assertIn(holder["fate"], ("terminated", "killed"))
                self.assertEqual(holder["named_like"], os.path.basename(path))
                self.assertIsNone(holder["protected_by"])
        self.assertFalse(any(i["alive"] for i in truth["impostors"]))

    def test_persistenced_outside_usr_bin_is_still_protected(self):
        rc, hosts, _ = self.fleet_run("elsewhere")
        host = hosts["elsewhere"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        daemon = self.before["elsewhere"]["daemons"]["nvidia-persistenced"]
        holder = next(h for h in host["holders"] if h["pid"] == daemon["pid"])
        self.assertEqual(holder["fate"], "protected")
        self.assertTrue(self.fleet.ground_truth()["elsewhere"]["daemons"]
                        ["nvidia-persistenced"]["alive"])

    def test_slurm_epilog_cleans_only_its_job(self):
        proc = self.fleet.exec_epilog("slurm", 41, local_command())
        report = parse_report(proc)
        host = report["hosts"][0]
        self.assertEqual(proc.returncode, 0, host["error_message"])
        self.assertEqual(report["scope"]["slurm_job"], "41")
        self.assertEqual(report["scope"]["source"], "slurm")
        self.assertEqual(report["scope"]["gpus"], [0, 1, 2, 3])
        jobs = self.fleet.ground_truth()["slurm"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], [])
        self.assertEqual(jobs["42"]["workers_alive"], jobs["42"]["workers"])
        self.assertEqual(self.before["slurm"]["jobs"]["42"]["processes"],
                         jobs["42"]["processes"])
        fates = {h["owner"]["slurm_job"]: set() for h in host["holders"]}
        for h in host["holders"]:
            fates[h["owner"]["slurm_job"]].add(h["fate"])
        self.assertEqual(fates["42"], {"out_of_scope"})
        self.assertTrue(fates["41"] <= {"terminated", "killed"})
        states = {g["index"]: g["state"] for g in host["gpus_after"]}
        self.assertEqual({states[i] for i in range(4, 8)}, {"out_of_scope"})

    def test_gpus_flag_over_ssh_never_touches_the_co_tenant(self):
        rc, hosts, report = self.fleet_run("flags", "--gpus", "4-7")
        host = hosts["flags"]
        self.assertEqual(rc, 0, host["error_message"])
        self.assertEqual(report["scope"]["gpus"], [4, 5, 6, 7])
        jobs = self.fleet.ground_truth()["flags"]["jobs"]
        self.assertEqual(jobs["41"]["workers_alive"], jobs["41"]["workers"])
        self.assertEqual(jobs["42"]["workers_alive"], [])

    def test_owners_and_cgroup_scope(self):
        # Read-only first: every holder names its container or pod.
        rc, hosts, _ = self.fleet_run("boxes", "--dry-run")
        host = hosts["boxes"]
        jobs = self.before["boxes"]["jobs"]
        docker_cgroup = jobs["docker:trainer"]["cgroup"]
        owners = {}
        for h in host["holders"]:
            if h["fate"] == "protected":
                continue
            owners.setdefault(h["cgroup"], h["owner"])
        docker = owners[docker_cgroup]
        self.assertEqual(docker["container_runtime"], "docker")
        self.assertEqual(len(docker["container_id"]), 64)
        pod_cgroup = jobs["pod:llm-serve-7d9f8b6c5-x2x4q"]["cgroup"]
        pod = next(o for c, o in owners.items() if c.startswith(pod_cgroup + "/"))
        self.assertEqual(pod["container_runtime"], "containerd")
        self.assertEqual(len(pod["pod_uid"]), 36)
        # Scoped to the Docker container: the pod is never touched.
        rc, hosts, _ = self.fleet_run("boxes", "--cgroup", docker_cgroup)
        truth = self.fleet.ground_truth()["boxes"]["jobs"]
        self.assertEqual(truth["docker:trainer"]["gpu_processes"], [])
        self.assertEqual(truth["pod:llm-serve-7d9f8b6c5-x2x4q"]["processes"],
                         jobs["pod:llm-serve-7d9f8b6c5-x2x4q"]["processes"])
        fates = {h["fate"] for h in hosts["boxes"]["holders"]
                 if h["cgroup"].startswith(pod_cgroup + "/")}
        self.assertEqual(fates, {"out_of_scope"})

    def test_a_restarting_unit_is_named_and_can_be_stopped(self):
        rc, hosts, _ = self.fleet_run("restart", "--dry-run")
        unit = self.before["restart"]["restart_units"]["embed.service"]
        holder = next(h for h in hosts["restart"]["holders"] if h["pid"] == unit["main_pid"])
        self.assertEqual(holder["owner"]["unit"], "embed.service")
        self.assertEqual(holder["owner"]["unit_restart"], "always")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("name: embed\nunits: [embed.service]\n")
        try:
            rc, hosts, _ = self.fleet_run("restart", playbook=f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(hosts["restart"]["status"], "clean", hosts["restart"]["error_message"])
        self.assertEqual(hosts["restart"]["units_stopped"], ["embed.service"])
        truth = self.fleet.ground_truth()["restart"]["restart_units"]["embed.service"]
        self.assertFalse(truth["main_alive"])

    def test_units_obey_the_protected_set(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.yaml")
            with open(bad, "w") as f:
                f.write("name: bad\nunits:\n  - vllm.service\n  - nvidia*\n")
            proc = subprocess.run([BIN, "--hosts", self.fleet.inventory, "--playbook", bad,
                                   "--limit", "units"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 65)
            self.assertIn(f"{bad}:4:5: units entry \"nvidia*\" would stop "
                          "nvidia-persistenced.service", proc.stderr)
            good = os.path.join(tmp, "good.yaml")
            with open(good, "w") as f:
                f.write("name: good\nunits: [vllm.service, gpu-telemetry.service]\n")
            rc, hosts, _ = self.fleet_run("units", playbook=good)
        host = hosts["units"]
        self.assertEqual(host["status"], "clean", host["error_message"])
        self.assertEqual(host["units_stopped"], ["vllm.service"])
        self.assertEqual(host["units_skipped"],
                         [f"gpu-telemetry.service: it runs protected nv-hostengine "
                          f"(pid {self.telemetry})"])
        self.assertTrue(self.fleet.ground_truth()["units"]["daemons"]["nv-hostengine"]["alive"])

    def test_local_in_a_foreign_pid_namespace_signals_nothing(self):
        proc = self.fleet.exec_nested_pidns("nested", local_command(), timeout=120)
        report = parse_report(proc)
        host = report["hosts"][0]
        self.assertEqual(host["status"], "failed")
        self.assertIn("does not see the host's PID namespace", host["error_message"])
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(self.fleet.ground_truth()["nested"]["gpu_processes"],
                         self.before["nested"]["gpu_processes"])


# One test per entry of the default protected set: the daemons the sim runs,
# and the other entries.
for _name in host_setup.DAEMONS:
    setattr(ProtectScopeTest, "test_daemon_" + _name.replace("-", "_"),
            lambda self, name=_name: self.check_daemon(name))
for _entry in OTHER_ENTRIES:
    setattr(ProtectScopeTest, "test_entry_" + os.path.basename(_entry).replace("-", "_")
            .replace("*", "_glob"),
            lambda self, entry=_entry: self.check_other_entry(entry))


if __name__ == "__main__":
    unittest.main(verbosity=2)
