#!/usr/bin/env python3
"""--html FILE rendered in a real browser: fleetreap runs over a mixed
simulated fleet of 200 hosts (clean, cleaned, dirty, unreachable, and one
whose workers' names and command lines are HTML and invalid UTF-8) with
--html, and Debian's headless Chromium, kept off the network, renders the
page: its own rendered text (the verdict, the grid by outcome, the funnel,
the timelines, the host count the page's script writes) must be the
report's, nothing a host said may have become markup, and the page names
no external resource. The screenshot is kept as an artifact:
build/tests/artifacts/html-report.png (printed). Skips when chromium is
not installed (scripts/setup.sh installs it).
"""
import html.parser
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

import scenarios
from fleet_case import BIN, FleetCase, fleetreap_argv, playbook_path
from simfleet import HostSpec

CHROMIUM = shutil.which("chromium")
ARTIFACTS = os.path.join(os.path.dirname(BIN), "tests", "artifacts")

INJECTED = [  # (comm, argv) of the hostile host's workers
    (b"</script><img", [b"python3", b"</script><script>document.title='pwned'</script>"]),
    (b"\"'><b>x", [b"\"'><img src=x onerror=\"document.title='pwned'\">", b"-c"]),
    (b"line\nbreak", [b"python3", b"one\ntwo", b"<!-- open comment"]),
    (b"bad\xff\xfeutf8", [b"python3", b"caf\xc3 \xff\xfe", b"</td></tr></table>"]),
]


@scenarios.scenario
def html_hostile(h):
    """Four orphaned workers whose comm and argv are HTML, quotes, newlines and
    invalid UTF-8."""
    h.daemon("nvidia-persistenced")
    for k, (comm, argv) in enumerate(INJECTED):
        h.workload(gpus=str(k), mib=30000, detach=True, argv=("python3", "launch.py"),
                   worker_comm=comm, worker_argv=argv)


def fleet_specs():
    kinds = ["clean"] * 160 + ["orphans"] * 16 + ["ghost_memory"] * 8 + \
            ["unreachable"] * 8 + ["shm_leftovers"] * 7 + ["html_hostile"]
    return [HostSpec(f"gpu{i:03d}", scenario=kind, shape="lean")
            for i, kind in enumerate(kinds, start=1)]


class Elements(html.parser.HTMLParser):
    """Counts the start tags of a document and collects attribute values."""

    def __init__(self):
        super().__init__()
        self.tags = {}
        self.attributes = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.attributes += [(tag, name, value or "") for name, value in attrs]


def chromium(*args, timeout=240):
    profile = tempfile.mkdtemp(prefix="fleetreap-chromium-")
    try:
        argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                # No network: every name resolves to nothing, every request
                # would go to a proxy that is not there, no background traffic.
                "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-extensions",
                "--no-first-run", "--no-default-browser-check", "--metrics-recording-only",
                "--disable-features=MediaRouter,OptimizationHints,Translate",
                *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@unittest.skipUnless(CHROMIUM, "chromium is not installed (scripts/setup.sh installs it)")
class HtmlTest(FleetCase):
    PREFIX = "html-"
    SPECS = fleet_specs()
    UP = {"timeout": 300}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.run_and_render()
        except BaseException:
            cls.fleet.down()   # tearDownClass does not run when setUpClass fails
            raise

    @classmethod
    def run_and_render(cls):
        cls.out = os.path.join(cls.tmp, "out")
        os.makedirs(cls.out)
        cls.page_path = os.path.join(cls.out, "report.html")
        cls.json_path = os.path.join(cls.out, "report.json")
        argv = fleetreap_argv(cls.fleet, "--playbook", playbook_path("default.yaml"),
                              "--html", cls.page_path, "--json", cls.json_path, "--quiet",
                              "--color", "never", "--connect-timeout", "60s", "--retries", "0",
                              "--forks", "64")
        cls.run_result = subprocess.run(argv, capture_output=True, text=True, timeout=480)
        with open(cls.json_path) as f:
            cls.report = json.load(f)
        with open(cls.page_path, "rb") as f:
            cls.page = f.read().decode("utf-8")   # strict: the page is valid UTF-8
        cls.dom_result = chromium("--virtual-time-budget=5000", "--dump-dom",
                                  "file://" + cls.page_path)
        cls.dom = cls.dom_result.stdout

    def test_run_and_file(self):
        self.assertEqual(self.run_result.returncode, 3, self.run_result.stderr[-2000:])
        self.assertEqual(stat.S_IMODE(os.stat(self.page_path).st_mode), 0o600)
        self.assertEqual(sorted(os.listdir(self.out)), ["report.html", "report.json"])

    def test_browser_renders_the_reports_text(self):
        self.assertEqual(self.dom_result.returncode, 0, self.dom_result.stderr[-2000:])
        verdict = self.run_result.stdout.strip().splitlines()[-1]
        meant = {s.name for s in self.SPECS if s.scenario == "unreachable"}
        surprises = [f"{h['name']}: {h.get('error_message', '')}" for h in self.report["hosts"]
                     if h["status"] == "unreachable" and h["name"] not in meant]
        self.assertTrue(verdict.startswith("NOT READY: 184/200 hosts clean"),
                        f"{verdict}\nunexpectedly unreachable: {surprises}")
        self.assertIn(f'<h1 id="verdict" class="notready">{verdict}</h1>', self.dom)
        self.assertIn(f"<title>fleetreap: {verdict}</title>", self.dom)
        # The page's script ran: it writes the host count.
        self.assertIn('<span id="shown">showing 200 of 200 hosts</span>', self.dom)
        # The grid: one table, problems first, each row naming its inventory
        # group (the fleet's scenario groups).
        self.assertEqual(self.dom.count('<table class="grid">'), 1)
        for group in ("scenario_clean", "scenario_orphans", "scenario_ghost_memory",
                      "scenario_unreachable"):
            self.assertIn(f'<td class="grp">{group}</td>', self.dom)
        self.assertLess(self.dom.find('<td class="grp">scenario_unreachable</td>'),
                        self.dom.find('<td class="grp">scenario_clean</td>'))
        self.assertIn('<a href="#h0">gpu[001-160]</a>', self.dom)   # identical rows fold
        self.assertIn('<i class="s-ghost" title="GPU 2 after: ghost">', self.dom)
        # The funnel: every job holder found, TERMed; the counts are the report's.
        holders = [h for host in self.report["hosts"] for h in host["holders"]
                   if h["fate"] not in ("protected", "out_of_scope")]
        terms = sum(host["term_sent"] for host in self.report["hosts"])
        self.assertIn(f"<tr><th>found</th><td>{len(holders)}</td>", self.dom)
        self.assertIn(f"<tr><th>sent TERM</th><td>{terms}</td>", self.dom)
        self.assertGreaterEqual(len(holders), 16 * 8 + 4)
        # Timelines of the slowest hosts, and every host's details.
        self.assertEqual(self.dom.count('<details class="host '), 200)
        self.assertIn('<table class="tail" id="tail">', self.dom)
        self.assertIn('<span class="st-term"', self.dom)

    def test_nothing_a_host_said_became_markup(self):
        for text in (self.page, self.dom):
            tags = Elements()
            tags.feed(text)
            self.assertEqual(tags.tags.get("script"), 1, "only the page's own script")
            self.assertNotIn("img", tags.tags)
            for tag, name, value in tags.attributes:
                self.assertFalse(name.startswith("on"), (tag, name, value))
        self.assertNotIn("pwned", re.search(r"<title>(.*?)</title>", self.dom).group(1))
        hostile = next(h for h in self.report["hosts"] if h["name"] == "gpu200")
        self.assertEqual(hostile["outcome"], "cleaned", hostile["summary"])
        self.assertIn("&lt;/script&gt;&lt;script&gt;document.title=", self.page)
        self.assertIn("caf\ufffd \ufffd\ufffd", self.page)   # invalid UTF-8 replaced
        self.assertIn("&lt;/script&gt;&lt;script&gt;document.title=", self.dom)

    def test_no_external_resources(self):
        for text in (self.page, self.dom):
            self.assertIsNone(re.search(r"(?i)\b(https?|ftp|wss?|file):", text))
            self.assertIsNone(re.search(r"(?i)@import|url\(", text))
            tags = Elements()
            tags.feed(text)
            for tag in ("link", "img", "iframe", "object", "embed", "source", "video",
                        "audio", "base", "form"):
                self.assertNotIn(tag, tags.tags)
            for tag, name, value in tags.attributes:
                self.assertNotIn(name, ("src", "srcset", "action", "background"), (tag, value))
                if name == "href":
                    self.assertTrue(value.startswith("#h"), value)
        self.assertIn("default-src 'none'", self.page)

    def test_a_bad_path_exits_64_before_any_host(self):
        argv = fleetreap_argv(self.fleet, "--html", "/nonexistent/dir/r.html", "--quiet")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 64, proc.stderr)
        self.assertIn("--html /nonexistent/dir/r.html: cannot write there", proc.stderr)
        self.assertEqual(proc.stdout, "")   # no verdict: nothing ran

    def test_merge_writes_the_page_too(self):
        merged = os.path.join(self.tmp, "merged.html")
        proc = subprocess.run([BIN, "merge", self.json_path, "--html", merged, "--color", "never"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        with open(merged, encoding="utf-8") as f:
            page = f.read()
        self.assertEqual(page.count('<details class="host '), 200)
        self.assertIn('<td class="grp">ungrouped</td>', page)   # reports keep no groups
        self.assertNotIn('<td class="grp">scenario_', page)

    def test_screenshot_is_kept(self):
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "html-report.png")
        if os.path.exists(shot):
            os.unlink(shot)
        result = chromium("--hide-scrollbars", "--window-size=1400,2400",
                          f"--screenshot={shot}", "file://" + self.page_path)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        with open(shot, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(shot), 10000)
        print(f"\nscreenshot: {shot}")


if __name__ == "__main__":
    unittest.main()
