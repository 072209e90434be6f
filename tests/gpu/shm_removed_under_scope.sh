#!/usr/bin/env bash
# Runs fleetreap --local --gpus 0 (a scope) on a machine with a real NVIDIA
# GPU against a workload this script starts itself: an orphaned PyTorch
# worker on GPU 0 that maps its own NCCL-style /dev/shm segment and closes
# its fd (as NCCL does), beside a co-tenant's leftover segment of the same
# user that no process holds. Under a scope only the segments of the
# holders the run signalled go: the worker's is removed, the co-tenant's is
# kept. Safety: a dry run comes first, and the real run happens only if the
# worker is the only process fleetreap would signal. It never resets a GPU.
# Needs: FLEETREAP (binary), python3 + torch. Prints SHM UNDER SCOPE OK.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
log="$out/shm-under-scope.txt"
exec > >(tee "$log") 2>&1

cotenant=/dev/shm/nccl-fleetreap-cotenant-$$
head -c 65536 /dev/zero > "$cotenant"
python3 - <<'PY'
import subprocess, sys
code = r'''
import mmap, os, time, torch
x = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda:0")
path = "/dev/shm/nccl-fleetreap-scope-%d" % os.getpid()
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 65536)
m = mmap.mmap(fd, 65536)
os.close(fd)
print("worker ready", path, flush=True)
time.sleep(600)
'''
p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                     stdout=open("/tmp/shm-worker.out", "w"), stderr=subprocess.STDOUT)
open("/tmp/shm-worker.pid", "w").write(str(p.pid))
PY
worker=$(cat /tmp/shm-worker.pid)
for _ in $(seq 1 60); do grep -q ready /tmp/shm-worker.out 2>/dev/null && break; sleep 1; done
ours=/dev/shm/nccl-fleetreap-scope-$worker
echo "== workload: orphaned worker pid $worker, its segment $ours (mapped, fd closed), co-tenant $cotenant"
grep -c "nccl-fleetreap-scope" "/proc/$worker/maps"
ls -l --time-style=+ "$ours" "$cotenant"

echo "== fleetreap --local --gpus 0 --dry-run"
"$bin" --local --gpus 0 --dry-run --json "$out/shm-dry-run.json"; echo "exit $?"
python3 - "$out/shm-dry-run.json" "$worker" <<'PY' || { echo "plan names something we did not start: stopping"; kill -KILL "$worker"; rm -f "$ours" "$cotenant"; exit 1; }
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets), "would remove:", host.get("shm_would_remove", []))
sys.exit(0 if targets == {int(sys.argv[2])} else 1)
PY

echo "== fleetreap --local --gpus 0"
"$bin" --local --gpus 0 --json "$out/shm-run.json"; rc=$?
echo "exit $rc"
python3 - "$out/shm-run.json" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
print("status:", host["status"], "shm_removed:", host.get("shm_removed"), "shm_kept:", host.get("shm_kept"))
PY
kill -0 "$worker" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$worker/stat" | cut -d' ' -f1)" != Z ] &&
  { echo "worker $worker STILL ALIVE"; kill -KILL "$worker"; }
ok=1
if [ -e "$ours" ]; then echo "the worker's segment is still there"; ok=; rm -f "$ours"; else echo "the worker's segment was removed"; fi
if [ -e "$cotenant" ]; then echo "the co-tenant's segment was kept"; else echo "the co-tenant's segment was REMOVED"; ok=; fi
rm -f "$cotenant"
[ -n "$ok" ] && [ "$rc" = 0 ] && echo "SHM UNDER SCOPE OK"
