#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU how fleetreap treats MPS: this
# script starts its own MPS control daemon (root, from the driver's bin
# directory, with its own pipe and log directories) and an MPS
# client holding GPU memory; the client is a job, the control daemon and
# server are protected, and the server's own context (tens of MiB once its
# clients are gone) is within the playbook's daemon_allowance_mib, so the GPU
# reads clean with a note naming the server. With OLD_FLEETREAP set, the same
# run by that binary first (on a client of its own), for comparison.
# Safety: a dry run must plan to signal exactly the client this script
# started, else it stops; the MPS daemon is ended with "quit", or by the PID
# this script saw it start. It never resets a GPU.
# Needs: FLEETREAP, LD_LIBRARY_PATH, python3 + torch, nvidia-cuda-mps-control.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
here=$(cd "$(dirname "$0")" && pwd)
mps=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
cap=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$cap/pipe CUDA_MPS_LOG_DIRECTORY=$cap/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
exec > >(tee "$out/mps-run.txt") 2>&1
echo "== $(date -u +%FT%TZ) MPS control: $mps ($(stat -c '%U %a' "$mps"))"

pids() { for d in /proc/[0-9]*; do printf '%s ' "${d#/proc/}"; done; }
before=" $(pids) "
"$mps" -d; echo "mps-control -d: exit $?"
sleep 1
mine=
for p in $(pids); do
  case $before in *" $p "*) continue;; esac
  case $(readlink "/proc/$p/exe" 2>/dev/null) in *nvidia-cuda-mps-control) mine="$mine $p";; esac
done
echo "our MPS control daemon:$mine"

client_run() {  # LABEL BINARY
  local label=$1 b=$2 pf="$cap/client-$1.pid" pid
  python3 "$here/gpu_holder.py" fd 8192 "$pf"
  for _ in $(seq 1 120); do [ -f "$pf.ready" ] && break; sleep 0.25; done
  pid=$(cat "$pf" 2>/dev/null)
  [ -n "$pid" ] || { echo "client did not start"; cat "$pf.log"; return 1; }
  sleep 1
  echo "== $label: client $pid"
  { echo "## nvidia-smi"; nvidia-smi
    echo "## --query-compute-apps"; nvidia-smi --query-compute-apps=pid,used_gpu_memory --format=csv
    echo "## fuser -v"; fuser -v /dev/nvidia* 2>&1
    for s in $(pids); do
      case $(readlink "/proc/$s/exe" 2>/dev/null) in *nvidia-cuda-mps-*)
        echo "## $s $(readlink "/proc/$s/exe") uid $(awk '/^Uid/{print $2}' "/proc/$s/status") exe $(stat -L -c '%U %a' "/proc/$s/exe")";; esac
    done
  } > "$cap/$label-host.txt" 2>&1
  sed -n '/compute-apps/,$p' "$cap/$label-host.txt"
  "$b" --local --dry-run --json "$cap/$label-dry.json" >/dev/null
  python3 - "$cap/$label-dry.json" "$pid" <<'PY' || { echo "the plan is not exactly our client: stopping"; kill -KILL "$pid"; return 1; }
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
for h in host["holders"]:
    print("  holder", h["pid"], h["fate"], h.get("protected_by"), h.get("user"), h.get("comm"))
sys.exit(0 if targets == {int(sys.argv[2])} else 1)
PY
  "$b" --local --json "$cap/$label-run.json" > "$cap/$label-table.txt"; echo "run exit $?"
  cat "$cap/$label-table.txt"
  python3 - "$cap/$label-run.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
print("status", h["status"], [(g["index"], g["state"], g.get("memory_used_mib"), g.get("detail")) for g in h["gpus_after"]])
PY
  nvidia-smi --query-compute-apps=pid,used_gpu_memory --format=csv
  case $(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null) in
    ''|Z) ;;  # gone, or a zombie waiting for its reaper
    *) echo "client $pid STILL ALIVE: killing it"; kill -KILL "$pid";;
  esac
}

[ -n "${OLD_FLEETREAP:-}" ] && client_run before "$OLD_FLEETREAP"
client_run after "$bin"
echo quit | "$mps"; sleep 2
for p in $mine; do kill -0 "$p" 2>/dev/null && { echo "MPS control $p still there: killing it"; kill -KILL "$p"; }; done
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
cp "$CUDA_MPS_LOG_DIRECTORY"/control.log "$cap/" 2>/dev/null
rm -rf "$CUDA_MPS_PIPE_DIRECTORY"
tar -C "$cap" -cf "$out/mps-captures.tar" --exclude=pipe .
