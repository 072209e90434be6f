#!/usr/bin/env bash
# The "GPU 5" story on a real NVIDIA GPU: a supervisor (plain Python, never
# touches the GPU) runs a PyTorch worker that holds GPU memory and ignores
# SIGTERM, and starts it again once when it dies, the way a job queue or a
# restart policy does. fleetreap --local must kill the first worker, find the
# second in its re-scan, kill it too, and name the supervisor. Also captures
# the default nvidia-smi table (idle and loaded) as a fixture for the fake.
# Safety: a dry run comes first, and the real run happens only if every
# process on the plan is one this script started. It kills only PIDs it
# started. It never resets a GPU.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
# PLAYBOOK (optional) is passed as --playbook.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
tag=${TAG:-default}
log="$out/straggler-$tag.txt"
work=$(mktemp -d)
exec > >(tee "$log") 2>&1
playbook=()
[ -n "${PLAYBOOK:-}" ] && playbook=(--playbook "$PLAYBOOK")

echo "== before"; nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
nvidia-smi > "$out/table-idle.txt" 2>&1

cat > "$work/worker.py" <<'PY'
import signal, sys, time
t0 = time.time()
import torch
signal.signal(signal.SIGTERM, signal.SIG_IGN)
torch.cuda.init()
t1 = time.time()
x = torch.empty(int(4 * 2**30), dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print(f"worker ready: import+init {t1 - t0:.2f} s, allocated at +{time.time() - t0:.2f} s",
      flush=True)
time.sleep(600)
PY
cat > "$work/supervisor.py" <<'PY'
import os, subprocess, sys, time
work = sys.argv[1]
def start(n):
    p = subprocess.Popen([sys.executable, f"{work}/worker.py"],
                         stdout=open(f"{work}/worker{n}.out", "w"), stderr=subprocess.STDOUT)
    open(f"{work}/worker{n}.pid", "w").write(str(p.pid))
    print(f"{time.time():.3f} started worker {n}: pid {p.pid}", flush=True)
    return p
p = start(1)
p.wait()
print(f"{time.time():.3f} worker 1 ended ({p.returncode}); starting it again", flush=True)
p = start(2)
p.wait()
print(f"{time.time():.3f} worker 2 ended ({p.returncode}); not again", flush=True)
time.sleep(600)
PY
python3 "$work/supervisor.py" "$work" > "$work/supervisor.out" 2>&1 &
supervisor=$!
for _ in $(seq 1 90); do grep -q ready "$work/worker1.out" 2>/dev/null && break; sleep 1; done
worker1=$(cat "$work/worker1.pid")
echo "== workload: supervisor $supervisor, worker $worker1: $(cat "$work/worker1.out")"
nvidia-smi > "$out/table-load.txt" 2>&1
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv

# The supervisor first: killed after its worker, it would start the next
# one (seen on the H200: a worker 2 left holding 4.6 GiB).
cleanup() {
  kill -KILL "$supervisor" 2>/dev/null
  wait "$supervisor" 2>/dev/null   # not a bare wait: that would wait for tee
  for f in "$work"/worker*.pid; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done
}

echo "== fleetreap --local --dry-run"
"$bin" --local --dry-run "${playbook[@]}" --json "$out/straggler-$tag-dry.json"; echo "exit $?"
python3 - "$out/straggler-$tag-dry.json" "$worker1" <<'PY' || { echo "plan names something we did not start: stopping"; cleanup; exit 1; }
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets))
sys.exit(0 if targets == {int(sys.argv[2])} else 1)
PY

echo "== fleetreap --local ${playbook[*]}"
start=$(date +%s.%N)
"$bin" --local "${playbook[@]}" --json "$out/straggler-$tag.json" --log-dir "$out/logs-$tag"; rc=$?
end=$(date +%s.%N)
echo "exit $rc, wall $(python3 -c "print(round($end-$start,2))") s"
# The steps: with the supervisor alive the settle re-scan carries the
# /dev/shm clean ("rescan+clean_shm"); no round trip may follow the last
# re-scan (alone, or riding on a wave: "term+rescan+clean_shm"), and the host must end clean, or not_ready with the supervisor
# (alive after starting the worker again) as the reason.
python3 - "$out/straggler-$tag.json" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
steps = [t["step"] for t in host.get("timings", [])]
print("steps:", " ".join(steps), "| status:", host.get("status"))
last = max((i for i, s in enumerate(steps) if "rescan" in s.split("+")), default=-1)
reasons = [f["kind"] for f in host.get("findings", []) if f.get("reason")]
judged = host.get("status") == "clean" or \
    (host.get("status") == "not_ready" and reasons == ["restarter_alive"])
ok = last >= 0 and last == len(steps) - 1 and judged
print("SETTLE CARRIES THE CLEAN OK" if ok else "SETTLE CARRIES THE CLEAN FAIL")
PY
cat "$work/supervisor.out"
for n in 1 2; do [ -f "$work/worker$n.out" ] && echo "worker $n: $(cat "$work/worker$n.out")"; done
echo "== right after"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
sleep 8
echo "== 8 s later"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
for f in "$work"/worker*.pid; do
  pid=$(cat "$f"); kill -0 "$pid" 2>/dev/null && echo "$(basename "$f" .pid) $pid STILL ALIVE" || echo "$(basename "$f" .pid) $pid gone"
done
cleanup
tar -C "$out" -cf "$out/logs-$tag.tar" "logs-$tag" && rm -rf "$out/logs-$tag"
rm -rf "$work"
