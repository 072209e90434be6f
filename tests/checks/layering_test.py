#!/usr/bin/env python3
"""scripts/check_layering.py: the real tree follows the include rule, and a
copy of it with a wrong-way include, a libssh include outside the transport
area or an area README without its rule fails with the file and line."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CHECK = os.path.join(ROOT, 'scripts', 'check_layering.py')


def check(root):
    return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


class LayeringTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='layering-')
        for part in ('src', 'include'):
            shutil.copytree(os.path.join(ROOT, part), os.path.join(self.tmp, part))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def append(self, rel, text):
        with open(os.path.join(self.tmp, rel), 'a', encoding='utf-8') as f:
            f.write(text)

    def test_the_tree_follows_the_rule(self):
        result = check(ROOT)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(result.stdout, '')

    def test_a_wrong_way_include_fails_with_file_and_line(self):
        self.append('src/base/text.cc', '#include "fleetreap/runner/fleet_runner.h"\n')
        lines = open(os.path.join(self.tmp, 'src/base/text.cc')).read().count('\n')
        result = check(self.tmp)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f'src/base/text.cc:{lines}: base may not include '
                      'fleetreap/runner/fleet_runner.h (May include: nothing)', result.stdout)

    def test_an_upward_include_from_a_header_fails(self):
        self.append('include/fleetreap/remote/host_records.h',
                    '#include "fleetreap/escalation/escalation.h"\n')
        result = check(self.tmp)
        self.assertEqual(result.returncode, 1)
        self.assertIn('include/fleetreap/remote/host_records.h:', result.stdout)
        self.assertIn('remote may not include fleetreap/escalation/escalation.h', result.stdout)

    def test_libssh_only_in_transport(self):
        self.append('src/runner/fleet_runner.cc', '#include <libssh/libssh.h>\n')
        result = check(self.tmp)
        self.assertEqual(result.returncode, 1)
        self.assertIn('only transport may include <libssh/libssh.h>', result.stdout)

    def test_an_area_without_its_rule_is_refused(self):
        with open(os.path.join(self.tmp, 'src/model/README.md'), 'w') as f:
            f.write('# model\n\nNo rule here.\n')
        result = check(self.tmp)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('src/model/README.md', result.stdout + result.stderr)
        self.assertIn('May include', result.stdout + result.stderr)


if __name__ == '__main__':
    unittest.main()
