"""The simulated fleet has the shapes the protection and scope tests need, seen from inside the
hosts as fleetreap sees them: real cgroups laid out like a systemd host,
Slurm job cgroups on a shared node, Docker and Kubernetes container cgroups,
a unit whose Restart= policy brings its GPU process back, the protected
daemons of real GPU nodes (root-owned, in system directories, in their unit
or pod cgroups, with their PID files), impostors named like them, the PID
namespace marker and a nested PID namespace, and a tear-down that leaves no
cgroup behind. It tests the sim only, not fleetreap.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR).
"""

import os
import re
import subprocess
import sys
import time
import unittest

from fleet_case import SOURCE, FleetCase
import simfleet
from host_setup import DAEMONS, HostSetup, pod_uid
from scenarios import IMPOSTORS, wait_until
from simfleet import Fleet, HostSpec, scratch_dir

CGROUPS, CGROUPS_WHY = simfleet.cgroups_status()
needs_cgroups = unittest.skipUnless(CGROUPS, f"no writable cgroups: {CGROUPS_WHY}")


def last_cgroup_line(text):
    lines = [line for line in text.splitlines() if line.startswith("0::")]
    return lines[-1][3:] if lines else None


class SimShapesTest(FleetCase):
    PREFIX = "simshapes-"
    SPECS = [
        HostSpec("plain", scenario="vllm_incident", bystanders=40),
        HostSpec("slurm", scenario="slurm_shared", bystanders=20),
        HostSpec("ctr", scenario="container_shapes", bystanders=20),
        HostSpec("restart", scenario="restart_unit", bystanders=20),
        HostSpec("daemons", scenario="gpu_node_daemons", bystanders=20),
        HostSpec("elsewhere", scenario="persistenced_elsewhere", bystanders=0),
        HostSpec("operator", scenario="gpu_operator_node", bystanders=0),
        HostSpec("impostors", scenario="impostors", bystanders=0),
    ]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.truth = cls.fleet.ground_truth()

    def sh(self, host, command, **kw):
        r = self.fleet.exec(host, command, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def ssh(self, host, command):
        r = subprocess.run(self.fleet.ssh_argv(host, command), capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def cgroup_of(self, host, pid):
        return last_cgroup_line(self.sh(host, f"cat /proc/{pid}/cgroup"))

    # ---- cgroups ------------------------------------------------------------

    @needs_cgroups
    def test_cgroups_seen_from_inside_like_a_systemd_host(self):
        # An SSH session (fleetreap's scan shell) is in sshd's unit.
        self.assertEqual(last_cgroup_line(self.ssh("plain", "cat /proc/self/cgroup")),
                         "/system.slice/ssh.service")
        self.assertEqual(self.cgroup_of("plain", 1), "/init.scope")
        self.assertEqual(last_cgroup_line(self.sh("plain", "cat /proc/self/cgroup")),
                         "/user.slice/user-0.slice/session-1.scope")
        self.assertEqual(last_cgroup_line(self.sh("plain", "cat /proc/self/cgroup",
                                                  user="gpuops")),
                         "/user.slice/user-1000.slice/session-3.scope")
        # /sys/fs/cgroup is the host's own subtree.
        top = set(self.sh("plain", "ls /sys/fs/cgroup").split())
        self.assertLessEqual({"init.scope", "system.slice", "user.slice", "cgroup.procs"}, top)
        # Units and the orphans of KillMode=process stay in the unit's cgroup.
        for p in self.truth["plain"]["gpu_processes"]:
            self.assertEqual(p["cgroup"], "/system.slice/vllm.service")
            self.assertEqual(self.cgroup_of("plain", p["pid"]), "/system.slice/vllm.service")
        # Bystanders sit in plausible units.
        table = self.sh("plain", "for p in /proc/[0-9]*; do echo \"$(cat $p/comm) "
                                 "$(tail -1 $p/cgroup)\"; done 2>/dev/null")
        seen = dict(line.split(" ", 1) for line in table.splitlines() if " " in line)
        self.assertEqual(seen.get("cron"), "0::/system.slice/cron.service")
        self.assertEqual(seen.get("containerd"), "0::/system.slice/containerd.service")
        self.assertEqual(seen.get("kubelet"), "0::/system.slice/kubelet.service")
        self.assertEqual(seen.get("kworker/u16:2"), "0::/")
        self.assertEqual(seen.get("nvidia-persiste"),
                         "0::/system.slice/nvidia-persistenced.service")

    @needs_cgroups
    def test_systemctl_group_is_the_cgroup(self):
        out = self.sh("plain", "cat /sys/fs/cgroup/system.slice/vllm.service/cgroup.procs")
        self.assertEqual(len(out.split()), 9)   # the API server and 8 workers
        self.assertEqual(self.sh("plain", "systemctl show -p ControlGroup --value vllm"),
                         "/system.slice/vllm.service\n")

    # ---- Slurm, containers ----------------------------------------------------

    @needs_cgroups
    def test_two_slurm_jobs_in_their_own_cgroups(self):
        jobs = self.truth["slurm"]["jobs"]
        self.assertEqual(set(jobs), {"41", "42"})
        for job, gpus, uid in (("41", range(0, 4), 1000), ("42", range(4, 8), 1001)):
            j = jobs[job]
            self.assertEqual(j["cgroup"], f"/system.slice/slurmstepd.scope/job_{job}")
            self.assertEqual(len(j["workers"]), 4)
            self.assertEqual(j["workers_alive"], j["workers"])
            self.assertEqual(j["gpu_processes"], j["workers"])
            env = self.fleet.host("slurm").jobs[job]["epilog_env"]
            self.assertEqual(env["SLURM_JOB_GPUS"], ",".join(str(g) for g in gpus))
            for pid in j["workers"]:
                self.assertEqual(self.cgroup_of("slurm", pid),
                                 f"/system.slice/slurmstepd.scope/job_{job}/step_0/user/task_0")
                self.assertEqual(self.sh("slurm", f"stat -c %u /proc/{pid}").strip(), str(uid))
                devices = self.sh("slurm", f"for f in /proc/{pid}/fd/*; do readlink $f; done")
                held = {int(d[11:]) for d in devices.split() if re.fullmatch(r"/dev/nvidia\d+", d)}
                self.assertEqual(held, set(gpus))   # ConstrainDevices: only the job's GPUs
            charged = {k for p in self.truth["slurm"]["gpu_processes"]
                       if p["pid"] in j["workers"] for k in p["charged_gpus"]}
            self.assertEqual(charged, set(gpus))
        epilog = self.fleet.exec_epilog("slurm", 41, "echo $SLURM_JOB_ID $SLURM_JOB_GPUS; "
                                                     "tail -1 /proc/self/cgroup")
        self.assertEqual(epilog.stdout, "41 0,1,2,3\n0::/system.slice/slurmd.service\n")
        stepds = self.sh("slurm", "ps -eo args= | grep '^slurmstepd: ' | sort").split("\n")
        self.assertIn("slurmstepd: [41.0]", stepds)
        self.assertIn("slurmstepd: [42.extern]", stepds)

    @needs_cgroups
    def test_docker_and_pod_container_cgroups(self):
        jobs = self.truth["ctr"]["jobs"]
        docker = jobs["docker:trainer"]
        self.assertRegex(docker["cgroup"], r"^/system\.slice/docker-[0-9a-f]{64}\.scope$")
        self.assertEqual(self.cgroup_of("ctr", docker["workers"][0]), docker["cgroup"])
        pod = jobs["pod:llm-serve-7d9f8b6c5-x2x4q"]
        uid = pod_uid("ctr", "llm-serve-7d9f8b6c5-x2x4q")
        self.assertEqual(pod["cgroup"], "/kubepods.slice/kubepods-besteffort.slice/"
                         f"kubepods-besteffort-pod{uid.replace('-', '_')}.slice")
        path = self.cgroup_of("ctr", pod["workers"][0])
        self.assertRegex(path, re.escape(pod["cgroup"]) + r"/cri-containerd-[0-9a-f]{64}\.scope$")
        self.assertEqual(pod["gpu_processes"], pod["workers"])
        self.assertEqual(len(pod["processes"]), 2)   # the server and /pause

    # ---- Restart= -------------------------------------------------------------

    def unit(self, host, unit):
        return self.fleet.ground_truth()[host]["restart_units"][unit]

    @needs_cgroups
    def test_restart_policy_brings_the_main_process_back_until_stopped(self):
        self.assertEqual(self.sh("restart", "systemctl show -p Restart --value embed.service "
                                            "vllm.service nvidia-persistenced.service"),
                         "always\n\nno\n\nalways\n")
        first = self.unit("restart", "embed.service")
        self.assertTrue(first["main_alive"])
        self.assertEqual(first["gpu_processes"], [first["main_pid"]])
        self.sh("restart", f"kill -KILL {first['main_pid']}")
        back = wait_until(lambda: (lambda u: u["main_alive"] and u["main_pid"] != first[
            "main_pid"] and u)(self.unit("restart", "embed.service")), timeout=10)
        self.assertTrue(back)
        self.assertEqual(back["restarts"], 1)
        new = back["main_pid"]
        self.assertEqual(self.cgroup_of("restart", new), "/system.slice/embed.service")
        self.assertEqual(self.sh("restart", f"cut -d' ' -f4 /proc/{new}/stat").strip(), "1")
        apps = self.sh("restart", "nvidia-smi --query-compute-apps=pid,used_memory "
                                  "--format=csv,noheader,nounits")
        self.assertIn(f"{new}, 30720", apps)
        self.assertEqual(self.sh("restart", "systemctl show -p MainPID,NRestarts "
                                            "embed.service"),
                         f"MainPID={new}\nNRestarts=1\n")
        # stop ends the restarting: nothing comes back.
        self.sh("restart", "systemctl stop embed.service")
        time.sleep(1.5)
        after = self.unit("restart", "embed.service")
        self.assertFalse(after["main_alive"])
        self.assertEqual(after["gpu_processes"], [])
        self.assertEqual(after["state"], "inactive")
        self.assertEqual(self.sh("restart", "systemctl is-active embed.service || true"),
                         "inactive\n")

    @needs_cgroups
    def test_start_limit_stops_the_restarting(self):
        setup = HostSetup(self.fleet, self.fleet.host("restart"))
        # The burst's window is 60 s, not systemd's 10: at a load of 30 the
        # four kills and restarts below took past 10 s once.
        setup.restarting_service("burst.service", gpus="6", mib=1024, restart_sec=0.1,
                                 start_limit_interval_s=60)
        for _ in range(4):
            main = self.unit("restart", "burst.service")["main_pid"]
            self.sh("restart", f"kill -KILL {main}")
            self.assertTrue(wait_until(lambda: (lambda u: u["main_alive"] and u[
                "main_pid"] != main)(self.unit("restart", "burst.service")), timeout=10))
        self.sh("restart", f"kill -KILL {self.unit('restart', 'burst.service')['main_pid']}")
        failed = wait_until(lambda: (lambda u: u["state"] == "failed" and u)(
            self.unit("restart", "burst.service")), timeout=10)
        self.assertTrue(failed)
        self.assertEqual((failed["restarts"], failed["result"]), (4, "start-limit-hit"))
        self.assertEqual(self.sh("restart", "systemctl is-active burst.service || true"),
                         "failed\n")

    # ---- protected daemons ----------------------------------------------------

    def test_every_daemon_is_root_owned_in_a_system_dir_with_its_pid_file(self):
        truth = self.truth["daemons"]
        self.assertEqual(set(truth["daemons"]), set(DAEMONS))
        self.assertEqual({p["name"] for p in truth["protected"]}, set(DAEMONS))
        self.assertEqual(truth["protected_missing"], [])
        self.assertEqual(len(truth["gpu_processes"]), 8)   # only the vLLM workers
        for name, d in truth["daemons"].items():
            path, owner, _, pidfile = DAEMONS[name]
            self.assertTrue(d["alive"], name)
            self.assertEqual(d["exe"], path)
            self.assertEqual(self.sh("daemons", f"readlink /proc/{d['pid']}/exe").strip(), path)
            self.assertEqual(self.sh("daemons", f"stat -c '%U %a' {path} "
                                                f"$(dirname {path})").split(),
                             ["root", "755", "root", "755"], name)
            devices = self.sh("daemons", f"for f in /proc/{d['pid']}/fd/*; do readlink $f; done")
            self.assertLessEqual({"/dev/nvidiactl", "/dev/nvidia-uvm"} |
                                 {f"/dev/nvidia{k}" for k in range(8)}, set(devices.split()))
            self.assertEqual(d["pidfile"], pidfile)
            if pidfile:
                self.assertEqual(d["pidfile_pid"], d["pid"], name)
                self.assertEqual(self.sh("daemons", f"stat -L -c '%U %a' {pidfile} "
                                                    f"$(dirname {pidfile})").split(),
                                 ["root", "644", "root", "755"], name)
            if CGROUPS:
                where = self.cgroup_of("daemons", d["pid"])
                if owner.startswith("pod:"):
                    self.assertRegex(where, r"^/kubepods\.slice/kubepods-besteffort\.slice/"
                                            r"kubepods-besteffort-pod[0-9a-f_]{36}\.slice/"
                                            r"cri-containerd-[0-9a-f]{64}\.scope$")
                else:
                    self.assertEqual(where, f"/system.slice/{owner}", name)
        units = self.sh("daemons", "systemctl list-units --no-legend --plain 'nvidia*'")
        for unit in ("nvidia-persistenced.service", "nvidia-fabricmanager.service",
                     "nvidia-dcgm.service", "nvidia-imex.service", "nvidia-gridd.service"):
            self.assertIn(unit, units)
        # Nothing but the daemons and the vLLM engine holds memory.
        self.assertTrue(all(g["memory_used_mib"] == 96844 for g in truth["gpus"]))

    def test_operator_agents_run_from_their_own_container_roots(self):
        truth = self.truth["operator"]
        self.assertEqual({p["name"] for p in truth["protected"]}, set(DAEMONS))
        self.assertEqual(len(truth["gpu_processes"]), 8)
        pods = [n for n, spec in DAEMONS.items() if spec[1].startswith("pod:")]
        self.assertIn("nvidia-device-plugin", pods)
        for name in pods:
            d = truth["daemons"][name]
            pid, path = d["pid"], DAEMONS[name][0]
            self.assertTrue(d["alive"], name)
            out = self.sh("operator", f"readlink /proc/{pid}/exe /proc/{pid}/root; "
                                      f"stat -L -c '%U %a' /proc/{pid}/root{path}; "
                                      f"test -e {path} && echo host-has-it || echo host-lacks-it; "
                                      f"for f in /proc/{pid}/fd/*; do readlink $f; done")
            exe, root, owner, host_copy, *fds = out.split("\n")
            self.assertEqual((exe, root, owner, host_copy),
                             (path, "/", "root 755", "host-lacks-it"), name)
            self.assertIn("/dev/nvidia7", fds)
        # The driver-stack daemons still run from the host's own files.
        self.assertEqual(self.sh("operator", "test -x /usr/bin/nvidia-persistenced && echo ok"),
                         "ok\n")

    def test_persistenced_at_an_unusual_path_writes_its_pid_file(self):
        d = self.truth["elsewhere"]["daemons"]["nvidia-persistenced"]
        self.assertEqual(d["exe"], "/opt/nvidia/driver/bin/nvidia-persistenced")
        self.assertTrue(d["alive"])
        self.assertEqual(d["pidfile_pid"], d["pid"])
        self.assertEqual(self.sh("elsewhere", "cat /var/run/nvidia-persistenced/"
                                              "nvidia-persistenced.pid").strip(), str(d["pid"]))
        self.assertEqual([p["name"] for p in self.truth["elsewhere"]["protected"]],
                         ["nvidia-persistenced"])

    def test_impostors_are_jobs_named_like_daemons(self):
        truth = self.truth["impostors"]
        self.assertEqual([i["exe"] for i in truth["impostors"]], [p for p, *_ in IMPOSTORS])
        holders = {p["pid"]: p for p in truth["gpu_processes"]}
        for imp, (path, user, mode, gpu, mib) in zip(truth["impostors"], IMPOSTORS):
            self.assertTrue(imp["alive"], path)
            self.assertIn(imp["pid"], holders)           # a job, not a protected daemon
            self.assertEqual(holders[imp["pid"]]["charged_gpus"], [int(gpu)])
            self.assertEqual(holders[imp["pid"]]["mib"], mib)
            self.assertEqual(self.sh("impostors", f"readlink /proc/{imp['pid']}/exe").strip(),
                             path)
            self.assertEqual(self.sh("impostors", f"stat -L -c '%U %a' /proc/{imp['pid']}/exe")
                             .split(), [user, f"{mode:o}"])
        self.assertEqual([p["name"] for p in truth["protected"]], ["nvidia-persistenced"])
        # The /tmp one has a private /tmp: the machine's /tmp never gets it.
        self.assertFalse(os.path.exists("/tmp/nvidia-persistenced"))

    # ---- PID namespaces -------------------------------------------------------

    def test_every_host_marks_its_pid_namespace(self):
        for name in self.fleet.hosts:
            out = self.sh(name, "readlink /proc/self/ns/pid; cat /etc/fleetreap/host-pid-namespace;"
                                " stat -c '%U %a' /etc/fleetreap /etc/fleetreap/host-pid-namespace")
            ns, marker, *modes = out.split("\n")
            self.assertRegex(ns, r"^pid:\[\d+\]$")
            self.assertNotEqual(ns, "pid:[4026531836]")
            self.assertEqual(marker, ns)
            self.assertEqual(modes[:2], ["root 755", "root 644"])
        # /etc is per host: a write in one host is not seen in another.
        self.sh("plain", "echo x > /etc/fleetreap/scratch")
        self.assertEqual(self.sh("slurm", "ls /etc/fleetreap"), "host-pid-namespace\n")
        self.assertFalse(os.path.exists("/etc/fleetreap/scratch"))
        self.sh("plain", "rm /etc/fleetreap/scratch")

    def test_nested_pid_namespace_stands_for_a_pod_without_host_pid(self):
        out = self.fleet.exec_nested_pidns(
            "plain", "readlink /proc/self/ns/pid; cat /etc/fleetreap/host-pid-namespace; "
                     "echo $$; ps -e --no-headers | wc -l; "
                     "nvidia-smi --query-compute-apps=pid --format=csv,noheader")
        self.assertEqual(out.returncode, 0, out.stderr)
        ns, marker, me, count, *apps = out.stdout.split()
        self.assertNotEqual(ns, marker)
        self.assertEqual(me, "1")
        self.assertLess(int(count), 5)
        # nvidia-smi still names the host's PIDs, as the real driver does.
        host_pids = sorted(p["pid"] for p in self.truth["plain"]["gpu_processes"])
        self.assertEqual(sorted(int(a) for a in apps), host_pids)
        if CGROUPS:
            self.assertRegex(self.fleet.exec_nested_pidns("plain", "tail -1 /proc/self/cgroup")
                             .stdout, r"^0::/kubepods\.slice/")


class TearDownCgroupsTest(unittest.TestCase):
    @needs_cgroups
    def test_down_removes_every_cgroup_it_made(self):
        tmp = scratch_dir(prefix="simshapes-down-")
        fleet = Fleet(os.path.join(tmp, "fleet"))
        try:
            fleet.up([HostSpec("a", scenario="slurm_shared", bystanders=10),
                      HostSpec("b", scenario="restart_unit", bystanders=10)])
            root = fleet.cgroup
            self.assertTrue(root.startswith(os.path.join(CGROUPS_WHY, "net")))
            made = [d for d, _, _ in os.walk(root)]
            self.assertIn(os.path.join(root, "a", "system.slice", "slurmstepd.scope", "job_42",
                                       "step_0", "user", "task_0"), made)
        finally:
            fleet.down()
        self.assertFalse(os.path.exists(root))

    @needs_cgroups
    def test_cleanup_of_a_persistent_fleet_removes_its_cgroups(self):
        # As 'scripts/fleet up' leaves it: hosts outlive the process that
        # started them; 'down' (Fleet.cleanup) ends them and their cgroups.
        tmp = scratch_dir(prefix="simshapes-persist-")
        workdir = os.path.join(tmp, "fleet")
        script = os.path.join(SOURCE, "scripts", "fleet")
        env = dict(os.environ, FLEETREAP_SIM_BYSTANDERS="5")
        up = subprocess.run([sys.executable, script, "up", "--dir", workdir, "--hosts", "1",
                             "--scenario", "container_shapes"], env=env, capture_output=True,
                            text=True, timeout=120)
        self.assertEqual(up.returncode, 0, up.stderr)
        root = Fleet.attach(workdir).cgroup
        self.assertTrue(os.path.isdir(os.path.join(root, "gpu01", "kubepods.slice")))
        self.assertEqual(Fleet.cleanup(workdir), 1)
        self.assertFalse(os.path.exists(root))

if __name__ == "__main__":
    unittest.main(verbosity=2)
