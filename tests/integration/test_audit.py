"""The audit line on each host, end to end on the simulated fleet: every
action that changes a host (a unit stopped, a signal sent, a /dev/shm file
removed) leaves one line, tag fleetreap, in that host's log (the sim's
devlog writes each host's /dev/log to HOSTDIR/syslog), naming the run id
that the report carries, the PID and start time that were signalled; a
hostile exe path or /dev/shm name cannot forge a line or a field; a host
without logger still ends clean, with a note; --local inside a host logs too.
Needs root and the built sim tools (FLEETREAP_SIM_BIN_DIR, FLEETREAP_BIN).
"""

import os
import re
import shlex
import unittest

from fleet_case import FleetCase, by_name, playbook_path, run_json, run_local
from scenario_registry import VLLM_ARGV, scenario
from simfleet import HostSpec

FORGED = "\nrun=forged action=kill pid=1"
EVIL_EXE = "/opt/evil/python3" + FORGED
SHM_NAMES = ["nccl-stale", "nccl-x" + FORGED]
RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")
SAFE = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,:@+/-")


def audit_value(text):
    """The encoding of docs/audit.md (AuditValue), for short values."""
    data = text.encode() if isinstance(text, str) else text
    if not data:
        return "-"
    return "".join(chr(b) if b in SAFE else "%%%02x" % b for b in data)


@scenario
def audit_hostile(h):
    """Two orphaned workers whose exe path, renamed once they run, holds a
    newline and a forged audit line, and /dev/shm leftovers, one named so."""
    h.daemon("nvidia-persistenced")
    h.fleet.exec(h.name, "mkdir -p /opt/evil && cp /usr/local/bin/gpuload /opt/evil/python3",
                 check=True)
    h.workload(gpus="0-1", mib=30000, detach=True, exe="/opt/evil/python3", argv=VLLM_ARGV)
    h.fleet.exec(h.name, "mv /opt/evil/python3 " + shlex.quote(EVIL_EXE), check=True)
    for name in SHM_NAMES:
        h.shm(name)


# Run by the fake nvidia-smi right after it answered the scan's apps query:
# the charged job dies, its PID goes to a new process of another user (the
# kernel hands out ns_last_pid + 1 next), and the driver no longer charges
# it. The scan then describes the newcomer under the charged PID.
REUSE_HOOK = """J=$(cat /run/fakegpu/charged_job)
kill -KILL "$J"
i=0; while [ -e /proc/"$J" ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
: > /run/fakegpu/charged
echo $((J - 1)) > /proc/sys/kernel/ns_last_pid
setsid setpriv --reuid=1001 --regid=1001 --clear-groups sleep 600 </dev/null >/dev/null 2>&1 &
echo $! > /run/fakegpu/victim"""


@scenario
def reused_charged_pid(h):
    """A job that nvidia-smi charges 1000 MiB on GPU 0 to, holding no device
    file, whose PID is reused by researcher's sleep while the scan runs."""
    h.daemon("nvidia-persistenced")
    job = h.sleeper(user="gpuops")
    h.charge(job, 0, 1000)
    with open(os.path.join(h.host.state, "charged_job"), "w") as f:
        f.write(f"{job}\n")
    h.on_apps_query(REUSE_HOOK)


def log_lines(fleet, host):
    """The fleetreap lines of the host's log, each as {key: value}, in order;
    a line that is not space-separated key=value fails the test."""
    path = os.path.join(fleet.hosts[host].dir, "syslog")
    if not os.path.exists(path):
        return []
    lines = []
    with open(path, "rb") as f:
        for raw in f.read().decode("latin-1").splitlines():
            if " fleetreap: " not in raw:
                continue
            message = raw.split(" fleetreap: ", 1)[1]
            fields = [w.split("=", 1) for w in message.split(" ")]
            assert all(len(f) == 2 for f in fields), raw
            lines.append(dict(fields))
    return lines


class AuditTest(FleetCase):
    PREFIX = "audittest-"
    SPECS = [HostSpec("audit01", scenario="vllm_incident"),
             HostSpec("audit02", scenario="audit_hostile"),
             HostSpec("audit03", scenario="vllm_incident"),
             HostSpec("audit04", scenario="vllm_incident")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # audit03 has no logger at all (the removal lands in its /usr/bin
        # overlay, never in this machine's).
        cls.fleet.exec("audit03", "rm -f /usr/bin/logger /bin/logger", check=True)
        cls.rc, cls.report = run_json(cls.fleet, "--limit", "audit0[1-3]", playbook="vllm.yaml")
        cls.hosts = by_name(cls.report)

    def run_lines(self, host):
        return [l for l in log_lines(self.fleet, host) if l.get("run") == self.report["run_id"]]

    def test_the_report_names_the_run(self):
        self.assertEqual(self.rc, 0, self.report)
        self.assertRegex(self.report["run_id"], RUN_ID)
        for name in ("audit01", "audit02", "audit03"):
            self.assertEqual(self.hosts[name]["status"], "clean", self.hosts[name])

    def test_one_line_per_action_with_the_pid_and_start_time(self):
        host = self.hosts["audit01"]
        lines = self.run_lines("audit01")
        for line in lines:
            self.assertEqual(line["operator"], audit_value(os.environ.get("SUDO_USER") and
                                                           os.environ["SUDO_USER"] + " via sudo"
                                                           or "root"))
            self.assertNotEqual(line["controller"], "-")
        stops = [l for l in lines if l["action"] == "stop_unit"]
        self.assertEqual([(l["unit"], l["rc"]) for l in stops], [("vllm.service", "0")])
        signals = [l for l in lines if l["action"] in ("term", "kill")]
        self.assertEqual(len([l for l in signals if l["action"] == "term"]), host["term_sent"])
        self.assertEqual(len([l for l in signals if l["action"] == "kill"]), host["kill_sent"])
        holders = {h["pid"]: h for h in host["holders"]}
        self.assertEqual(len(signals), host["term_sent"] + host["kill_sent"])
        for line in signals:
            holder = holders[int(line["pid"])]
            self.assertEqual(int(line["start"]), holder["start_time"])
            self.assertEqual(line["exe"], audit_value(holder["exe"]))
            self.assertEqual(line["user"], audit_value(holder["user"]))
            self.assertEqual(line["gpus"], ",".join(str(g) for g in sorted(set(holder["gpus"]))))
        self.assertEqual(len(lines), len(stops) + len(signals))

    def test_hostile_exe_and_shm_names_cannot_forge_a_line(self):
        host = self.hosts["audit02"]
        all_lines = log_lines(self.fleet, "audit02")
        self.assertTrue(all_lines)
        self.assertTrue(all(l["run"] == self.report["run_id"] for l in all_lines), all_lines)
        signals = [l for l in all_lines if l["action"] in ("term", "kill")]
        self.assertEqual(len(signals), host["term_sent"] + host["kill_sent"])
        self.assertGreaterEqual(len(signals), 2)
        evil = [l for l in signals if "evil" in l["exe"]]
        self.assertTrue(evil, signals)
        holders = {h["pid"]: h for h in host["holders"]}
        for line in evil:
            # The scan already turned the newline into '?'; the rest is encoded.
            exe = holders[int(line["pid"])]["exe"]
            self.assertTrue(exe.startswith("/opt/evil/python3"), exe)
            self.assertEqual(line["exe"], audit_value(exe))
            self.assertIn("run%3dforged%20action%3dkill", line["exe"])
            self.assertEqual(set(line), {"run", "controller", "operator", "action", "pid",
                                         "start", "exe", "user", "owner", "gpus"})
        removed = [l["file"] for l in all_lines if l["action"] == "shm_remove"]
        self.assertEqual(sorted(removed), sorted(audit_value("/dev/shm/" + n) for n in SHM_NAMES))
        self.assertEqual(sorted(host["shm_removed"]), sorted(SHM_NAMES))
        self.assertEqual(len(all_lines), len(signals) + len(removed))

    def test_a_host_without_logger_ends_clean_with_a_note(self):
        host = self.hosts["audit03"]
        self.assertEqual(host["status"], "clean", host)
        self.assertGreater(host["term_sent"], 0)
        self.assertEqual(len(host["notes"]), 1, host["notes"])
        self.assertRegex(host["notes"][0], r"^audit: \d+ lines not written to the host's log "
                                           r"\(no logger\)$")
        self.assertEqual(self.run_lines("audit03"), [])
        for name in ("audit01", "audit02"):
            self.assertEqual(self.hosts[name]["notes"], [])

    def test_local_inside_a_host_logs_too(self):
        rc, report = run_local(self.fleet, "audit04", "--playbook", playbook_path("vllm.yaml"))
        host = report["hosts"][0]
        self.assertEqual(rc, 0, host.get("error_message"))
        self.assertRegex(report["run_id"], RUN_ID)
        self.assertNotEqual(report["run_id"], self.report["run_id"])
        lines = [l for l in log_lines(self.fleet, "audit04") if l["run"] == report["run_id"]]
        self.assertEqual(len([l for l in lines if l["action"] == "term"]), host["term_sent"])
        self.assertEqual(len([l for l in lines if l["action"] == "stop_unit"]), 1)
        self.assertEqual(host["notes"], [])


class KillTimeTest(FleetCase):
    """The signal step's kill-time checks against a PID reused during the
    scan: the newcomer was born after the scan began, so it is never
    signalled (today's start-time check alone passes it: it is the process
    the scan described)."""
    PREFIX = "killtime-"
    SPECS = [HostSpec("reuse01", scenario="reused_charged_pid")]

    def test_a_pid_reused_during_the_scan_is_never_signalled(self):
        state = self.fleet.hosts["reuse01"].state
        job = int(open(os.path.join(state, "charged_job")).read())
        rc, report = run_json(self.fleet, playbook="vllm.yaml")
        victim = int(open(os.path.join(state, "victim")).read())
        if victim != job:
            self.skipTest(f"the kernel gave PID {job} to another process ({victim} for the sleep)")
        host = report["hosts"][0]
        self.assertEqual(host["term_sent"] + host["kill_sent"], 0, host)
        stat = open(f"/proc/{self.fleet.hosts['reuse01'].init_pid}/root/proc/{victim}/stat").read()
        self.assertNotIn(") Z ", stat)  # the newcomer lives
        self.assertEqual([l for l in log_lines(self.fleet, "reuse01")
                          if l["action"] in ("term", "kill")], [])
        self.assertEqual(host["status"], "clean", host)


if __name__ == "__main__":
    unittest.main()
