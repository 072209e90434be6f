#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU that fleetreap finds a holder by
# everything it holds: a process that keeps only
# mappings of the device files (its fds closed), and one whose main thread
# exited while a thread holds the GPU (state Z, /proc/PID/fd empty). For each
# shape: captures of what the host shows (nvidia-smi, fuser -v, /proc), a dry
# run whose plan must name exactly the holder this script started (else it
# stops), the real run, and what is left. Then bench/real_gpu_bench.py.
# Safety: only processes this script started are ever on a plan or killed
# (by PID); it never resets a GPU. With OLD_FLEETREAP set, that binary's
# dry run too (an older build), for comparison.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch,
# fuser. Writes under $OUT: holders-run.txt, holders-captures.tar, bench-*.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
here=$(cd "$(dirname "$0")" && pwd)
cap=$(mktemp -d)
exec > >(tee "$out/holders-run.txt") 2>&1
echo "== $(date -u +%FT%TZ) $(uname -r); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

# Only our own holder may be on the plan.
plan_is() {
  python3 - "$1" "$2" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets))
for h in host["holders"]:
    print("  holder", h["pid"], h["fate"], h.get("state"), h.get("comm"), h.get("devices"), h.get("gpus"))
print("  gpus:", [(g["index"], g["state"], g.get("memory_used_mib"), g.get("detail")) for g in host["gpus_before"]])
sys.exit(0 if targets == {int(sys.argv[2])} else 1)
PY
}

shape_run() {  # SHAPE MIB
  local shape=$1 mib=$2 pf="$cap/$1.pid" pid
  rm -f "$pf" "$pf.ready"
  python3 "$here/gpu_holder.py" "$shape" "$mib" "$pf"
  for _ in $(seq 1 120); do [ -f "$pf.ready" ] && break; sleep 0.25; done
  pid=$(cat "$pf" 2>/dev/null)
  [ -n "$pid" ] || { echo "$shape: holder did not start"; cat "$pf.log"; return 1; }
  sleep 1
  echo "== $shape: holder $pid"
  {
    echo "# $shape holder $pid"
    echo "## nvidia-smi"; nvidia-smi
    echo "## --query-compute-apps"; nvidia-smi --query-compute-apps=pid,used_gpu_memory --format=csv
    echo "## --query-gpu"; nvidia-smi --query-gpu=index,memory.used --format=csv
    echo "## fuser -v /dev/nvidia*"; fuser -v /dev/nvidia* 2>&1
    echo "## /proc/$pid/status"; grep -E '^(State|Threads|PPid):' "/proc/$pid/status"
    echo "## nvidia fds: leader $(find "/proc/$pid/fd" -lname '/dev/nvidia*' 2>/dev/null | wc -l), every thread $(find "/proc/$pid"/task/*/fd -lname '/dev/nvidia*' 2>/dev/null | wc -l)"
    echo "## maps lines of /dev/nvidia*: $(grep -c ' /dev/nvidia' "/proc/$pid/maps")"
    grep ' /dev/nvidia' "/proc/$pid/maps" | awk '{print $6}' | sort | uniq -c
  } > "$cap/$shape-host.txt" 2>&1
  sed -n '/compute-apps/,/fuser/p;/status/,$p' "$cap/$shape-host.txt" | head -40
  if [ -n "${OLD_FLEETREAP:-}" ]; then
    "$OLD_FLEETREAP" --local --dry-run --json "$cap/$shape-dry-before.json" >/dev/null
    echo "older binary (dry run exit $?):"; plan_is "$cap/$shape-dry-before.json" "$pid"
  fi
  "$bin" --local --dry-run --json "$cap/$shape-dry.json" >/dev/null; echo "dry run exit $?"
  if ! plan_is "$cap/$shape-dry.json" "$pid"; then
    echo "$shape: the plan is not exactly our holder: stopping it"; kill -KILL "$pid"; return 1
  fi
  local start end rc
  start=$(date +%s.%N)
  "$bin" --local --json "$cap/$shape-run.json" >"$cap/$shape-run-table.txt"; rc=$?
  end=$(date +%s.%N)
  cat "$cap/$shape-run-table.txt"
  echo "run exit $rc, wall $(python3 -c "print(round($end-$start,2))") s"
  python3 - "$cap/$shape-run.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
print("status", h["status"], "term_sent", h["term_sent"], "kill_sent", h["kill_sent"],
      "fates", [(x["pid"], x["fate"]) for x in h["holders"]], "timings", h["timings"])
PY
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
  # kill -0 passes for a zombie (exited, its reaper late): say which.
  case $(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null) in
    '') echo "holder $pid gone";;
    Z) echo "holder $pid exited (a zombie waiting for its reaper)";;
    *) echo "holder $pid STILL ALIVE: killing it"; kill -KILL "$pid";;
  esac
}

shape_run map 8192
shape_run threads 6144
echo "== bench"
python3 "$here/../../bench/real_gpu_bench.py" --fleetreap "$bin" --out "$cap" 2>&1 | tee "$out/bench-real-gpu.txt"
tar -C "$cap" -cf "$out/holders-captures.tar" .
