"""contrib/ci/fleetreap-gate.sh passes FLEETREAP_ARGS to fleetreap split into
words the way a shell user expects (the README's
FLEETREAP_ARGS="--limit 'h200:&rack_b1'" reached fleetreap with its quotes
and exited 64), expands and runs nothing in it, and passes FLEETREAP_LIMIT
as one word. fleetreap is played by a script that records its argv; no
fleet, no root. The gate against a real fleet: tests/integration/test_contrib_ci.py.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(SOURCE, "contrib", "ci", "fleetreap-gate.sh")
# What the gate always passes before the extra flags.
FIXED = 21

RECORDER = """#!/bin/sh
for a; do printf '%s\\0' "$a"; done > "$ARGV_OUT"
exit 3
"""


class GateArgsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ci-gate-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.bin = os.path.join(self.tmp, "fleetreap")
        with open(self.bin, "w") as f:
            f.write(RECORDER)
        os.chmod(self.bin, 0o755)
        for name in ("inventory.yaml", "id_fleet", "known_hosts"):
            open(os.path.join(self.tmp, name), "w").close()
        self.argv_out = os.path.join(self.tmp, "argv")
        self.canary = os.path.join(self.tmp, "ran")

    def gate(self, args=None, limit=None, shell="sh", dry_run=None):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ARGV_OUT": self.argv_out,
               "HOME": self.tmp, "FLEETREAP_BIN": self.bin,
               "FLEETREAP_OUT": os.path.join(self.tmp, "out"),
               "FLEETREAP_INVENTORY": os.path.join(self.tmp, "inventory.yaml"),
               "FLEETREAP_SSH_KEY": os.path.join(self.tmp, "id_fleet"),
               "FLEETREAP_KNOWN_HOSTS": os.path.join(self.tmp, "known_hosts")}
        if args is not None:
            env["FLEETREAP_ARGS"] = args
        if limit is not None:
            env["FLEETREAP_LIMIT"] = limit
        if dry_run is not None:
            env["FLEETREAP_DRY_RUN"] = dry_run
        if os.path.exists(self.argv_out):
            os.remove(self.argv_out)
        return subprocess.run([shell, GATE], env=env, cwd=self.tmp, capture_output=True,
                              text=True, timeout=30)

    def extra(self, args=None, limit=None, shell="sh", dry_run=None):
        """The words the gate added after its own flags (fleetreap's exit
        code must come through: 3)."""
        r = self.gate(args, limit, shell, dry_run)
        self.assertEqual(r.returncode, 3, r.stderr)
        with open(os.path.join(self.tmp, "out", "exit-code")) as f:
            self.assertEqual(f.read(), "3\n")
        with open(self.argv_out, "rb") as f:
            argv = f.read().decode().split("\0")[:-1]
        self.assertEqual(argv[:2], ["--hosts", os.path.join(self.tmp, "inventory.yaml")])
        self.assertEqual(argv[FIXED - 2], "--failed-hosts")
        self.assertIn("--html", argv[:FIXED])   # the page is an artifact too
        return argv[FIXED:]

    def test_words_split_as_a_shell_splits_them(self):
        rows = [
            # The README's example and the GitLab file's.
            ("--limit 'h200:&rack_b1'", ["--limit", "h200:&rack_b1"]),
            ("--limit h200:&rack_b1", ["--limit", "h200:&rack_b1"]),
            ('--playbook "/etc/fleetreap/my vllm.yaml" --become',
             ["--playbook", "/etc/fleetreap/my vllm.yaml", "--become"]),
            ("  --limit   'gpu0*'\t--dry-run  ", ["--limit", "gpu0*", "--dry-run"]),
            ("--limit gpu\\ 01", ["--limit", "gpu 01"]),
            ("--limit '' x", ["--limit", "", "x"]),
            ("--limit 'gpu:!gpu07'", ["--limit", "gpu:!gpu07"]),
            ("--limit \"it's\"", ["--limit", "it's"]),
            ("--limit '<a>'", ["--limit", "<a>"]),
            ("--connect-timeout 3s\n--retries 0", ["--connect-timeout", "3s", "--retries", "0"]),
            ("", []),
            ("   ", []),
            (None, []),
        ]
        for args, want in rows:
            for shell in ("sh", "bash"):
                with self.subTest(args=args, shell=shell):
                    self.assertEqual(self.extra(args, shell=shell), want)

    def test_nothing_in_the_args_is_expanded_or_run(self):
        for args in (f"$(touch {self.canary})", f"`touch {self.canary}`",
                     f"; touch {self.canary}", f"& touch {self.canary}", "$HOME", "*", "~"):
            with self.subTest(args=args):
                self.assertEqual(self.extra(args), args.split())
                self.assertFalse(os.path.exists(self.canary))

    def test_an_open_quote_is_refused_in_one_line(self):
        r = self.gate("--limit 'h200:&rack_b1")
        self.assertEqual(r.returncode, 64)
        self.assertEqual(r.stderr, "fleetreap-gate: FLEETREAP_ARGS: a quote is not closed: "
                                   "--limit 'h200:&rack_b1\n")
        self.assertFalse(os.path.exists(self.argv_out))

    def test_the_limit_is_one_word_as_it_is(self):
        self.assertEqual(self.extra(limit="h200:&rack_b1"), ["--limit", "h200:&rack_b1"])
        self.assertEqual(self.extra(limit="a 'b' $c", args="--dry-run"),
                         ["--limit", "a 'b' $c", "--dry-run"])
        self.assertEqual(self.extra(limit="@fleetreap-out/failed-hosts.txt"),
                         ["--limit", "@fleetreap-out/failed-hosts.txt"])

    def test_a_dry_run_for_the_plan_job(self):
        self.assertEqual(self.extra(dry_run="1", limit="h200"), ["--dry-run", "--limit", "h200"])
        self.assertEqual(self.extra(dry_run=""), [])
        r = self.gate(dry_run="yes")
        self.assertEqual(r.returncode, 64)
        self.assertIn("FLEETREAP_DRY_RUN must be 1 or empty", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
