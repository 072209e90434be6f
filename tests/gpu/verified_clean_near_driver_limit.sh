#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU how close fleetreap --local comes
# to the driver's own limit: bench/real_gpu_bench.py measures kill -9 to idle
# GPU memory, then fleetreap's time to verified clean for an orphan that exits
# on SIGTERM (target: within 0.3 s of the driver's limit) and for one that
# ignores it (term_grace 2 s; target: within term_grace + 0.3 s), RUNS runs
# each (default 3), and ends with one PASS or FAIL line per target. The
# reports of each run go to $OUT/bench/ with the per-step times.
# Safety: the bench starts its own holders, plans each real run with a dry
# run that must name exactly its holder (else it stops and kills that holder
# by PID), and never resets a GPU.
# Needs: FLEETREAP (binary), python3 + torch. Writes under $OUT:
# bench-real-gpu.txt and bench/*.json. Exit 0 when both targets pass.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/bench"
{
  echo "== $(date -u +%FT%TZ) $(uname -r); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 "$here/../../bench/real_gpu_bench.py" --fleetreap "$bin" --runs "${RUNS:-3}" \
    --out "$out/bench" 2>&1
} | tee "$out/bench-real-gpu.txt"
! grep -q '^FAIL ' "$out/bench-real-gpu.txt" && grep -q '^PASS ' "$out/bench-real-gpu.txt"
