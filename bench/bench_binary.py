"""bench_binary: which fleetreap binary a benchmark runs (shared by the
scripts under bench/)."""

import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_fleetreap(explicit, tool):
    """The binary passed on the command line, else build/fleetreap, else the
    newest build*/fleetreap; exits naming "tool" when there is none."""
    if explicit:
        return os.path.abspath(explicit)
    default = os.path.join(ROOT, "build", "fleetreap")
    if os.path.exists(default):
        return default
    candidates = sorted(glob.glob(os.path.join(ROOT, "build*", "fleetreap")),
                        key=os.path.getmtime, reverse=True)
    if not candidates:
        sys.exit(f"{tool}: no build*/fleetreap; pass --fleetreap")
    return candidates[0]
