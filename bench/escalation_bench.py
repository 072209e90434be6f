"""escalation_bench: how long the escalation takes on one simulated host, over
real SSH on loopback, with the real fleetreap binary. Prints numbers; asserts
nothing. The targets: a host whose workers exit 1.5 s after SIGTERM is
done in under 2 s with no SIGKILL; on a clean host the ladder (inspect to
verify) takes under 300 ms once the connection is up.

  FLEETREAP_BIN=build/fleetreap FLEETREAP_SIM_BIN_DIR=build/tests/sim \
      python3 bench/escalation_bench.py [RUNS]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SOURCE, "tests", "sim"))

from simfleet import Fleet, HostSpec  # noqa: E402

BIN = os.environ.get("FLEETREAP_BIN", os.path.join(SOURCE, "build", "fleetreap"))


def one_run(scenario):
    """Brings up one host of 'scenario', cleans it, returns its JSON report."""
    with tempfile.TemporaryDirectory(prefix="escbench-") as tmp:
        with Fleet(os.path.join(tmp, "fleet")) as fleet:
            fleet.up([HostSpec("gpu01", scenario=scenario)])
            proc = subprocess.run(
                [BIN, "--hosts", fleet.inventory, "--known-hosts", fleet.known_hosts,
                 "--identity", fleet.key, "--json", "-", "--quiet", "--color", "never"],
                capture_output=True, text=True, timeout=120)
            out = proc.stdout
            host = json.loads(out[out.index("{"):])["hosts"][0]
            host["clean_by_truth"] = fleet.ground_truth()["gpu01"]["clean"]
            return host


def summarize(label, values):
    print(f"  {label:<34} median {statistics.median(values):7.0f} ms   "
          f"min {min(values):6.0f}   max {max(values):6.0f}")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for scenario in ("clean", "slow_exit", "vllm_incident"):
        hosts = [one_run(scenario) for _ in range(runs)]
        print(f"{scenario} ({runs} runs, one host, loopback SSH)")
        connect = [sum(t["duration_ms"] for t in h["timings"] if t["step"] == "connect")
                   for h in hosts]
        ladder = [sum(t["duration_ms"] for t in h["timings"] if t["step"] != "connect")
                  for h in hosts]
        summarize("host total (connect included)", [h["duration_ms"] for h in hosts])
        summarize("connect", connect)
        summarize("ladder after connect", ladder)
        steps = {}
        for h in hosts:
            for t in h["timings"]:
                steps.setdefault(t["step"], []).append(t["duration_ms"])
        for step, values in steps.items():
            if step != "connect":
                summarize(f"  step {step}", values)
        print(f"  TERM sent {sum(h['term_sent'] for h in hosts)}, "
              f"KILL sent {sum(h['kill_sent'] for h in hosts)}, "
              f"status {sorted({h['status'] for h in hosts})}, "
              f"clean by ground truth {sum(h['clean_by_truth'] for h in hosts)}/{runs}")


if __name__ == "__main__":
    main()
