"""contrib/ci/: the GitHub Actions workflow and the GitLab CI job that run
fleetreap before a rollout. Each file is parsed and its structure checked
(secrets in, the gate script at its installed path, a dry-run plan job, a
real job behind a person's approval, reports kept whatever the outcome, the
HTML page among them, JUnit published, the Markdown summary, the rollout gated
on fleetreap's job); then the workflow's own steps (secrets to files, the
plan, the fleetreap step, the job summary) and the GitLab jobs' scripts run
as written, in a workspace without this repository's contrib/ (as copied
into another repository; the installed gate played by this tree's) against
a small simulated fleet, with the CI's secrets played by the fleet's inventory (without its key
variable), key and known_hosts. Needs root, the built fleetreap
(FLEETREAP_BIN), the simulator tools (FLEETREAP_SIM_BIN_DIR) and python3-yaml
(a dependency of ansible-core, which the set-up installs).
"""

import os
import re
import subprocess
import unittest
import xml.etree.ElementTree as ET

import yaml

from fleet_case import BIN, SOURCE, FleetCase
from simfleet import HostSpec

CI_DIR = os.path.join(SOURCE, "contrib", "ci")
GATE = 'sh "$FLEETREAP_GATE"'
INSTALLED_GATE = "/usr/share/fleetreap/contrib/ci/fleetreap-gate.sh"   # cmake/packaging.cmake
SOURCE_GATE = os.path.join(CI_DIR, "fleetreap-gate.sh")
REPORTS = ("junit.xml", "summary.md", "report.html", "failed-hosts.txt", "report.json",
           "exit-code")

# Only so that the refused host does not wait out the default retries.
FAST = "--connect-timeout 3s --retries 0"


def load(name):
    with open(os.path.join(CI_DIR, name)) as f:
        return yaml.safe_load(f)


class StructureTest(unittest.TestCase):
    """What a reviewer checks in the two files, without running them."""

    def test_github_workflow(self):
        wf = load("github-actions.yml")
        jobs = wf["jobs"]
        self.assertEqual(wf["env"]["FLEETREAP_GATE"], INSTALLED_GATE)
        self.assertEqual(list(jobs), ["plan", "fleetreap", "rollout"])
        plan = jobs["plan"]["steps"]
        dry = next(s for s in plan if s.get("id") == "fleetreap")
        self.assertEqual(dry["run"].strip(), GATE)
        self.assertEqual(dry["env"]["FLEETREAP_DRY_RUN"], "1")
        kept = next(s for s in plan if "upload-artifact" in s.get("uses", ""))
        self.assertEqual((kept["if"], kept["with"]["path"]),
                         ("always()", dry["env"]["FLEETREAP_OUT"] + "/"))
        self.assertIn(jobs["fleetreap"]["needs"], ("plan", ["plan"]))
        self.assertEqual(jobs["fleetreap"]["environment"], "fleet")   # required reviewers
        steps = jobs["fleetreap"]["steps"]
        gate = [s for s in steps if s.get("id") == "fleetreap"]
        self.assertEqual(len(gate), 1)
        self.assertEqual(gate[0]["run"].strip(), GATE)
        self.assertNotIn("FLEETREAP_DRY_RUN", gate[0]["env"])
        self.assertNotIn("if", gate[0])
        for job in ("plan", "fleetreap"):   # nothing of this repository is needed
            self.assertFalse(any("checkout" in s.get("uses", "")
                                 for s in jobs[job]["steps"]), job)
        secrets = next(s for s in steps if s.get("name") == "Secrets to files")
        self.assertEqual(sorted(secrets["env"].values()),
                         ["${{ secrets.FLEETREAP_INVENTORY }}",
                          "${{ secrets.FLEETREAP_KNOWN_HOSTS }}",
                          "${{ secrets.FLEETREAP_SSH_KEY }}"])
        after = steps[steps.index(gate[0]) + 1:]
        junit = next(s for s in after if "action-junit-report" in s.get("uses", ""))
        self.assertEqual(junit["with"]["report_paths"], "fleetreap-out/junit.xml")
        upload = next(s for s in after if "upload-artifact" in s.get("uses", ""))
        self.assertIn("fleetreap-out/failed-hosts.txt", upload["with"]["path"].split())
        self.assertIn("fleetreap-out/report.html", upload["with"]["path"].split())
        summary = next(s for s in after if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
        self.assertIn("fleetreap-out/summary.md", summary["run"])
        for step in (junit, upload, summary):
            self.assertEqual(step.get("if"), "always()", step)
        self.assertEqual(wf["permissions"].get("checks"), "write")
        rollout = jobs["rollout"]
        self.assertIn(rollout["needs"], ("fleetreap", ["fleetreap"]))
        self.assertNotIn("if", rollout)   # no always(): a failed gate skips it

    def test_gitlab_job(self):
        ci = load("gitlab-ci.yml")
        self.assertEqual(ci["variables"]["FLEETREAP_GATE"], INSTALLED_GATE)
        plan = ci["fleetreap-plan"]
        self.assertEqual(plan["script"], [GATE])
        self.assertEqual(plan["variables"]["FLEETREAP_DRY_RUN"], "1")
        self.assertEqual(plan["artifacts"]["when"], "always")
        job = ci["fleetreap"]
        self.assertEqual(job["script"], [GATE])
        self.assertEqual(job["variables"]["FLEETREAP_OUT"], "fleetreap-out")
        self.assertEqual(job["needs"], ["fleetreap-plan"])
        self.assertEqual(job["when"], "manual")          # a person starts it
        self.assertIs(job["allow_failure"], False)        # and the pipeline waits for it
        self.assertLess(ci["stages"].index(plan["stage"]), ci["stages"].index(job["stage"]))
        artifacts = job["artifacts"]
        self.assertEqual(artifacts["when"], "always")
        self.assertEqual(artifacts["reports"]["junit"], "fleetreap-out/junit.xml")
        for name in ("failed-hosts.txt", "summary.md", "report.html"):
            self.assertIn("fleetreap-out/" + name, artifacts["paths"])
        rollout = ci["rollout"]
        self.assertEqual([n["job"] if isinstance(n, dict) else n for n in rollout["needs"]],
                         ["fleetreap"])
        self.assertNotIn("when", rollout)   # on_success: only after a clean gate
        self.assertLess(ci["stages"].index(job["stage"]), ci["stages"].index(rollout["stage"]))


class RunTest(FleetCase):
    """The steps as written, against a simulated fleet."""

    PREFIX = "contrib-ci-"
    # README "Exit codes": a dirty host sets bit 1, an unreachable one bit 2.
    SPECS = [
        HostSpec("gpu01", scenario="clean", bystanders=10),
        HostSpec("gpu02", scenario="orphans", bystanders=10),
        HostSpec("gpu03", scenario="ghost_memory", bystanders=10),
        HostSpec("gpu04", scenario="unreachable", bystanders=10),
    ]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The CI's secrets: an inventory that names no key (the key comes
        # from the secret), the key, known_hosts.
        cls.secrets = os.path.join(cls.tmp, "secrets")
        os.makedirs(cls.secrets)
        with open(cls.fleet.inventory) as f:
            cls.inventory_text = "".join(line for line in f
                                         if "ansible_ssh_private_key_file" not in line)
        with open(cls.fleet.key) as f:
            cls.key_text = f.read()
        with open(cls.fleet.known_hosts) as f:
            cls.known_hosts_text = f.read()
        # fleetreap on PATH, as the runner has it installed.
        cls.bin_dir = os.path.join(cls.tmp, "bin")
        os.makedirs(cls.bin_dir)
        os.symlink(BIN, os.path.join(cls.bin_dir, "fleetreap"))

    def workspace(self, name):
        """A checkout as the runner sees it: another repository, with no
        contrib/ of fleetreap's."""
        path = os.path.join(self.tmp, name)
        os.makedirs(path)
        return path

    def base_env(self):
        """The runner's environment: fleetreap installed, its gate played by
        this tree's (the templates name the installed path)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETREAP_")}
        env["PATH"] = self.bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        env["FLEETREAP_GATE"] = SOURCE_GATE
        return env

    def step(self, run, cwd, env):
        return subprocess.run(["bash", "-e", "-c", run], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300)

    def check_reports(self, out, expected_rc, failed):
        for name in REPORTS:
            self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
        with open(os.path.join(out, "exit-code")) as f:
            self.assertEqual(f.read().strip(), str(expected_rc))
        with open(os.path.join(out, "failed-hosts.txt")) as f:
            self.assertEqual(f.read().split(), failed)
        suite = ET.parse(os.path.join(out, "junit.xml")).getroot().find("testsuite")
        self.assertEqual(suite.get("tests"), str(len(self.hosts_of(out))))
        failing = sorted(c.get("name") for c in suite.findall("testcase")
                         if c.find("failure") is not None or c.find("error") is not None)
        self.assertEqual(failing, failed)
        with open(os.path.join(out, "summary.md")) as f:
            summary = f.read()
        self.assertTrue(summary.startswith("#") or "|" in summary, summary[:200])
        return summary

    def hosts_of(self, out):
        import json
        with open(os.path.join(out, "report.json")) as f:
            return [h["name"] for h in json.load(f)["hosts"]]

    def test_github_workflow_steps(self):
        wf = load("github-actions.yml")
        jobs = wf["jobs"]
        steps = jobs["fleetreap"]["steps"]
        ws = self.workspace("github")
        runner_temp = os.path.join(ws, "_runner_temp")
        os.makedirs(runner_temp)
        github_env = os.path.join(ws, "_github_env")
        step_summary = os.path.join(ws, "_step_summary")
        open(github_env, "w").close()
        env = self.base_env()
        env.update(RUNNER_TEMP=runner_temp, GITHUB_ENV=github_env,
                   GITHUB_STEP_SUMMARY=step_summary)
        # The workflow's env: inputs.limit empty gives ''; the gate is
        # where the package puts it, played here by this tree's.
        self.assertEqual(wf["env"]["FLEETREAP_LIMIT"], "${{ inputs.limit }}")
        env["FLEETREAP_LIMIT"] = ""

        secrets = next(s for s in steps if s.get("name") == "Secrets to files")
        secret_values = {"secrets.FLEETREAP_INVENTORY": self.inventory_text,
                         "secrets.FLEETREAP_SSH_KEY": self.key_text,
                         "secrets.FLEETREAP_KNOWN_HOSTS": self.known_hosts_text}
        step_env = dict(env)
        for var, expr in secrets["env"].items():
            step_env[var] = secret_values[re.fullmatch(r"\$\{\{ (.+) \}\}", expr).group(1)]
        r = self.step(secrets["run"], ws, step_env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(github_env) as f:
            exported = dict(line.rstrip("\n").split("=", 1) for line in f if line.strip())
        self.assertEqual(sorted(exported), ["FLEETREAP_INVENTORY", "FLEETREAP_KNOWN_HOSTS",
                                            "FLEETREAP_SSH_KEY"])
        self.assertEqual(os.stat(exported["FLEETREAP_SSH_KEY"]).st_mode & 0o077, 0)
        env.update(exported)

        # The plan job's dry run: gpu04 cannot be inspected (2), nothing changes.
        dry = next(s for s in jobs["plan"]["steps"] if s.get("id") == "fleetreap")
        step_env = dict(env, FLEETREAP_ARGS=FAST, **{k: str(v) for k, v in dry["env"].items()})
        before = self.fleet.ground_truth()
        r = self.step(dry["run"], ws, step_env)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        plan_out = os.path.join(ws, dry["env"]["FLEETREAP_OUT"])
        for name in REPORTS:
            self.assertTrue(os.path.isfile(os.path.join(plan_out, name)), name)
        import json
        with open(os.path.join(plan_out, "report.json")) as f:
            self.assertTrue(json.load(f)["dry_run"])
        self.assertEqual(self.fleet.ground_truth()["gpu02"]["gpu_processes"],
                         before["gpu02"]["gpu_processes"])

        gate = next(s for s in steps if s.get("id") == "fleetreap")
        step_env = dict(env)
        for var, value in gate["env"].items():
            step_env[var] = str(value)
        step_env["FLEETREAP_ARGS"] = FAST
        r = self.step(gate["run"], ws, step_env)
        # gpu03 dirty (ghost memory) and gpu04 unreachable: 1 | 2.
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        out = os.path.join(ws, gate["env"]["FLEETREAP_OUT"])
        summary = self.check_reports(out, 3, ["gpu03", "gpu04"])

        shown = next(s for s in steps if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
        r = self.step(shown["run"], ws, env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(step_summary) as f:
            self.assertEqual(f.read(), summary)

    def test_gitlab_job_script(self):
        ci = load("gitlab-ci.yml")
        ws = self.workspace("gitlab")
        env = self.base_env()
        env.update({k: str(v) for k, v in ci["variables"].items()
                    if k != "FLEETREAP_GATE"})
        env.update({k: str(v) for k, v in ci["fleetreap"]["variables"].items()})
        # File variables: GitLab writes each to a file and passes its path.
        for var, text in (("FLEETREAP_INVENTORY", self.inventory_text),
                          ("FLEETREAP_SSH_KEY", self.key_text),
                          ("FLEETREAP_KNOWN_HOSTS", self.known_hosts_text)):
            path = os.path.join(ws, "_" + var)
            with open(path, "w") as f:
                f.write(text)
            env[var] = path
        # A pipeline variable narrows the run to the hosts that can be clean.
        env["FLEETREAP_ARGS"] = "--limit gpu01,gpu02 " + FAST
        r = self.step("\n".join(ci["fleetreap"]["script"]), ws, env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = os.path.join(ws, env["FLEETREAP_OUT"])
        self.check_reports(out, 0, [])
        self.assertEqual(sorted(self.hosts_of(out)), ["gpu01", "gpu02"])
        junit = ci["fleetreap"]["artifacts"]["reports"]["junit"]
        self.assertTrue(os.path.isfile(os.path.join(ws, junit)))

    def gate_env(self, ws):
        """The gate's environment with the CI's secrets as files in 'ws'."""
        env = self.base_env()
        for var, text in (("FLEETREAP_INVENTORY", self.inventory_text),
                          ("FLEETREAP_SSH_KEY", self.key_text),
                          ("FLEETREAP_KNOWN_HOSTS", self.known_hosts_text)):
            path = os.path.join(ws, "_" + var)
            with open(path, "w") as f:
                f.write(text)
            env[var] = path
        return env

    def test_readme_args_with_quotes_and_the_rerun_of_the_failed_hosts(self):
        # README "From CI": FLEETREAP_ARGS="--limit 'h200:&rack_b1'", quotes
        # and all (the quotes reached fleetreap, exit 64). This
        # fleet has no such groups: the same shape over its host names.
        ws = self.workspace("readme-args")
        env = self.gate_env(ws)
        env["FLEETREAP_ARGS"] = "--limit 'gpu0*:&gpu0[1:2]' " + FAST
        r = self.step(GATE, ws, env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = os.path.join(ws, "fleetreap-out")
        self.check_reports(out, 0, [])
        self.assertEqual(sorted(self.hosts_of(out)), ["gpu01", "gpu02"])
        # Nothing failed: the re-run of the failed hosts selects none, says
        # so in one line, exits 0 and still writes every report.
        env.pop("FLEETREAP_ARGS")
        env["FLEETREAP_LIMIT"] = "@fleetreap-out/failed-hosts.txt"
        r = self.step(GATE, ws, env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stderr, 'fleetreap: warning: --limit "@fleetreap-out/failed-hosts.txt": '
                                   "fleetreap-out/failed-hosts.txt is empty: no hosts selected\n")
        self.check_reports(out, 0, [])
        self.assertEqual(self.hosts_of(out), [])
        # A run that left failed hosts: the re-run takes exactly those.
        env.pop("FLEETREAP_LIMIT")
        env["FLEETREAP_ARGS"] = "--limit 'gpu01:gpu03:gpu04' " + FAST
        r = self.step(GATE, ws, env)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.check_reports(out, 3, ["gpu03", "gpu04"])
        env["FLEETREAP_ARGS"] = FAST
        env["FLEETREAP_LIMIT"] = "@fleetreap-out/failed-hosts.txt"
        r = self.step(GATE, ws, env)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.check_reports(out, 3, ["gpu03", "gpu04"])
        self.assertEqual(self.hosts_of(out), ["gpu03", "gpu04"])

    def test_gate_refuses_missing_secrets(self):
        ws = self.workspace("missing")
        env = self.base_env()
        r = self.step(GATE, ws, env)
        self.assertEqual(r.returncode, 64)
        self.assertIn("FLEETREAP_INVENTORY must name a readable file", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
