#!/usr/bin/env python3
"""ansible-core as the oracle for fleetreap's inventory reading.

For every inventory in tests/testdata/inventories-corpus/ (real ones from
public repositories, see SOURCES.md there, plus edge cases) and the shipped
examples in inventory/, ansible-core 2.14 (the Debian package) loads the
inventory in a subprocess, through the same InventoryManager.get_hosts that
`ansible PATTERN --list-hosts` uses, the VariableManager behind
`ansible-inventory --list` (whose host list is checked against it), and the
ssh connection plugin's own option resolution. fleetreap runs `--list-hosts --json -` for the same inventory and
patterns. Compared: which hosts each pattern selects, the inventory's host
order, every host's groups, address, port, user, key file and become.

An outcome is one of:
  agree                       the same hosts / the same settings
  extension                   Ansible matched nothing for a term with
                              brackets; fleetreap read it as a host range
  refused: ...                fleetreap exits non-zero, for one of the
                              documented reasons (README "Inventory format")
  DIFFERENT                   anything else: the test fails
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from fleet_case import BIN, SOURCE

CORPUS = os.path.join(SOURCE, "tests", "testdata", "inventories-corpus")
EXAMPLES = [os.path.join(SOURCE, "inventory", f) for f in ("fleet.yaml", "lab.yaml", "hosts.ini")]
INVENTORY_NAMES = ("inventory", "inventory.ini", "inventory.yml", "inventory.yaml",
                   "inventory-sample.yml", "hosts", "hosts.ini")

# What ansible-core does, printed as JSON: run with /usr/bin/python3.
ORACLE = r'''
import json, sys
from ansible.utils.display import Display
warnings = []
Display.warning = lambda self, msg, formatted=False: warnings.append(msg)
from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.parsing.dataloader import DataLoader
from ansible.inventory.manager import InventoryManager
from ansible.vars.manager import VariableManager
from ansible.plugins.loader import connection_loader
from ansible.playbook.play_context import PlayContext

from ansible import constants as C
sources, patterns = json.loads(sys.argv[1]), json.loads(sys.argv[2])
loader = DataLoader()
inventory = InventoryManager(loader=loader, sources=sources or C.DEFAULT_HOST_LIST)
out = {"parse_warnings": list(warnings), "hosts": list(inventory.hosts),
       "groups": list(inventory.groups), "settings": {}, "patterns": {}}
variables = VariableManager(loader=loader, inventory=inventory)
for name, host in inventory.hosts.items():
    hv = dict(variables.get_vars(host=host, include_hostvars=False))
    hv.setdefault("inventory_hostname", name)
    conn = connection_loader.get("ssh", PlayContext(), None)
    conn.set_options(var_options=hv)
    s = {"groups": sorted(g.name for g in host.get_groups() if g.name != "all")}
    for option in ("host", "port", "remote_user", "private_key_file"):
        value = conn.get_option(option)
        s[option] = value if value is None or isinstance(value, (int, bool)) else str(value)
    become = hv.get("ansible_become", False)
    s["become_raw"] = str(become)
    try:
        s["become"] = boolean(become, strict=True)
    except TypeError:
        s["become"] = "error"
    out["settings"][name] = s
for pattern in patterns:
    del warnings[:]
    inventory.clear_pattern_cache()
    result = {"hosts": [], "error": None}
    try:
        result["hosts"] = [h.name for h in inventory.get_hosts(pattern)]
    except AnsibleError as e:
        result["error"] = str(e)
    result["warnings"] = list(warnings)
    out["patterns"][pattern] = result
print(json.dumps(out))
'''

REFUSALS = [
    ("Refusing to guess", "Ansible subscript and host range disagree"),
    ("differently from run to run", "subscript of a group Ansible orders at random"),
    ("Python syntax", "Python-only regular expression"),
    ("Ansible splits this pattern", "comma inside brackets"),
    ("Jinja template", "Jinja in a connection setting"),
    ("finds no host at that position", "subscript past the group's end (Ansible selects none or errors)"),
]


def corpus_inventories():
    found = []
    for case in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, case)
        if not os.path.isdir(d):
            continue
        for name in INVENTORY_NAMES:
            if os.path.isfile(os.path.join(d, name)):
                found.append(os.path.join(d, name))
                break
    return found + EXAMPLES


def generated_patterns(oracle):
    """Patterns from the inventory's own groups and hosts."""
    groups = [g for g in oracle["groups"] if g not in ("all",)]
    hosts = oracle["hosts"]
    out = ["all", "*", "ungrouped"]
    for g in groups:
        out += [g, g + "[0]", g + "[-1]", g + "[1:2]", g + "[1:]", "!" + g]
    pairs = [(a, b) for a in groups[:6] for b in groups[:6] if a < b]
    for a, b in pairs[:12]:
        out += [a + ":&" + b, a + ":!" + b, a + "," + b, "&" + a + ":" + b]
    for h in hosts[:2] + hosts[-2:]:
        out += [h, h[:3] + "*", "~" + h[:3], "all:!" + h]
    if hosts:
        out.append(hosts[0] + "," + hosts[-1])
    out.append("no-such-host")
    return list(dict.fromkeys(out))


def case_patterns(path):
    f = os.path.join(os.path.dirname(path), "patterns")
    if not os.path.isfile(f) or path in EXAMPLES:
        return []
    with open(f) as fd:
        return [l.rstrip("\n") for l in fd if l.strip()]


class Work:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="fleetreap-compat-")
        self.env = dict(os.environ, HOME=self.dir, ANSIBLE_LOCAL_TEMP=self.dir,
                        ANSIBLE_NOCOLOR="1", ANSIBLE_CONFIG=os.path.join(self.dir, "none.cfg"))

    def oracle(self, path, patterns, sources=None, cwd=None, env=None):
        """Ansible's view of "path" (or of the list "sources"; [] means
        Ansible's configured inventory)."""
        sources = [path] if sources is None else sources
        p = subprocess.run(["/usr/bin/python3", "-c", ORACLE, json.dumps(sources),
                            json.dumps(patterns)], cwd=cwd or self.dir, env=env or self.env,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise AssertionError("ansible oracle failed on %s:\n%s" % (sources, p.stderr[-3000:]))
        return json.loads(p.stdout)

    def inventory_list(self, path):
        """`ansible-inventory -i PATH --list`: the CLI's own view, to check the oracle."""
        p = subprocess.run(["ansible-inventory", "-i", path, "--list"], cwd=self.dir,
                           env=self.env, capture_output=True, text=True, timeout=300)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def fleetreap(self, path, limit, sources=None, cwd=None, env=None):
        sources = [path] if sources is None else sources
        args = [BIN, "--list-hosts", "--json", "-"]
        for source in sources:
            args += ["--hosts", source]
        if limit is not None:
            args += ["--limit", limit]
        p = subprocess.run(args, cwd=cwd or self.dir, env=env or self.env, capture_output=True,
                           text=True, timeout=120)
        if p.returncode == 0:
            return {"hosts": json.loads(p.stdout), "error": None, "rc": 0}
        err = [l for l in p.stderr.splitlines() if "warning:" not in l]
        return {"hosts": None, "error": " ".join(err), "rc": p.returncode}


def classify(pattern, ansible, ours):
    no_match = [w for w in ansible["warnings"] if "Could not match supplied host pattern" in w]
    if ours["error"] is None:
        names = {h["name"] for h in ours["hosts"]}
        if ansible["error"] is None and names == set(ansible["hosts"]):
            return "agree"
        if no_match and "[" in pattern and set(ansible["hosts"]) <= names:
            return "extension"
        return "DIFFERENT"
    for key, what in REFUSALS:
        if key in ours["error"]:
            return "refused: " + what
    if ansible["error"] is not None:
        return "refused: Ansible errors too"
    if no_match or not ansible["hosts"]:
        return "refused: a term matches nothing (Ansible warns and goes on)"
    return "DIFFERENT"


def expected_settings(path, s, home):
    """fleetreap's --list-hosts --json fields for Ansible's settings."""
    key = s["private_key_file"]
    if key is not None:
        if key.startswith("~/"):
            key = home + key[1:]
        if not key.startswith("/"):  # fleetreap: relative to the inventory's directory
            key = os.path.normpath(os.path.join(os.path.dirname(path), key))
    return {"address": s["host"], "port": s["port"] if s["port"] is not None else 22,
            "user": s["remote_user"], "key_file": key, "become": s["become"],
            "groups": s["groups"]}


def jinja(value):
    return isinstance(value, str) and any(t in value for t in ("{{", "{%", "{#"))


class AnsibleCompatTest(unittest.TestCase):
    def test_corpus_against_ansible(self):
        if shutil.which("ansible") is None:
            self.fail("ansible-core is not installed (scripts/setup.sh installs it)")
        work = Work()
        tally, differences = {}, []
        counted = {"inventories": 0, "patterns": 0, "hosts": 0}

        def note(kind, where):
            tally[kind] = tally.get(kind, 0) + 1
            if kind == "DIFFERENT":
                differences.append(where)

        for path in corpus_inventories():
            rel = os.path.relpath(path, SOURCE)
            counted["inventories"] += 1
            first = work.oracle(path, [])
            patterns = list(dict.fromkeys(generated_patterns(first) + case_patterns(path)))
            oracle = work.oracle(path, patterns)
            unparsed = [w for w in oracle["parse_warnings"] if "parse" in w.lower()]
            listed_by_cli = work.inventory_list(path)
            cli_hosts = set((listed_by_cli or {}).get("_meta", {}).get("hostvars", {}))
            for group, body in (listed_by_cli or {}).items():
                if group != "_meta":
                    cli_hosts.update(body.get("hosts", []))
            note("agree" if cli_hosts == set(oracle["hosts"]) else "DIFFERENT",
                 "%s: ansible-inventory --list %s vs the oracle %s" % (
                     rel, sorted(cli_hosts), oracle["hosts"]))
            whole = work.fleetreap(path, None)
            if not oracle["hosts"] or unparsed:
                kind = "refused: inventory Ansible reads no host from" if whole["rc"] == 65 \
                    else "DIFFERENT"
                note(kind, "%s: ansible %s, fleetreap %s" % (rel, unparsed or "no hosts", whole))
                continue
            # Settings of every host; a Jinja value must refuse that host.
            refused = set()
            for name, s in oracle["settings"].items():
                used = [s["host"], s["remote_user"], s["private_key_file"], s["become_raw"]]
                if any(jinja(v) for v in used):
                    refused.add(name)
            limit = None if not refused else "all:" + ":".join("!" + h for h in refused)
            listed = work.fleetreap(path, limit)
            if listed["error"] is not None:
                note("DIFFERENT", "%s: fleetreap --list-hosts failed: %s" % (rel, listed["error"]))
                continue
            ours = {h["name"]: h for h in listed["hosts"]}
            order = [h for h in oracle["hosts"] if h not in refused]
            note("agree" if [h["name"] for h in listed["hosts"]] == order else "DIFFERENT",
                 "%s: host order %s vs %s" % (rel, list(ours), order))
            for name in refused:
                r = work.fleetreap(path, name)
                note(classify(name, {"hosts": [name], "error": None, "warnings": []}, r),
                     "%s: host %s with Jinja: %s" % (rel, name, r))
            for name, s in oracle["settings"].items():
                if name in refused:
                    continue
                counted["hosts"] += 1
                want = expected_settings(path, s, work.dir)
                got = {k: ours.get(name, {}).get(k) for k in want}
                note("agree" if got == want else "DIFFERENT",
                     "%s: host %s: fleetreap %s, ansible %s" % (rel, name, got, want))
            for pattern in patterns:
                counted["patterns"] += 1
                ansible = oracle["patterns"][pattern]
                if any(h in refused for h in ansible["hosts"]):
                    continue  # the Jinja hosts are checked above
                r = work.fleetreap(path, pattern)
                kind = classify(pattern, ansible, r)
                note(kind, "%s: --limit %r: fleetreap %s, ansible %s" % (
                    rel, pattern, r["error"] or sorted(h["name"] for h in r["hosts"]),
                    ansible["error"] or sorted(ansible["hosts"])))
        shutil.rmtree(work.dir, ignore_errors=True)
        print("\nansible-core compatibility: %(inventories)d inventories, %(hosts)d hosts' "
              "settings, %(patterns)d patterns" % counted)
        for kind in sorted(tally):
            print("  %5d  %s" % (tally[kind], kind))
        for d in differences:
            print("DIFFERENT: " + d)
        self.assertGreaterEqual(counted["inventories"], 15)
        self.assertGreaterEqual(counted["patterns"], 500)
        self.assertEqual(differences, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
