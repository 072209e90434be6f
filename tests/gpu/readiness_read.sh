#!/usr/bin/env bash
# Reads a real GPU host's readiness with fleetreap --local, as the inspect
# and verify scans collect it (docs/readiness.md): a dry run's JSON must
# carry a "readiness" object (not null) for the host, with each finding's
# reason and next step, and its status must follow it (clean, or not_ready
# with a blocking finding). Then times the inspect with the checks against
# `ready: off` (ROUNDS each, interleaved) and captures the scan's own GPU
# query and the kernel log's shape beside it. Signals nothing, resets
# nothing: every run is a dry run or the inspect playbook.
# Needs: FLEETREAP (binary), root (for /dev/kmsg), python3. OUT: where the
# log, the reports and the captures go.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
rounds=${ROUNDS:-20}
here=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$out/readiness-read.txt") 2>&1

echo "== the scan's GPU query (ScanGpuFields), as the driver answers it"
f=index,uuid,name,pci.bus_id,memory.used,memory.total,gpu_recovery_action
f=$f,ecc.mode.current,ecc.mode.pending,ecc.errors.uncorrected.volatile.total
f=$f,ecc.errors.uncorrected.aggregate.total,remapped_rows.correctable
f=$f,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure
f=$f,retired_pages.pending,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count
f=$f,fabric.state,fabric.status,persistence_mode,pcie.link.gen.current,pcie.link.gen.max
f=$f,pcie.link.width.current,pcie.link.width.max
nvidia-smi --query-gpu=$f --format=csv,nounits | tee "$out/scan-query.csv"; echo "exit=$?"
echo "== the driver's GPUs, NVSwitch nodes, the kernel log's first record"
find /proc/driver/nvidia/gpus/ /dev -maxdepth 1 -name '[0-9a-f]*:*' -o -maxdepth 1 -name 'nvidia-nvswitch*' | head -20
dd if=/dev/kmsg iflag=nonblock bs=8192 count=1 2>/dev/null | head -c 80; echo
dd if=/dev/kmsg iflag=nonblock bs=8192 count=262144 2>/dev/null \
  | grep -a -c 'NVRM: Xid' | sed 's/^/Xid lines: /'

echo "== fleetreap --local --dry-run --json"
"$bin" --local --dry-run --json "$out/readiness-dry.json" --color never; rc=$?
echo "exit=$rc"
python3 - "$out/readiness-dry.json" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
r = host["readiness"]
assert r is not None, "readiness not read: the scan did not collect the readings"
print("status:", host["status"], "ready:", r["ready"])
for f in r["findings"]:
    print(" ", f["severity"], f["check"], f["reason"], "-", f["text"])
assert host["status"] != ("clean" if not r["ready"] else "not_ready"), host["status"]
print("READINESS HOOKUP OK")
PY

echo "== inspect with the checks against ready: off ($rounds rounds each)"
off=$(mktemp --suffix=.yaml)
{ cat "$here/../../playbooks/inspect.yaml"; echo; echo "ready: off"; } > "$off"
python3 - "$bin" "$here/../../playbooks/inspect.yaml" "$off" "$rounds" <<'PY'
import statistics, subprocess, sys, time
binary, on, off, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
times = {"with checks": [], "ready: off": []}
for _ in range(rounds):
    for mode, playbook in (("with checks", on), ("ready: off", off)):
        start = time.monotonic()
        subprocess.run([binary, "--local", "--playbook", playbook, "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[mode].append((time.monotonic() - start) * 1000)
for mode, values in times.items():
    print(f"{mode:<12} median {statistics.median(values):7.1f} ms  "
          f"min {min(values):7.1f} ms  ({len(values)} runs)")
PY
rm -f "$off"
