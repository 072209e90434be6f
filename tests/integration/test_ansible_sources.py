#!/usr/bin/env python3
"""ansible-core as the oracle for every other kind of -i source
(docs/inventories.md): for each inventory of test_ansible_compat.py's corpus
that fleetreap reads fully (no Jinja in a used setting), a directory holding
it (with entries Ansible skips), a script printing its `ansible-inventory
--list`, that JSON as a file, consecutive pairs as two -i, and ansible.cfg
naming two of them with a remote_user. Compared with ansible-core's own
reading (test_ansible_compat.py's oracle): the host order and every host's
address, port, user, key file, become and groups. 0 differences.
"""
import json
import os
import shutil
import unittest

import test_ansible_compat as compat
from fleet_case import SOURCE

corpus_inventories = compat.corpus_inventories
expected_settings = compat.expected_settings
jinja = compat.jinja
Work = compat.Work


def usable(oracle):
    """An inventory whose every host fleetreap reads as Ansible does (no
    Jinja in a used setting, no unparsed source), for the source tests."""
    if not oracle["hosts"] or any("parse" in w.lower() for w in oracle["parse_warnings"]):
        return False
    for s in oracle["settings"].values():
        if any(jinja(v) for v in (s["host"], s["remote_user"], s["private_key_file"],
                                  s["become_raw"])):
            return False
    return True


def copy_vars_dirs(src_dir, dst_dir):
    for sub in ("group_vars", "host_vars"):
        if os.path.isdir(os.path.join(src_dir, sub)):
            shutil.copytree(os.path.join(src_dir, sub), os.path.join(dst_dir, sub))


class AnsibleSourcesTest(unittest.TestCase):
    """Every other kind of -i source, compared with ansible-core the same way:
    host order and every host's settings. Relative key files are anchored, as
    fleetreap documents, to the directory of the source that first names the
    host."""

    def oracle(self, work, sources, cwd=None):
        """Ansible's view of "sources", each asked once."""
        key = (tuple(sources), cwd)
        if key not in self.seen:
            self.seen[key] = work.oracle(None, [], sources=list(sources), cwd=cwd)
        return self.seen[key]

    def compare(self, work, label, ansible_sources, our_sources, base_of, cwd=None, env=None):
        oracle = self.oracle(work, ansible_sources, cwd=cwd)
        if not usable(oracle):
            return "skipped"
        listed = work.fleetreap(None, None, sources=our_sources, cwd=cwd, env=env)
        if listed["error"] is not None:
            return "%s: fleetreap failed: %s" % (label, listed["error"])
        ours = {h["name"]: h for h in listed["hosts"]}
        problems = []
        if [h["name"] for h in listed["hosts"]] != oracle["hosts"]:
            problems.append("host order %s vs %s" % (list(ours), oracle["hosts"]))
        for name, s in oracle["settings"].items():
            want = expected_settings(os.path.join(base_of(name), "x"), s, work.dir)
            got = {k: ours.get(name, {}).get(k) for k in want}
            if got != want:
                problems.append("host %s: fleetreap %s, ansible %s" % (name, got, want))
        return "agree" if not problems else "%s: %s" % (label, "; ".join(problems))

    def test_sources_against_ansible(self):
        if shutil.which("ansible") is None:
            self.fail("ansible-core is not installed (scripts/setup.sh installs it)")
        work = Work()
        self.seen = {}
        # fleet.yaml names ../playbooks/*.yaml: the copies below find them too.
        os.symlink(os.path.join(SOURCE, "playbooks"), os.path.join(work.dir, "playbooks"))
        tally, differences = {}, []

        def note(kind, outcome):
            key = outcome if outcome in ("agree", "skipped") else "DIFFERENT"
            tally[(kind, key)] = tally.get((kind, key), 0) + 1
            if key == "DIFFERENT":
                differences.append(outcome)

        good = []
        for n, path in enumerate(corpus_inventories()):
            rel = os.path.relpath(path, SOURCE)
            if not usable(self.oracle(work, [path])):
                continue
            good.append(path)
            src_dir = os.path.dirname(path)
            # A directory: the file (".ini" would be ignored there), its
            # group_vars/host_vars, and entries Ansible skips.
            d = os.path.join(work.dir, "dir%d" % n)
            os.makedirs(d)
            name = os.path.basename(path)
            shutil.copy(path, os.path.join(d, name[:-4] if name.endswith(".ini") else name))
            copy_vars_dirs(src_dir, d)
            for skipped in ("README.md", "old.ini", "notes.txt", ".hidden", "x.retry"):
                with open(os.path.join(d, skipped), "w") as f:
                    f.write("[skipped]\nnot-a-host-%s\n" % skipped.strip("."))
            note("directory", self.compare(work, "directory of " + rel, [d], [d],
                                           lambda h, d=d: d))
            # The --list JSON: printed by a script, and as a file.
            listed = work.inventory_list(path)
            s = os.path.join(work.dir, "script%d" % n)
            os.makedirs(s)
            with open(os.path.join(s, "list.json"), "w") as f:
                json.dump(listed, f, indent=2)
            script = os.path.join(s, "inventory.sh")
            with open(script, "w") as f:
                f.write('#!/bin/sh\nexec cat "$(dirname "$0")/list.json"\n')
            os.chmod(script, 0o755)
            note("script", self.compare(work, "script printing the --list of " + rel,
                                        [script], [script], lambda h, s=s: s))
            note("--list JSON", self.compare(work, "the --list JSON of " + rel, [script],
                                             [os.path.join(s, "list.json")], lambda h, s=s: s))

        def first_source(sources):
            names = [set(self.oracle(work, [p])["hosts"]) for p in sources]

            def base(host):
                for p, hosts in zip(sources, names):
                    if host in hosts:
                        return os.path.dirname(p)
                return ""
            return base

        for a, b in zip(good, good[1:]):
            pair = [a, b]
            note("several -i", self.compare(work, "-i %s -i %s" % tuple(
                os.path.relpath(p, SOURCE) for p in pair), pair, pair, first_source(pair)))
        for n, pair in enumerate(zip(good[::3], good[1::3])):
            cfg_dir = os.path.join(work.dir, "cfg%d" % n)
            os.makedirs(cfg_dir)
            with open(os.path.join(cfg_dir, "ansible.cfg"), "w") as f:
                f.write("[defaults]\ninventory = %s ; the fleet\nremote_user = cfg_user\n"
                        "forks = 7\nhost_key_checking = False\n" % ",".join(pair))
            note("ansible.cfg", self.compare(work, "ansible.cfg with %s" % (pair,), [], [],
                                             first_source(list(pair)), cwd=cfg_dir))
        shutil.rmtree(work.dir, ignore_errors=True)
        print("\nansible-core compatibility of -i sources (%d usable inventories):" % len(good))
        for (kind, key) in sorted(tally):
            print("  %5d  %-12s %s" % (tally[(kind, key)], kind, key))
        for d in differences:
            print("DIFFERENT: " + d)
        agreed = {kind for (kind, key) in tally if key == "agree"}
        self.assertEqual(agreed, {"directory", "script", "--list JSON", "several -i",
                                  "ansible.cfg"})
        self.assertEqual(differences, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
