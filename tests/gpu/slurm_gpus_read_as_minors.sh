#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU that fleetreap reads
# SLURM_JOB_GPUS as device minors: the driver's
# /proc/driver/nvidia/gpus/BUS/information names each GPU's minor, the scan
# turns the job's minors into nvidia-smi indexes through it, and a minor no
# GPU has fails the host. Dry runs only: nothing is signalled or removed.
# Needs: FLEETREAP, its libraries. Writes $OUT/slurm-minors-run.txt and
# $OUT/slurm-minors.tar (the reports).
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
cap=$(mktemp -d)
exec > >(tee "$out/slurm-minors-run.txt") 2>&1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader)"
for f in /proc/driver/nvidia/gpus/*/information; do echo "## $f"; cat "$f"; done
for gpus in 0 1; do
  echo "== SLURM_JOB_ID=4242 SLURM_JOB_GPUS=$gpus fleetreap --local --dry-run"
  SLURM_JOB_ID=4242 SLURM_JOB_GPUS=$gpus "$bin" --local --dry-run --json "$cap/minor-$gpus.json" \
    --color never; echo "exit $?"
  python3 - "$cap/minor-$gpus.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
h = r["hosts"][0]
print("scope", r["scope"], "status", h["status"], "error", h.get("error_message"),
      "gpus", [(g["index"], g["state"]) for g in h["gpus_before"]])
PY
done
tar -C "$cap" -cf "$out/slurm-minors.tar" .
