"""Every flag the README, docs/ and contrib/ name exists in the binary.

Reads README.md, docs/*.md and every text file under contrib/, takes each
`--flag` token, and checks that `fleetreap --help`, `fleetreap merge
--help` or `fleetreap sweep --help` prints it. In a command line that starts with fleetreap (a line of
a fenced block, an inline code span, or a line of a contrib script), every
short flag (`-n`, `-vv`) must be one the help prints too. Flags of other
tools are in ALLOWED below, each under its tool; nothing else is excused.

Usage: docs_flags_test.py FLEETREAP_BINARY  (CTest: docs.flags, label unit)
"""

import os
import re
import shlex
import subprocess
import sys
import unittest

SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("FLEETREAP_BIN", os.path.join(SOURCE, "build", "fleetreap"))

# Flags that the pages name for other programs, by program. A flag is
# excused here only because a page shows it on that program's command line
# (or in its configuration), never because fleetreap lacks it.
ALLOWED = {
    "nvidia-smi: the queries and the reset fleetreap runs on a host": {
        "--query-gpu", "--query-compute-apps", "--format", "--gpu-reset"},
    "stat --printf, find -printf (host-protocol.md: the tools a host needs)": {"--printf"},
    "nv-hostengine --pid, --service-account; nvlsm --pid_file (protected-daemons.md)": {
        "--pid", "--service-account", "--pid_file"},
    "Slurm: sbatch, srun, sinfo (slurm.md, contrib/slurm)": {
        "--partition", "--nodes", "--ntasks-per-node", "--noheader", "--exclusive",
        "--job-name", "--time", "--kill-on-bad-exit", "--label", "--distribution"},
    "the Slurm epilog's own --prolog mode (contrib/slurm/fleetreap-epilog)": {"--prolog"},
    "kubectl: drain, scale, wait, rollout status, apply (contrib/k8s)": {
        "--ignore-daemonsets", "--delete-emptydir-data", "--replicas", "--for", "--timeout",
        "--validate"},
    "apt-get --no-install-recommends (contrib/k8s/Dockerfile)": {"--no-install-recommends"},
    "ansible-inventory --list, --host; a dynamic inventory script's --list, --host": {
        "--list", "--host"},
    "the inference jobs' own flags, quoted in report examples (vLLM, secrets to redact)": {
        "--api-key", "--client-secret", "--db-password", "--hf-token", "--tokenizer", "--model",
        "--tensor-parallel-size"},
    "cmake and ctest: --build, --target, --install, --prefix, --test-dir": {
        "--build", "--target", "--install", "--prefix", "--test-dir", "--output-on-failure"},
    "GoogleTest: --gtest_filter (report.md, regenerating the golden files)": {"--gtest_filter"},
    "scripts/fleet: up, down (simulated-fleet.md, development.md, benchmarks.md)": {
        "--dir", "--demo", "--scenario", "--all", "--stale"},
    "bench/*.py (benchmarks.md, scale.md)": {"--quick", "--parts", "--incident-shape", "--scenarios",
                                            "--runs", "--before", "--extra", "--fleetreap",
                                            "--peers", "--replay-sshd", "--floor",
                                            "--html-metrics"},
    "systemctl enable --now (sweep.md, contrib/systemd)": {"--now"},
    "unshare --pid --mount-proc (benchmarks.md: the process budget test's PID namespace)": {
        "--pid", "--mount-proc"},
    "debootstrap --variant=minbase (development.md: the demo tried from nothing)": {"--variant"},
}
ALLOWED_FLAGS = set().union(*ALLOWED.values())

LONG = re.compile(r"(?<![\w/.-])--([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)(?![\w])")
FENCE = re.compile(r"^\s*```")


def help_text(*args):
    proc = subprocess.run([BIN, *args, "--help"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise AssertionError(f"{BIN} {' '.join(args)} --help exited {proc.returncode}")
    return proc.stdout + proc.stderr


def help_flags():
    """(long flags, short flags) that the three help texts print."""
    text = help_text() + help_text("merge") + help_text("sweep")
    longs = {"--" + m for m in LONG.findall(text)}
    shorts = set()
    for line in text.splitlines():
        if re.match(r"^\s+-", line):
            shorts.update(re.findall(r"(?<![\w-])(-[a-zA-Z])(?=[\s,\[]|$)", line))
    return longs, shorts


def pages():
    """[(relative path, text)] of the README, docs/*.md and contrib/**."""
    found = [os.path.join(SOURCE, "README.md")]
    docs = os.path.join(SOURCE, "docs")
    found += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    for root, dirs, files in os.walk(os.path.join(SOURCE, "contrib")):
        dirs.sort()
        found += [os.path.join(root, n) for n in sorted(files)]
    out = []
    for path in found:
        with open(path, encoding="utf-8", errors="replace") as f:
            out.append((os.path.relpath(path, SOURCE), f.read()))
    return out


def command_lines(text):
    """(line number, command) of each fleetreap command line in the text:
    fenced lines and inline code spans that start with fleetreap (after an
    optional '$ '), and script lines whose first word is fleetreap or
    "$bin"/"$FLEETREAP_BIN"-style variables are not taken (their flags are
    long ones, checked anyway)."""
    for number, line in enumerate(text.splitlines(), 1):
        candidates = [line.strip()] + re.findall(r"`([^`]+)`", line)
        for c in candidates:
            c = c.strip()
            if c.startswith("$ "):
                c = c[2:]
            if re.match(r"^(\S*/)?fleetreap(\s|$)", c):
                yield number, c


def short_flags(command):
    """The single-dash tokens of a command line, up to a comment or pipe."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    flags = []
    for w in words:
        if w in ("|", "&&", ";", "||", ">", "2>"):
            break
        if re.fullmatch(r"-[a-zA-Z]+", w):
            flags.append(w)
    return flags


class DocsFlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.longs, cls.shorts = help_flags()

    def test_help_lists_flags(self):
        self.assertIn("--hosts", self.longs)
        self.assertIn("--expect", self.longs)   # from merge --help
        self.assertIn("-n", self.shorts)

    def test_every_long_flag_exists(self):
        unknown = []
        for path, text in pages():
            for number, line in enumerate(text.splitlines(), 1):
                for name in LONG.findall(line):
                    flag = "--" + name
                    if flag not in self.longs and flag not in ALLOWED_FLAGS:
                        unknown.append(f"{path}:{number}: {flag}")
        self.assertEqual(unknown, [], "flags that neither --help prints nor ALLOWED excuses:\n"
                         + "\n".join(unknown))

    def test_short_flags_of_fleetreap_commands_exist(self):
        unknown = []
        for path, text in pages():
            for number, command in command_lines(text):
                for flag in short_flags(command):
                    if flag in self.shorts or re.fullmatch(r"-v+", flag):
                        continue
                    unknown.append(f"{path}:{number}: {flag} in {command!r}")
        self.assertEqual(unknown, [], "short flags that --help does not print:\n"
                         + "\n".join(unknown))


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BIN = sys.argv.pop(1)
    unittest.main()
