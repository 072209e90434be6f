#!/usr/bin/python3
"""record_replies: turns fleetreap --log-dir logs of real simulated hosts into
the recorded replies bench/tools/replay_sshd serves (bench/replies/).

  bench/record_replies.py --profile incident LOG [--out bench/replies]

Each command in LOG becomes PROFILE/STEPS.out (its stdout, the exact bytes:
the log prefixes each line with "  | ", writes each NUL as "\\0" and a line
break and each backslash as "\\\\", and states the byte count, which is
checked) and PROFILE/STEPS.rc (its exit status), STEPS being the step
headers the command prints (z 'scan 1', ...) joined by '+'. To re-record,
bring up one host of a scenario (scripts/fleet up --dir D --hosts 1
--scenario vllm_incident), run fleetreap with --log-dir on it, then this.
"""

import argparse
import os
import re

STAMP = rb"^\d{4}-\d\d-\d\dT\S+ "


def unescape(shown):
    """The bytes a logged stream held: "\\0" and the line break after it a
    NUL, "\\\\" a backslash (command_log.cc)."""
    out, i = bytearray(), 0
    while i < len(shown):
        c = shown[i:i + 1]
        if c == b"\\" and shown[i + 1:i + 2] == b"0":
            out += b"\0"
            i += 3 if shown[i + 2:i + 3] == b"\n" else 2
        elif c == b"\\" and shown[i + 1:i + 2] == b"\\":
            out += b"\\"
            i += 2
        else:
            out += c
            i += 1
    return bytes(out)


def commands(path):
    """[(command, rc, stdout)] of one --log-dir log, in order."""
    runs, cur, block = [], None, None
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    for line in lines:
        if re.match(STAMP + rb"run [^(\n]*\(timeout ", line):
            cur = {"cmd": [], "out": [], "outn": 0, "rc": None}
            runs.append(cur)
            block = "cmd"
            continue
        m = re.match(STAMP + rb"exited (\d+)", line)
        if m and cur:
            cur["rc"], block = int(m.group(1)), None
            continue
        if re.match(STAMP, line):
            block = None
            continue
        m = re.match(rb"^  (stdout|stderr) \((\d+) bytes", line)
        if m and cur:
            block = "out" if m.group(1) == b"stdout" else "err"
            if block == "out":
                cur["outn"] = int(m.group(2))
            continue
        if line.startswith(b"  $ ") and block == "cmd":
            cur["cmd"].append(line[4:])
        elif line.startswith(b"  | ") and block == "out":
            cur["out"].append(line[4:])
    result = []
    for r in runs:
        out = unescape(b"\n".join(r["out"]))
        if r["outn"] and len(out) == r["outn"] - 1:
            out += b"\n"
        if len(out) != r["outn"]:
            raise SystemExit(f"{path}: stdout is {len(out)} bytes, the log says {r['outn']}")
        result.append((b"\n".join(r["cmd"]), r["rc"], out))
    return result


STEP_WORDS = (b"scan", b"signal", b"shm", b"stop")
MAX_OCCURRENCES = 4  # replay_sshd.cc kMaxOccurrences


def steps_of(command):
    # Only the steps' own headers (replay_sshd.cc's kStepWords): a record
    # such as "shmh 1" that a step prints is not a step.
    words = re.findall(rb"z '([a-z]+) 1'", command)
    return "+".join(w.decode() for w in words if w in STEP_WORDS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "replies"))
    ap.add_argument("log")
    args = ap.parse_args()
    target = os.path.join(args.out, args.profile)
    os.makedirs(target, exist_ok=True)
    seen = {}
    for command, rc, out in commands(args.log):
        steps = steps_of(command)
        # The Nth time a step was sent is STEPS@N (the first plain STEPS:
        # the inspect's scan, the settle's re-scan is scan@2); replay_sshd
        # answers a session's Nth such step with the latest of them <= N.
        n = seen[steps] = seen.get(steps, 0) + 1
        if n > MAX_OCCURRENCES:
            continue
        name = steps if n == 1 else f"{steps}@{n}"
        with open(os.path.join(target, name + ".out"), "wb") as f:
            f.write(out)
        with open(os.path.join(target, name + ".rc"), "w") as f:
            f.write(f"{rc}\n")
        print(f"{args.profile}/{name}: {len(out)} bytes, exit {rc}")


if __name__ == "__main__":
    main()
