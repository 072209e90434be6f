"""Hostile hosts end to end: the real fleetreap binary against simulated hosts
whose processes, names and files try to confuse it, checked against the
fleet's ground truth (the machine's /proc, not fleetreap's report).

  container_job       a job in its own mount namespace with its own
                      /dev/nvidia3 (another inode: fuser on the host's file
                      misses it); must end clean, the job gone.
  hostile_names       workers whose comm and argv hold newlines, "@@end",
                      "@@session", backslash escapes, quotes and a whole scan
                      record; must end clean, every worker gone.
  forged_shm          ghost memory on GPU 2 and /dev/shm names that hold
                      protocol text and nvidia-smi rows at 0 MiB; must end
                      dirty (exit 1), and no file outside the plan removed.
  nvsmi_only_holder   a PID that nvidia-smi charges but that holds no device
                      descriptor or mapping; found, never signalled, dirty.
  recovery_action     the driver asks for a reset of GPU 4 (0 MiB used): the
                      host is empty but not_ready, the GPU named needs_recovery
                      and the finding says to reset it.
  unknown_error       nvidia-smi prints only "...GPU 0000:19:00.0: Unknown
                      Error" and exits 15, a job busy behind it: the ladder
                      stops after the inspect, nothing is signalled, the GPU
                      is named by its bus id with nvidia-smi's own words.
  property            ~50 random byte strings as a holder's comm and argv:
                      the dry run's JSON names each holder with its pid, comm
                      and cmdline exactly as /proc holds them (comm: control
                      characters as '?'; cmdline: NULs and control
                      characters as spaces, trailing spaces dropped;
                      invalid UTF-8 replaced by U+FFFD, as docs/report.md
                      and the JSON writer say).
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import random
import unittest

from fleet_case import FleetCase, by_name, live_processes, run_json, scratch_fleet
import ground_truth
import host_setup
import procfs
import scenarios
from simfleet import HostSpec

HOSTS = {
    "gpu01": "container_job",
    "gpu02": "hostile_names",
    "gpu03": "forged_shm",
    "gpu04": "nvsmi_only_holder",
    "gpu05": "recovery_action",
    "gpu06": "unknown_error",
}


def run_fleetreap(fleet, *extra, playbook="vllm.yaml", command_timeout="8s"):
    code, report = run_json(fleet, *extra, playbook=playbook, command_timeout=command_timeout,
                            errors="replace")
    return code, by_name(report)


class HostileHostsTest(FleetCase):
    PREFIX = "hostile-"
    SPECS = [HostSpec(name, scenario=s) for name, s in HOSTS.items()]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = cls.fleet.ground_truth()
        cls.procs_before = live_processes(cls.fleet)
        cls.exit, cls.report = run_fleetreap(cls.fleet)
        cls.after = cls.fleet.ground_truth()
        cls.procs_after = live_processes(cls.fleet)

    def assert_clean(self, name):
        r = self.report.get(name, {})
        truth = self.after[name]
        said = f"fleetreap: {r.get('status')} ({r.get('summary')}; {r.get('error_message')})"
        left = [(p["pid"], p["comm"], p["charged_gpus"]) for p in truth["gpu_processes"]]
        self.assertTrue(truth["clean"], f"left on the host: {left}; {said}")
        self.assertEqual(r.get("status"), "clean", said)

    def assert_nothing_else_touched(self, name):
        planned = {p["pid"] for p in self.before[name]["gpu_processes"]}
        vanished = {(pid, exe) for pid, exe in self.procs_before[name] - self.procs_after[name]
                    if pid not in planned}
        self.assertEqual(vanished, set(), name)
        self.assertEqual(self.after[name]["bystanders"], self.before[name]["bystanders"])
        self.assertEqual(self.after[name]["protected_missing"], [])

    def test_recovery_action_leaves_the_host_not_ready_and_names_it(self):
        r = self.report["gpu05"]
        self.assertEqual(r["status"], "not_ready", r.get("error_message"))
        gpu4 = [g for g in r["gpus_after"] if g["index"] == 4]
        self.assertEqual([(g["state"], g["recovery_action"]) for g in gpu4],
                         [("needs_recovery", "Reset")])
        self.assertEqual([(f["reason"], f["gpu"], f["next_step"])
                          for f in r["readiness"]["findings"]],
                         [("recovery_action_reset", 4, "reset the GPU before the rollout")])
        self.assertIn("GPU 4: the driver asks for recovery action Reset", r["summary"])
        self.assert_nothing_else_touched("gpu05")

    def test_unknown_error_stops_the_ladder_before_any_signal(self):
        r = self.report["gpu06"]
        self.assertEqual(r["status"], "dirty", r.get("error_message"))
        lost = [g for g in r["gpus_after"] if g["state"] == "lost"]
        self.assertEqual([g["bus_id"] for g in lost], ["0000:19:00.0"])
        self.assertIn("Unknown Error", lost[0]["detail"])
        self.assertIn("Unable to determine the device handle for GPU 0000:19:00.0: Unknown Error",
                      r["nvidia_smi_error"])
        self.assertEqual((r["term_sent"], r["kill_sent"]), (0, 0))
        self.assertIn("nothing signalled", r["error_message"])
        # The job behind the broken GPU is left alone, like everything else.
        self.assertEqual(self.procs_after["gpu06"], self.procs_before["gpu06"])

    def test_container_job_ends_clean(self):
        job = self.fleet.hosts["gpu01"].containers
        self.assertEqual(len(job), 1)
        self.assertEqual(self.before["gpu01"]["gpus"][3]["memory_used_mib"], 40960)
        self.assert_clean("gpu01")
        self.assertEqual(self.after["gpu01"]["gpus"][3]["memory_used_mib"], 0)
        alive = {pid for pid, _ in self.procs_after["gpu01"]}
        self.assertNotIn(job[0], alive)
        self.assert_nothing_else_touched("gpu01")

    def test_hostile_names_end_clean(self):
        workers = {p["pid"] for p in self.before["gpu02"]["gpu_processes"]}
        self.assertEqual(len(workers), len(scenarios.HOSTILE_WORKERS))
        self.assert_clean("gpu02")
        alive = {pid for pid, _ in self.procs_after["gpu02"]}
        self.assertEqual(workers & alive, set())
        self.assert_nothing_else_touched("gpu02")

    def test_forged_shm_ends_dirty_and_removes_nothing_outside_the_plan(self):
        self.assertEqual(self.exit, 1, {n: (h["status"], h.get("error_message"))
                                        for n, h in self.report.items()})
        r = self.report["gpu03"]
        self.assertEqual(r["status"], "dirty", r.get("error_message"))
        # The ghost memory is still there (only a reset frees it): a clean
        # verdict would have been a lie.
        self.assertEqual(self.after["gpu03"]["ghost_gpus"], [2])
        states = {g["index"]: g["state"] for g in r["gpus_after"]}
        self.assertEqual(states.get(2), "ghost", r["gpus_after"])
        before = set(self.before["gpu03"]["shm_remaining"])
        after = set(self.after["gpu03"]["shm_remaining"])
        removed = before - after
        self.assertLessEqual(removed, set(self.before["gpu03"]["shm_must_remove"]))
        self.assertLessEqual(set(self.before["gpu03"]["shm_must_keep"]), after)
        # What the report says it removed is what really went.
        self.assertEqual(set(r.get("shm_removed", [])), removed)
        self.assert_nothing_else_touched("gpu03")

    def test_nvsmi_only_holder_is_never_signalled_and_the_host_dirty(self):
        # A PID nvidia-smi charges that holds no NVIDIA fd or mapping at the
        # kill is not signalled (every CUDA process holds the device files,
        # an H200's MPS client too): a dirty verdict rather than a guess.
        holder = self.before["gpu04"]["gpu_processes"]
        self.assertEqual([p["charged_gpus"] for p in holder], [[1]])
        self.assertEqual(holder[0]["gpus"], [])           # no device descriptor
        r = self.report["gpu04"]
        self.assertEqual(r["status"], "dirty", r)
        self.assertEqual(r["term_sent"] + r["kill_sent"], 0, r)
        self.assertTrue(any(n.startswith(f"pid {holder[0]['pid']} ") and "holds no NVIDIA device"
                            in n for n in r["notes"]), r["notes"])
        alive = {pid for pid, _ in self.procs_after["gpu04"]}
        self.assertIn(holder[0]["pid"], alive)
        self.assert_nothing_else_touched("gpu04")


def random_names(count=50, seed=20240611):
    """Byte strings (bytes 1..255, up to 64 long) rich in what breaks line
    protocols: newlines, '@@', backslashes, quotes, ':' and tabs."""
    rng = random.Random(seed)
    pieces = [b"\n", b"@@", b"@@end", b"@@session", b"\\", b"\\n", b"\\0", b"'", b'"',
              b":", b"\t", b" ", b"hold 1 ", b"proc ", b"end", b")", b"("]
    names = []
    for _ in range(count):
        length = rng.randint(1, 64)
        out = b""
        while len(out) < length:
            if rng.random() < 0.5:
                out += rng.choice(pieces)
            else:
                out += bytes([rng.randint(1, 255)])
        names.append(out[:length])
    return names


def render_comm(raw):
    """comm as the JSON shows it: control characters as '?'."""
    text = bytes(b if b >= 0x20 and b != 0x7f else ord("?") for b in raw)
    return text.decode("utf-8", errors="replace")


def render_cmdline(raw):
    """cmdline as the JSON shows it: NULs and control characters as spaces,
    trailing spaces dropped."""
    text = bytes(b if b >= 0x20 and b != 0x7f else 0x20 for b in raw).rstrip(b" ")
    return text.decode("utf-8", errors="replace")


class HolderNamesPropertyTest(unittest.TestCase):
    """Random comm/argv bytes: the dry run's holders match /proc exactly."""

    def test_random_names_are_reported_as_proc_holds_them(self):
        with scratch_fleet("hostileprop-", [HostSpec("gpu01", scenario="clean")]) as (_, fleet):
            h = host_setup.HostSetup(fleet, fleet.hosts["gpu01"])
            rng = random.Random(7)
            started = {}
            for name in random_names():
                cut = sorted(rng.sample(range(1, len(name)), min(2, len(name) - 1))) \
                    if len(name) > 2 and rng.random() < 0.5 else []
                argv = [name[a:b] for a, b in zip([0] + cut, cut + [len(name)])]
                pids = h.workload(gpus="0", mib=1024, detach=True, visible="0",
                                  argv=("python3", "prop.py"), worker_comm=name[:15],
                                  worker_argv=argv)
                started[pids[0]] = name
            truth = {p["pid"]: p for p in ground_truth.processes_by_host(fleet)["gpu01"]}
            code, report = run_fleetreap(fleet, "--dry-run", playbook="default.yaml",
                                         command_timeout="60s")
            self.assertIn(code, (0, 1), report)
            holders = {hd["pid"]: hd for hd in report["gpu01"].get("holders", [])}
            failures = []
            for pid, name in started.items():
                self.assertIn(pid, truth, "the sim lost a holder")
                outer = _outer_pid(fleet, pid)
                with open(f"/proc/{outer}/cmdline", "rb") as f:
                    cmdline = f.read()
                with open(f"/proc/{outer}/stat", "rb") as f:
                    stat = f.read()
                comm = stat[stat.index(b"(") + 1:stat.rindex(b")")]
                self.assertEqual(comm, name[:15])
                want = {"pid": pid, "name": render_comm(comm), "cmdline": render_cmdline(cmdline)}
                got = holders.get(pid)
                got = got and {k: got.get(k) for k in want}
                if got != want:
                    failures.append(f"{name!r}: want {want!r}, got {got!r}")
            self.assertEqual(failures, [], f"{len(failures)} of {len(started)} holders wrong "
                             f"(host status {report['gpu01'].get('status')}: "
                             f"{report['gpu01'].get('error_message')}):\n" +
                             "\n".join(failures[:10]))


def _outer_pid(fleet, inner):
    """The machine's PID of inner PID 'inner' of the fleet's one host."""
    ns = procfs.read_proc_link(next(iter(fleet.hosts.values())).init_pid, "ns/pid")
    for pid in procfs.list_pids():
        if procfs.read_proc_link(pid, "ns/pid") != ns:
            continue
        nspid = (procfs.status_fields(pid) or {}).get("NSpid", "").split()
        if nspid and int(nspid[-1]) == inner:
            return pid
    raise AssertionError(f"inner pid {inner} not found")


if __name__ == "__main__":
    unittest.main(verbosity=2)
