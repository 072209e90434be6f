#!/usr/bin/env python3
"""docs/json-schema.json describes what RenderJson writes.

Validates every golden JSON report (tests/testdata/golden/*.json, which the
C++ golden tests compare byte for byte with RenderJson's output) and every
captured real report under tests/testdata (any *.json with a schema_version)
against the schema, and checks that the schema rejects documents that break
it. Needs no
simulated fleet. Uses python3-jsonschema (Debian package).
"""
import copy
import glob
import json
import os
import unittest

import jsonschema

from fleet_case import SOURCE

SCHEMA_PATH = os.path.join(SOURCE, "docs", "json-schema.json")
TESTDATA_DIR = os.path.join(SOURCE, "tests", "testdata")
GOLDEN_DIR = os.path.join(TESTDATA_DIR, "golden")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ReportSchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = load(SCHEMA_PATH)
        jsonschema.Draft202012Validator.check_schema(cls.schema)
        cls.validator = jsonschema.Draft202012Validator(cls.schema)
        cls.goldens = sorted(glob.glob(os.path.join(GOLDEN_DIR, "*.json")))

    def test_goldens_exist(self):
        self.assertGreaterEqual(len(self.goldens), 2, GOLDEN_DIR)

    def test_every_golden_report_validates(self):
        for path in self.goldens:
            with self.subTest(golden=os.path.basename(path)):
                errors = [e.message for e in self.validator.iter_errors(load(path))]
                self.assertEqual(errors, [])

    def test_captured_reports_validate(self):
        for path in sorted(glob.glob(os.path.join(TESTDATA_DIR, "**", "*.json"),
                                     recursive=True)):
            try:
                doc = load(path)
            except ValueError:
                continue
            if not isinstance(doc, dict) or "schema_version" not in doc:
                continue
            with self.subTest(report=os.path.relpath(path, TESTDATA_DIR)):
                errors = [e.message for e in self.validator.iter_errors(doc)]
                self.assertEqual(errors, [])

    def test_schema_rejects_broken_reports(self):
        report = load(os.path.join(GOLDEN_DIR, "report.json"))

        def broken(mutate):
            doc = copy.deepcopy(report)
            mutate(doc)
            return doc

        cases = {
            "missing summary": broken(lambda d: d.pop("summary")),
            "unknown status": broken(lambda d: d["hosts"][0].update(status="cleaned")),
            "unknown fate": broken(lambda d: d["hosts"][4]["holders"][0].update(fate="shot")),
            "unknown error kind": broken(lambda d: d["hosts"][13].update(error_kind="oops")),
            "negative memory": broken(
                lambda d: d["hosts"][0]["gpus_after"][0].update(memory_used_mib=-1)),
            "wrong version": broken(lambda d: d.update(schema_version=3)),
            "local time": broken(lambda d: d.update(start_time="2026-11-30 03:04:05")),
        }
        for name, doc in cases.items():
            with self.subTest(case=name):
                self.assertFalse(self.validator.is_valid(doc))

    def test_schema_allows_added_fields(self):
        # docs/report.md: fields may be added without a version change.
        report = load(os.path.join(GOLDEN_DIR, "report.json"))
        report["new_top_level"] = {"x": 1}
        report["summary"]["new_count"] = 3
        report["hosts"][0]["new_field"] = "x"
        report["hosts"][4]["holders"][0]["owner"]["new_owner_field"] = None
        report["hosts"][0]["gpus_after"][0]["new_gpu_field"] = 1.5
        self.assertEqual([e.message for e in self.validator.iter_errors(report)], [])

    def test_schema_is_versioned(self):
        self.assertEqual(self.schema["properties"]["schema_version"], {"enum": [1, 2]})
        self.assertTrue(self.schema["$id"].endswith("/report-2.json"), self.schema["$id"])

    def test_journal_records_validate(self):
        # A journal's run line is a report without hosts; its hosts are report hosts.
        host_schema = dict(self.schema["$defs"]["host"], **{"$defs": self.schema["$defs"]})
        host_validator = jsonschema.Draft202012Validator(host_schema)
        report = load(os.path.join(GOLDEN_DIR, "report.json"))
        for host in report["hosts"]:
            self.assertEqual([e.message for e in host_validator.iter_errors(host)], [])


if __name__ == "__main__":
    unittest.main()
