#!/usr/bin/env bash
# Runs fleetreap --local on a machine with a real NVIDIA GPU against a
# workload this script starts itself: a PyTorch "vLLM worker" that holds GPU
# memory and ignores SIGTERM, orphaned from its parent, plus an NCCL-style
# /dev/shm segment. Safety: a dry run comes first, and the real run happens
# only if every process fleetreap would signal and every file it would remove
# is one this script created. It never resets a GPU.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
log="$out/real-gpu-run.txt"
exec > >(tee "$log") 2>&1

echo "== before"; nvidia-smi --query-gpu=index,memory.used --format=csv,noheader

# A parent that starts a worker and exits: the worker is orphaned, as after
# `systemctl stop` with KillMode=process.
python3 - <<'PY'
import os, subprocess, sys
code = r'''
import torch, time, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
x = torch.empty(int(4 * 2**30), dtype=torch.uint8, device="cuda")
print("worker ready", flush=True)
time.sleep(600)
'''
p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                     stdout=open("/tmp/worker.out", "w"), stderr=subprocess.STDOUT)
open("/tmp/worker.pid", "w").write(str(p.pid))
PY
worker=$(cat /tmp/worker.pid)
for _ in $(seq 1 60); do grep -q ready /tmp/worker.out 2>/dev/null && break; sleep 1; done
shm=/dev/shm/nccl-fleetreap-demo-$worker
head -c 1048576 /dev/zero > "$shm"
echo "== workload: orphaned worker pid $worker (ppid $(ps -o ppid= -p "$worker")), $shm"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv

echo "== fleetreap --local --dry-run"
"$bin" --local --dry-run --json "$out/dry-run.json"; echo "exit $?"

# Only our own worker and our own file may be on the plan.
python3 - "$out/dry-run.json" "$worker" "$shm" <<'PY' || { echo "plan names something we did not start: stopping"; kill -KILL "$worker"; rm -f "$shm"; exit 1; }
import json, sys
report = json.load(open(sys.argv[1]))
host = report["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
files = set(host.get("shm_would_remove", []))
print("would signal:", sorted(targets), "would remove:", sorted(files))
print("protected:", [(h["pid"], h["name"]) for h in host["holders"] if h["fate"] == "protected"])
ok = targets == {int(sys.argv[2])} and files <= {sys.argv[3].rsplit("/", 1)[1], sys.argv[3]}
sys.exit(0 if ok else 1)
PY

echo "== fleetreap --local"
start=$(date +%s.%N)
"$bin" --local --json "$out/run.json" --log-dir "$out/logs"; rc=$?
end=$(date +%s.%N)
echo "exit $rc, wall $(python3 -c "print(round($end-$start,2))") s"
echo "== after"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
# A zombie (state Z, every thread exited) is gone for fleetreap: only its
# reaper has not collected it yet (on the H200, PID 1 reaps about 1.4 s late).
state=$(sed 's/.*) //' "/proc/$worker/stat" 2>/dev/null | cut -d' ' -f1)
threads=$(find "/proc/$worker/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
if [ -z "$state" ]; then echo "worker $worker gone"
elif [ "$state" = Z ] && [ "$threads" -le 1 ]; then echo "worker $worker gone (a zombie waiting for its reaper)"
else echo "worker $worker STILL ALIVE (state $state)"; kill -KILL "$worker"; fi
ls -la "$shm" 2>&1
rm -f "$shm"
tar -C "$out" -cf "$out/logs.tar" logs && rm -rf "$out/logs"
