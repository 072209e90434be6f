"""Every example in README.md, docs/*.md and contrib/ci runs as written.

The convention (docs/development.md, "The documentation is tested"):

* An example is a command line in a fenced block tagged `console` (the
  lines after `$ `) or `sh`, whose command, after any leading VAR=value
  assignments, is fleetreap (or a path ending in /fleetreap), or the CI gate
  (`sh contrib/ci/fleetreap-gate.sh`); a trailing backslash continues it. A
  fenced block holding such a line must be tagged console or sh.
* Its expected exit code is the `exit N` of the line's trailing comment
  (`# exit 1`), else, in a console block, the `(exit N)` that ends the
  verdict line of its output, else 0.
* `<!-- example: not-run: REASON -->` on the line before a block skips it
  (any block: a diagram too), with a reason. An example with --local must be marked so: it would clean the
  machine it runs on.
* A page with examples declares their fleet once, on a line of its own:
  `<!-- example-fleet: gpu01=clean gpu02=vllm_incident; groups: h200=gpu01,gpu02 -->`
  (scenarios of tests/sim/scenarios.py), or `<!-- example-fleet: none -->`
  when its examples contact no host. The page's examples run in order
  against that fleet, in one scratch directory where the repository's
  inventory/, playbooks/ and contrib/ are visible, and the fleet's inventory
  is written at each path an example's --hosts names that is not a file of
  the repository. Every command runs in a mount namespace of its own where
  root's home is a scratch home whose ~/.ssh holds the fleet's key
  (id_ed25519) and host keys (known_hosts), as a user's would; no ssh-agent;
  FLEETREAP_INVENTORY, FLEETREAP_SSH_KEY and FLEETREAP_KNOWN_HOSTS name the
  fleet's files, and `fleetreap` on PATH is the built binary.
* contrib/ci: each `e.g. "FLAGS"` example of FLEETREAP_ARGS runs through the
  gate against a fleet of clean hosts (groups h200, rack_b1), exit 0.

Needs root (the simulated fleet, unshare and mount), the built fleetreap
(FLEETREAP_BIN) and the simulator's tools (FLEETREAP_SIM_BIN_DIR).
"""

import os
import pwd
import re
import shlex
import shutil
import subprocess
import unittest

from fleet_case import BIN, SOURCE
from simfleet import Fleet, HostSpec, scratch_dir

TAGGED = ("console", "sh")
FENCE = re.compile(r"^(\s*)```\s*([\w-]*)")
NOT_RUN = re.compile(r"^\s*<!--\s*example:\s*not-run:\s*(.*?)\s*-->\s*$")
NOT_RUN_BARE = re.compile(r"^\s*<!--\s*example:\s*not-run\s*:?\s*-->\s*$")
FLEET = re.compile(r"^<!--\s*example-fleet:\s*(.*?)\s*-->\s*$", re.M)
EXIT = re.compile(r"\s#\s.*\bexit\s+(\d+)\b")
VERDICT = re.compile(r"\(exit (\d+)\)\s*$")   # a verdict line in a console block's output
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
CI_ARGS = re.compile(r"""e\.g\.\s+"(--[^"]+)\"""")
SHARED = ("inventory", "playbooks", "contrib")   # visible in the examples' directory
# fleetreap finds ~ with getpwuid, so the examples' home is bound over this one.
HOME = pwd.getpwuid(os.getuid()).pw_dir
BYSTANDERS = 10   # fewer unrelated processes per host than the default: these are small fleets


def page_paths():
    paths = ["README.md"]
    paths += sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(SOURCE, "docs"))
                    if n.endswith(".md"))
    return paths


def read(path):
    with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
        return f.read()


def command_word(command):
    """The program a command line runs, after VAR=value assignments (and a
    leading `sh` for a script); "" when it cannot be split."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return ""
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    if len(words) >= 2 and words[0] == "sh":
        words.pop(0)
    return words[0] if words else ""


def is_example(command):
    word = command_word(command)
    return (word == "fleetreap" or word.endswith("/fleetreap")
            or word.endswith("contrib/ci/fleetreap-gate.sh"))


def looks_like_fleetreap(line):
    """A line of an untagged block that would be an example if tagged."""
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    return bool(line) and is_example(line.replace("\\\n", " "))


class Example:
    def __init__(self, page, line, command, output=()):
        self.page, self.line, self.command = page, line, command
        m = EXIT.search(command.splitlines()[-1])
        shown = [VERDICT.search(o) for o in output]
        shown = [v for v in shown if v]
        self.expected = int(m.group(1)) if m else int(shown[-1].group(1)) if shown else 0

    def where(self):
        return f"{self.page}:{self.line}"


def parse(page, text):
    """(fleet directive or None, [Example], [problem]) of a page."""
    examples, problems = [], []
    lines = text.splitlines()
    fleets = FLEET.findall(text)
    if len(fleets) > 1:
        problems.append(f"{page}: more than one example-fleet comment")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        tag, start = m.group(2), i
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        body = lines[start + 1:j]
        previous = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        skipped = NOT_RUN.search(previous)
        if NOT_RUN_BARE.search(previous) or (skipped and not skipped.group(1)):
            problems.append(f"{page}:{start + 1}: not-run without a reason")
        commands = []   # (line number, command text, output lines)
        k = 0
        while k < len(body):
            raw = body[k]
            text_line = raw.strip()
            if tag == "console":
                if not text_line.startswith("$ "):
                    k += 1
                    continue
                text_line = text_line[2:]
            number = start + 2 + k
            parts = [text_line]
            while parts[-1].endswith("\\") and k + 1 < len(body):
                k += 1
                parts.append(body[k].strip())
            k += 1
            output = []
            while tag == "console" and k < len(body) and not body[k].strip().startswith("$ "):
                output.append(body[k])
                k += 1
            commands.append((number, "\n".join(parts), output))
        if tag not in TAGGED and not skipped:
            for k, raw in enumerate(body):
                if looks_like_fleetreap(raw):
                    problems.append(f"{page}:{start + 2 + k}: a fleetreap command in a block "
                                    f"tagged {tag or '(none)'!r}: tag it console or sh, or "
                                    "make it not a command")
        elif not skipped:
            for number, command, output in commands:
                if not command or command.startswith("#") or not is_example(command):
                    continue
                if re.search(r"(^|\s)--local(\s|$)", command):
                    problems.append(f"{page}:{number}: --local example not marked not-run")
                    continue
                examples.append(Example(page, number, command, output))
        i = j + 1
    if examples and not fleets:
        problems.append(f"{page}: has examples but no <!-- example-fleet: ... --> comment")
    return (fleets[0] if fleets else None), examples, problems


def parse_fleet(directive):
    """([HostSpec], {group: [host]}) of an example-fleet directive; "none"
    for a page whose examples contact no host."""
    if directive.strip() == "none":
        return [], {}
    hosts_part, _, groups_part = directive.partition(";")
    specs = []
    for item in hosts_part.split():
        name, _, scenario = item.partition("=")
        specs.append(HostSpec(name, scenario=scenario or "clean", bystanders=BYSTANDERS))
    groups = {}
    groups_part = groups_part.strip()
    if groups_part:
        if not groups_part.startswith("groups:"):
            raise ValueError(f"example-fleet: expected 'groups:' after ';', got {groups_part!r}")
        for item in groups_part[len("groups:"):].split():
            group, _, members = item.partition("=")
            groups[group] = [m for m in members.split(",") if m]
    return specs, groups


def inventory_text(fleet, groups):
    """The fleet's inventory as a user's would read: addresses and users, no
    key file (the key is ~/.ssh/id_ed25519), the directive's groups."""
    lines = ["all:", "  hosts:"]
    for h in fleet.hosts.values():
        lines += [f"    {h.name}:", f"      ansible_host: {h.address}",
                  f"      ansible_user: {h.spec.user}",
                  f"      fleetreap_expected_gpus: {h.spec.gpus}"]
        if h.spec.user != "root":
            lines.append("      ansible_become: true")
    if groups:
        lines.append("  children:")
        for group, members in groups.items():
            lines += [f"    {group}:", "      hosts:"]
            lines += [f"        {m}: {{}}" for m in members]
    return "\n".join(lines) + "\n"


def inventory_paths(examples):
    """The --hosts/-i paths the examples name that are not repository files."""
    paths = set()
    for ex in examples:
        try:
            words = shlex.split(ex.command, comments=True)
        except ValueError:
            continue
        for a, b in zip(words, words[1:]):
            if a in ("--hosts", "-i") and not b.startswith(("slurm:", "$")):
                paths.add(b)
        for w in words:
            if w.startswith("--hosts="):
                paths.add(w[len("--hosts="):])
    return sorted(p for p in paths
                  if not os.path.isabs(p) and not os.path.exists(os.path.join(SOURCE, p)))


class Workspace:
    """A fleet up for one page, and the directory, home and environment its
    examples run in."""

    def __init__(self, prefix, specs, groups, inventories):
        self.tmp = scratch_dir(prefix=prefix)
        self.fleet = Fleet(os.path.join(self.tmp, "fleet"))
        if specs:
            self.fleet.up(specs)
        else:   # no host: empty files where the fleet's would be
            os.makedirs(os.path.dirname(self.fleet.key))
            for path in (self.fleet.key, self.fleet.known_hosts):
                open(path, "w").close()
        try:
            self._prepare(groups, inventories)
        except BaseException:
            self.down()
            raise

    def _prepare(self, groups, inventories):
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.work)
        for name in SHARED:
            os.symlink(os.path.join(SOURCE, name), os.path.join(self.work, name))
        self.home = os.path.join(self.tmp, "home")
        ssh = os.path.join(self.home, ".ssh")
        os.makedirs(ssh, mode=0o700)
        shutil.copy(self.fleet.known_hosts, os.path.join(ssh, "known_hosts"))
        shutil.copy(self.fleet.key, os.path.join(ssh, "id_ed25519"))
        os.chmod(os.path.join(ssh, "id_ed25519"), 0o600)
        text = inventory_text(self.fleet, groups)
        for path in inventories:
            target = os.path.join(self.work, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write(text)
        secrets = os.path.join(self.tmp, "secrets")
        os.makedirs(secrets, mode=0o700)
        self.secrets = {}
        for var, name, content in (("FLEETREAP_INVENTORY", "inventory.yaml", text),
                                   ("FLEETREAP_SSH_KEY", "id_fleet", None),
                                   ("FLEETREAP_KNOWN_HOSTS", "known_hosts", None)):
            path = os.path.join(secrets, name)
            if content is None:
                shutil.copy(self.fleet.key if var == "FLEETREAP_SSH_KEY"
                            else self.fleet.known_hosts, path)
            else:
                with open(path, "w") as f:
                    f.write(content)
            self.secrets[var] = path
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        os.symlink(BIN, os.path.join(self.bin, "fleetreap"))

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FLEETREAP_") and k not in ("SSH_AUTH_SOCK", "NO_COLOR")}
        env["PATH"] = self.bin + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        env["HOME"] = HOME
        env.update(self.secrets)
        env.update(extra or {})
        return env

    def run(self, command, extra_env=None, timeout=300):
        """The command as written, by sh, with the user's home (getpwuid's:
        fleetreap reads ~/.ssh there, not $HOME) bound to ours in a mount
        namespace of its own; nothing outside that namespace sees it."""
        script = 'mount --bind "$1" "$2" || exit 99; cd "$3" || exit 99; exec sh -c "$0"'
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                command, self.home, HOME, self.work]
        return subprocess.run(argv, env=self.env(extra_env), capture_output=True, text=True,
                              timeout=timeout)

    def down(self):
        if self.fleet.hosts:
            self.fleet.down()


class ConventionTest(unittest.TestCase):
    """The pages follow the convention (no fleet needed)."""

    def test_pages_follow_the_convention(self):
        problems, count = [], 0
        for page in page_paths():
            directive, examples, found = parse(page, read(page))
            problems += found
            count += len(examples)
            if directive:
                try:
                    parse_fleet(directive)
                except ValueError as e:
                    problems.append(f"{page}: {e}")
        self.assertEqual(problems, [], "\n".join(problems))
        self.assertGreater(count, 5)

    def test_parser(self):
        text = "\n".join([
            "<!-- example-fleet: a=clean b=ghost_memory; groups: g=a,b -->",
            "```console", "$ fleetreap --hosts inv.yaml --dry-run", "output line",
            "$ fleetreap --hosts inv.yaml \\", "    --limit g   # exit 1", "```",
            "<!-- example: not-run: needs Slurm -->", "```sh", "fleetreap --hosts slurm:gpu",
            "```", "```sh", "X=1 sh contrib/ci/fleetreap-gate.sh  # exit 3", "ls", "```",
            "```", "fleetreap --local", "```",
            "```console", "$ fleetreap --hosts inv.yaml", "NOT READY: ... (exit 3)", "```"])
        directive, examples, problems = parse("p.md", text)
        self.assertEqual([(e.line, e.expected) for e in examples],
                         [(3, 0), (5, 1), (13, 3), (20, 3)])
        self.assertEqual(parse_fleet(directive)[1], {"g": ["a", "b"]})
        self.assertEqual(len(problems), 1)
        self.assertIn("p.md:17", problems[0])
        self.assertEqual(inventory_paths(examples), ["inv.yaml"])


class PageExamplesTest(unittest.TestCase):
    """Each page's examples, in order, against the page's fleet."""

    def run_page(self, page):
        directive, examples, problems = parse(page, read(page))
        self.assertEqual(problems, [], "\n".join(problems))
        if not examples:
            self.skipTest(f"{page} has no examples")
        specs, groups = parse_fleet(directive)
        ws = Workspace("docs-examples-", specs, groups, inventory_paths(examples))
        try:
            for ex in examples:
                with self.subTest(example=ex.where()):
                    proc = ws.run(ex.command)
                    self.assertEqual(
                        proc.returncode, ex.expected,
                        f"{ex.where()}: {ex.command!r} exited {proc.returncode}, the page says "
                        f"{ex.expected}\nstdout: {proc.stdout[-1500:]}\n"
                        f"stderr: {proc.stderr[-1500:]}")
        finally:
            ws.down()


def _add_page_tests():
    for page in page_paths():
        directive, examples, _ = parse(page, read(page))
        if not examples:
            continue
        slug = re.sub(r"\W+", "_", page.lower().removesuffix(".md"))
        setattr(PageExamplesTest, f"test_{slug}", lambda self, page=page: self.run_page(page))


_add_page_tests()


class FreshControllerTest(unittest.TestCase):
    """docs/first-run.md's step 1 on a controller account that has never used
    ssh (a new CI runner, a fresh root): no ~/.ssh at all. accept-new creates
    ~/.ssh 0700 and known_hosts as OpenSSH does, and prints each key it
    accepted (host, type, fingerprint); a --known-hosts path in a missing
    directory is refused before any host (64)."""

    def test_accept_new_on_a_fresh_home(self):
        specs, groups = parse_fleet("gpu01=clean gpu02=clean")
        ws = Workspace("docs-examples-fresh-", specs, groups, ["inventory.yaml"])
        try:
            shutil.rmtree(os.path.join(ws.home, ".ssh"))
            # Nothing but the account: no FLEETREAP_KNOWN_HOSTS default either.
            fresh = ("env -u FLEETREAP_KNOWN_HOSTS -u FLEETREAP_SSH_KEY fleetreap --hosts "
                     "inventory.yaml --identity " + shlex.quote(ws.secrets["FLEETREAP_SSH_KEY"]) +
                     " --host-key-policy accept-new --dry-run --color never")
            bad = ws.run(fresh + " --known-hosts nodir/sub/kh")
            self.assertEqual(bad.returncode, 64, bad.stderr)
            self.assertIn("--known-hosts nodir/sub/kh: no such directory nodir/sub", bad.stderr)
            self.assertFalse(os.path.exists(os.path.join(ws.home, ".ssh")))
            proc = ws.run(fresh)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            ssh = os.path.join(ws.home, ".ssh")
            self.assertEqual(os.stat(ssh).st_mode & 0o777, 0o700)
            known = os.path.join(ssh, "known_hosts")
            self.assertEqual(os.stat(known).st_mode & 0o777, 0o600)
            with open(known) as f:
                self.assertEqual(len(f.read().splitlines()), 2)
            accepted = re.findall(r"^(gpu0\d): accepted new host key (\w+) (SHA256:\S+) into (\S+)$",
                                  proc.stderr, re.M)
            self.assertEqual(sorted(a[0] for a in accepted), ["gpu01", "gpu02"], proc.stderr)
            self.assertTrue(all(a[3] == os.path.join(HOME, ".ssh", "known_hosts")
                                for a in accepted), accepted)
            again = ws.run(fresh)
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertNotIn("accepted new host key", again.stderr)   # known now
        finally:
            ws.down()


class ContribCiExamplesTest(unittest.TestCase):
    """The FLEETREAP_ARGS examples of contrib/ci, through the gate script."""

    def test_fleetreap_args_examples(self):
        ci = os.path.join(SOURCE, "contrib", "ci")
        examples = []
        for name in sorted(os.listdir(ci)):
            with open(os.path.join(ci, name)) as f:
                for number, line in enumerate(f, 1):
                    if "FLEETREAP_ARGS" in line:
                        examples += [(f"contrib/ci/{name}:{number}", a)
                                     for a in CI_ARGS.findall(line)]
        if not examples:
            self.skipTest("contrib/ci gives no FLEETREAP_ARGS example")
        specs, groups = parse_fleet("gpu01=clean gpu02=clean gpu03=clean; "
                                    "groups: h200=gpu01,gpu02 rack_b1=gpu02,gpu03")
        ws = Workspace("docs-examples-ci-", specs, groups, [])
        try:
            for where, args in examples:
                with self.subTest(example=where):
                    proc = ws.run("sh contrib/ci/fleetreap-gate.sh",
                                  extra_env={"FLEETREAP_ARGS": args})
                    self.assertEqual(proc.returncode, 0,
                                     f"{where}: FLEETREAP_ARGS={args!r} exited "
                                     f"{proc.returncode}\n{proc.stdout[-1500:]}\n"
                                     f"{proc.stderr[-1500:]}")
        finally:
            ws.down()


if __name__ == "__main__":
    unittest.main()
