"""What the integration suites (tests/integration/test_*.py) share: where the
source tree, the fleetreap binary and the simulator are; one simulated fleet
per test class (FleetCase) or per test (scratch_fleet); the command lines that
run fleetreap against a fleet, over SSH or with --local inside a host; and
reading its JSON report.

CTest runs each suite as `/usr/bin/python3 tests/integration/test_X.py` with
FLEETREAP_BIN, FLEETREAP_SIM_BIN_DIR, FLEETREAP_SOURCE_DIR and
PYTHONPATH=tests/sim set (tests/integration/CMakeLists.txt). Run by hand, the
source tree is found from this file and the binary in build/. Importing this
module puts tests/sim on sys.path, so a suite imports simfleet, scenarios,
host_setup... after it. Not a test itself (CTest runs test_*.py only).
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.environ.get("FLEETREAP_SOURCE_DIR", os.path.join(HERE, "..", "..")))
SIM_DIR = os.path.join(SOURCE, "tests", "sim")
BIN = os.path.abspath(os.environ.get("FLEETREAP_BIN", os.path.join(SOURCE, "build", "fleetreap")))

if SIM_DIR not in sys.path:
    sys.path.insert(0, SIM_DIR)

import ground_truth  # noqa: E402
from simfleet import Fleet, cgroups_available, scratch_dir  # noqa: E402


def playbook_path(name):
    """playbooks/NAME of the source tree (an absolute path is kept)."""
    return os.path.join(SOURCE, "playbooks", name)


def needs_cgroups(cls):
    """Skips a test class where simulated hosts get no cgroups."""
    return unittest.skipUnless(cgroups_available(), "needs a writable cgroup v2 hierarchy")(cls)


# ---- one fleet per test class, or per test ----------------------------------

class FleetCase(unittest.TestCase):
    """A test class whose tests share one simulated fleet: setUpClass brings
    SPECS up in a new scratch directory (cls.tmp, the fleet in cls.tmp/fleet,
    as cls.fleet), tearDownClass takes it down. A class that needs more
    set-up calls super().setUpClass() first; one with its own tear-down calls
    super().tearDownClass() where the fleet must go."""

    PREFIX = "fleet-"   # of the scratch directory under /tmp
    SPECS = ()          # the HostSpecs to bring up
    UP = {}             # more keyword arguments of Fleet.up (slurm=, timeout=)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = scratch_dir(prefix=cls.PREFIX)
        cls.fleet = Fleet(os.path.join(cls.tmp, "fleet"))
        cls.fleet.up(list(cls.SPECS), **cls.UP)

    @classmethod
    def tearDownClass(cls):
        cls.fleet.down()
        super().tearDownClass()


@contextlib.contextmanager
def scratch_fleet(prefix, specs, **up):
    """A fleet for one test: yields (scratch directory, fleet), the fleet up
    in DIR/fleet; it goes down on leaving, on failure too."""
    tmp = scratch_dir(prefix=prefix)
    with Fleet(os.path.join(tmp, "fleet")) as fleet:
        fleet.up(specs, **up)
        yield tmp, fleet


# ---- running fleetreap -------------------------------------------------------

def fleetreap_argv(fleet, *args, identity=True):
    """fleetreap over SSH against the fleet's inventory and known_hosts (and
    its key with identity), then ARGS."""
    argv = [BIN, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts]
    if identity:
        argv += ["--identity", fleet.key]
    return argv + list(args)


def parse_report(proc, errors="strict"):
    """The JSON report on a finished fleetreap's stdout, from its first '{'.
    A run with bytes output is decoded with 'errors'. No report: the test
    fails with the exit code and the end of stderr."""
    out, err = proc.stdout, proc.stderr or ""
    if isinstance(out, bytes):
        out = out.decode("utf-8", errors=errors)
    if isinstance(err, bytes):
        err = err.decode("utf-8", errors="replace")
    try:
        return json.loads(out[out.index("{"):])
    except ValueError:
        raise AssertionError(f"no JSON report (exit {proc.returncode}): {err[-2000:]}")


def by_name(report):
    """{host name: host} of a report."""
    return {h["name"]: h for h in report["hosts"]}


def run_json(fleet, *args, playbook="default.yaml", command_timeout="8s", errors="strict",
             timeout=300):
    """fleetreap over SSH against the whole fleet with the playbook (a name
    in playbooks/ or a path), --json - and ARGS: (exit code, report). With
    errors="replace", output that is not UTF-8 is read all the same."""
    argv = fleetreap_argv(fleet, "--playbook", playbook_path(playbook),
                          "--command-timeout", command_timeout, "--json", "-", "--quiet",
                          "--color", "never", *args)
    if errors == "strict":
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    else:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout)
    return proc.returncode, parse_report(proc, errors)


def run_json_file(*args, env=None, timeout=300):
    """fleetreap ARGS --json FILE (a temporary file): (the finished process,
    text; the report, or None when fleetreap wrote none)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        proc = subprocess.run([BIN, *args, "--json", out], capture_output=True, text=True,
                              timeout=timeout, env=env)
        report = None
        if os.path.getsize(out) > 0:
            with open(out) as f:
                report = json.load(f)
        return proc, report
    finally:
        os.unlink(out)


def local_command(*args):
    """The shell command that runs fleetreap --local with --json - and ARGS
    (inside a host: Fleet.exec and its kin)."""
    return " ".join([BIN, "--local", "--json", "-", "--quiet", "--color", "never", *args])


def run_local(fleet, host, *args, timeout=120, **exec_args):
    """fleetreap --local ARGS inside the host (Fleet.exec; exec_args such as
    cgroup= go to it): (exit code, report)."""
    proc = fleet.exec(host, local_command(*args), timeout=timeout, **exec_args)
    return proc.returncode, parse_report(proc)


# ---- ground truth ------------------------------------------------------------

def live_processes(fleet):
    """{host: {(pid, exe)}} for every live process of every host."""
    return {name: {(p["pid"], p["exe"]) for p in procs}
            for name, procs in ground_truth.processes_by_host(fleet).items()}
