#!/usr/bin/env python3
"""No command fleetreap runs asks nvidia-smi for a field a user controls where
it is read as rows: real nvidia-smi prints a process name's newlines raw in
--query-compute-apps CSV (seen on an H200, driver 580), so a forged line
would read as a row naming another PID. The scan's query is built in one
place (scan_script.cc, ScanAppsFields); no other file may build a process
query, and none but the parsers of captured samples may name process_name.
A dead builder that comes back (ComputeAppsCommand with process_name) fails
here. remote_script_test's NoQueryAsksForAUserField checks the scripts
themselves."""
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILDS_QUERY = {'src/remote/scan_script.cc'}
# Parsers of what a host or a capture printed; they build no command.
PARSERS = {'src/remote/nvidia_smi_csv.cc', 'src/remote/nvidia_smi_csv.h',
           'src/remote/nvidia_smi_compute_apps.cc', 'src/remote/nvidia_smi_process_table.cc',
           'include/fleetreap/remote/nvidia_smi.h'}


def sources():
    for part in ('src', 'include'):
        for base, _, files in os.walk(os.path.join(ROOT, part)):
            for name in files:
                if name.endswith(('.cc', '.h')):
                    path = os.path.join(base, name)
                    yield os.path.relpath(path, ROOT), open(path, encoding='utf-8').read()


class NvidiaSmiQueriesTest(unittest.TestCase):
    def test_process_queries_are_built_in_one_place(self):
        for rel, text in sources():
            if re.search(r'query-(compute|accounted)-apps', text) and rel not in BUILDS_QUERY:
                # A mention in a comment is fine; a string literal is a builder.
                for line in text.splitlines():
                    code = line.split('//')[0]
                    self.assertNotRegex(code, r'"[^"]*query-(compute|accounted)-apps',
                                        f'{rel}: builds an nvidia-smi process query')

    def test_no_builder_names_a_user_field(self):
        for rel, text in sources():
            if rel in PARSERS:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                code = line.split('//')[0]
                self.assertNotIn('"process_name"', code, f'{rel}:{number}')
                self.assertNotRegex(code, r'ComputeAppsCommand|ComputeAppsFields',
                                    f'{rel}:{number}: the dead builder came back')

    def test_the_scan_asks_for_four_driver_fields(self):
        text = open(os.path.join(ROOT, 'src/remote/scan_script.cc'), encoding='utf-8').read()
        fields = re.search(r'ScanAppsFields\(\) \{\s*static const std::vector<std::string> '
                           r'fields = \{([^}]*)\}', text)
        self.assertIsNotNone(fields)
        self.assertEqual(re.findall(r'"([^"]+)"', fields.group(1)),
                         ['pid', 'gpu_uuid', 'gpu_bus_id', 'used_gpu_memory'])


if __name__ == '__main__':
    unittest.main()
