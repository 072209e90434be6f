#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU that a user cannot make the host
# unjudgeable (issue 25, point 4): beside one real PyTorch holder (fd shape,
# 4096 MiB), 2,500 sleepers that hold only /dev/nvidiactl, one process with
# about 1,048,576 fds (dup()s of one /dev/nvidiactl fd, up to fs.nr_open) in
# 64 threads, and one with a 5 MB command line holding /dev/nvidiactl. The
# dry run must name exactly the PyTorch holder (the control-only holders are
# over the scan's cap of 64: counted, never described or signalled) and
# judge the host (not failed), its step times printed; the real run must
# free the GPU and end dirty, naming the 2,502 control-only holders.
# Safety: only processes this script started are ever on a plan or killed
# (by PID); it never resets a GPU.
# Needs: FLEETREAP (binary), python3 + torch, root (RLIMIT_NOFILE to 1M+).
# Writes under $OUT: volume-run.txt, volume-*.json.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
exec > >(tee "$out/volume-run.txt") 2>&1
echo "== $(date -u +%FT%TZ) $(uname -r); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
pids=

cleanup() {
  # shellcheck disable=SC2086  # the PIDs this script started
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
}
trap cleanup EXIT

python3 "$here/gpu_holder.py" fd 4096 "$work/torch.pid"
for _ in $(seq 1 120); do [ -f "$work/torch.pid.ready" ] && break; sleep 0.25; done
torch=$(cat "$work/torch.pid" 2>/dev/null)
[ -n "$torch" ] || { echo "the PyTorch holder did not start"; exit 1; }
pids="$torch"

for _ in $(seq 2500); do
  (exec 3</dev/nvidiactl; exec sleep 900) &
  pids="$pids $!"
done
python3 - "$work/fds.pid" <<'PY' &
import os, resource, sys, threading, time
limit = min(1 << 20, int(open("/proc/sys/fs/nr_open").read()))
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
except (ValueError, OSError):  # no CAP_SYS_RESOURCE (a container): the hard limit
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
fd = os.open("/dev/nvidiactl", os.O_RDONLY)
for _ in range(limit - 64):
    os.dup(fd)
for _ in range(63):
    threading.Thread(target=time.sleep, args=(900,), daemon=True).start()
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(900)
PY
pids="$pids $!"
(ulimit -s unlimited 2>/dev/null || ulimit -s 65536
 # shellcheck disable=SC2046  # 80,000 arguments of 64 bytes: a 5 MB argv
 exec python3 -c 'import time; f = open("/dev/nvidiactl"); time.sleep(900)' \
   $(python3 -c 'print(" ".join(["x" * 64] * 80000))')) &
pids="$pids $!"
for _ in $(seq 1 240); do [ -s "$work/fds.pid" ] && break; sleep 0.5; done
sleep 2
many=/proc/$(cat "$work/fds.pid")
echo "== started: torch $torch, 2500 nvidiactl sleepers, $(find "$many/fd" -mindepth 1 -maxdepth 1 | wc -l) fds in $(find "$many/task" -mindepth 1 -maxdepth 1 | wc -l) threads, a 5 MB argv ($(wc -c </proc/"${pids##* }"/cmdline) bytes)"

start=$(date +%s.%N)
"$bin" --local --dry-run --json "$work/volume-dry.json" -v >"$work/dry-table.txt" 2>&1; rc=$?
end=$(date +%s.%N)
echo "dry run exit $rc, wall $(python3 -c "print(round($end-$start,2))") s"
python3 - "$work/volume-dry.json" "$torch" <<'PY' || { echo "VOLUME FAILED (dry run)"; exit 1; }
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
targets = {x["pid"] for x in h["holders"] if x["fate"] in ("would_term", "would_kill")}
print("status", h["status"], "holders", len(h["holders"]), "would signal", sorted(targets))
print("notes", h.get("notes"), "timings", h.get("timings"))
ok = h["status"] != "failed" and targets == {int(sys.argv[2])}
counted = [int(n.split()[0]) for n in h.get("notes", []) if "processes hold only NVIDIA control" in n]
print("control-only holders counted:", counted)
ok = ok and bool(counted) and counted[0] >= 2502
sys.exit(0 if ok else 1)
PY
"$bin" --local --json "$work/volume-run.json"; rc=$?
echo "run exit $rc (1: dirty, the control-only holders are still there)"
python3 - "$work/volume-run.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
print("status", h["status"], "term_sent", h["term_sent"], "kill_sent", h["kill_sent"],
      "error", h.get("error_message"))
PY
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
if [ -d "/proc/$torch" ] && ! grep -q '^State:.*Z' "/proc/$torch/status"; then
  echo "VOLUME FAILED: the PyTorch holder $torch is still alive"
else
  echo "VOLUME OK"
fi
cp "$work"/*.json "$out/" 2>/dev/null
