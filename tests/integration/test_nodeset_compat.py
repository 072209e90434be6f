#!/usr/bin/env python3
"""ClusterShell as the oracle for --nodes: for a table of node sets and a
few hundred generated ones (ranges with and without padding, steps, several
bracket groups, the four operators), `nodeset -e` (Debian's clustershell,
installed by scripts/setup.sh) and `fleetreap --nodes SET --list-hosts
--json -` must list the same names, in the same order where each name has
one number (with several, ClusterShell orders by its folded vectors and
fleetreap by name); where nodeset lists none, or refuses, fleetreap refuses.
No host is contacted."""
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

from fleet_case import BIN

TABLE = [
    "gpu[01-08]", "gpu[1-8]", "gpu[01-04,09]", "gpu[1-10/3]", "gpu[001-003],gpu[1-2]",
    "rack[1-2]-node[1-4]", "gpu10,gpu2,login1,gpu01,a", "b,a,gpu1,gpu01",
    "gpu[01-08]!gpu03", "gpu[01-08]!gpu[02-04,07]", "gpu[01-04]&gpu[03-06]",
    "gpu[1-4]^gpu[3-6]", "gpu[1-4],login[1-2]!gpu2&gpu[1-3]", "node-ib[0-3]",
    "n[9-11]", "x[09-11]", "host.example.com", "gpu[1-3],gpu[01-02]", "a1b2c3,a1b2c4,a1b10c1",
    "gpu[1,1]", "gpu[08-10]",
]
# nodeset refuses these; so must fleetreap.
REFUSED = ["gpu[01:04]", "gpu[a-b]", "gpu[]", "gpu[1-2", "gpu[3-1]", "gpu[1-3/0]", "gpu[01-3]",
           "gpu[1-03]", "rack[a,b]", "@gpus"]


def generated(count, seed=29):
    rng = random.Random(seed)
    prefixes = ["gpu", "node", "r1n", "login", "ib-sw", "dgx"]

    def term():
        prefix = rng.choice(prefixes)
        if rng.random() < 0.2:
            return prefix + str(rng.randint(0, 30))
        width = rng.choice([1, 2, 3])
        lo = rng.randint(0, 20)
        hi = lo + rng.randint(0, 12)
        parts = []
        for _ in range(rng.randint(1, 3)):
            a = rng.randint(lo, hi)
            b = a + rng.randint(0, 5)
            step = "/%d" % rng.randint(2, 3) if rng.random() < 0.15 else ""
            parts.append(("%0*d-%0*d%s" % (width, a, width, b, step)) if b > a
                         else "%0*d" % (width, a))
        t = prefix + "[" + ",".join(parts) + "]"
        if rng.random() < 0.15:
            t += "-p[%d-%d]" % (0, rng.randint(0, 2))
        return t

    out = []
    for _ in range(count):
        text = term()
        for _ in range(rng.randint(0, 3)):
            text += rng.choice([",", ",", "!", "&", "^"]) + term()
        out.append(text)
    return out


class NodesetCompatTest(unittest.TestCase):
    def test_nodes_against_nodeset(self):
        if shutil.which("nodeset") is None:
            self.fail("clustershell is not installed (scripts/setup.sh installs it)")
        work = tempfile.mkdtemp(prefix="fleetreap-nodeset-")
        env = dict(os.environ, HOME=work, ANSIBLE_CONFIG=os.path.join(work, "none.cfg"))
        differences, agreed, empty, nd_order = [], 0, 0, 0
        for text in TABLE + generated(300):
            want = subprocess.run(["nodeset", "-e", text], capture_output=True, text=True,
                                  env=env, cwd=work, timeout=60)
            self.assertEqual(want.returncode, 0, "%s: %s" % (text, want.stderr))
            names = want.stdout.split()
            p = subprocess.run([BIN, "--nodes", text, "--list-hosts", "--json", "-"],
                               capture_output=True, text=True, env=env, cwd=work, timeout=60)
            if not names:
                empty += 1
                if p.returncode != 64 or "names no node" not in p.stderr:
                    differences.append("%s: nodeset lists none, fleetreap %d %s" % (
                        text, p.returncode, p.stderr.strip()))
                continue
            got = [h["name"] for h in json.loads(p.stdout)] if p.returncode == 0 else p.stderr
            if got == names:
                agreed += 1
            elif isinstance(got, list) and sorted(got) == sorted(names) and any(
                    len(re.findall(r"[0-9]+", n)) > 1 for n in names):
                # Names with several numbers: ClusterShell lists them in the
                # order of its folded vectors (RangeSetND), fleetreap by name.
                nd_order += 1
            else:
                differences.append("%s: nodeset %s, fleetreap %s" % (text, names, got))
        for text in REFUSED:
            want = subprocess.run(["nodeset", "-e", text], capture_output=True, text=True,
                                  env=env, cwd=work, timeout=60)
            p = subprocess.run([BIN, "--nodes", text, "--list-hosts"], capture_output=True,
                               text=True, env=env, cwd=work, timeout=60)
            if want.returncode == 0 and text != "@gpus" or p.returncode != 64:
                differences.append("%s: nodeset %d %s, fleetreap %d %s" % (
                    text, want.returncode, want.stdout.strip(), p.returncode, p.stderr.strip()))
        shutil.rmtree(work, ignore_errors=True)
        print("\nnodeset -e vs --nodes: %d agree, %d the same names in another order (several "
              "numbers per name), %d empty on both, %d different" % (
                  agreed, nd_order, empty, len(differences)))
        for d in differences:
            print("DIFFERENT: " + d)
        self.assertGreaterEqual(agreed, 250)
        self.assertEqual(differences, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
