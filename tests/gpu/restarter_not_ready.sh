#!/usr/bin/env bash
# Never READY while a restarter lives, on a real NVIDIA GPU: a supervisor
# (plain Python, never touches the GPU, outside any unit) runs a PyTorch
# worker that holds 10 GiB and answers SIGTERM, and starts it again once,
# DELAY seconds after it died (the new worker needs about 5 s of CUDA
# start-up before it holds the GPU). For each delay in DELAYS (default
# "0.5 3 6"), fleetreap --local must never end READY (exit 0, clean) while the
# worker comes back: either it catches the restart (a second wave) and the GPU
# then stays at 0 MiB, or it says the host is not clean. The GPU is watched
# for 12 s after fleetreap ends, and each case prints one verdict line
# ("RESTARTER case DELAY OK|FAIL") with the run's time and the steps. Then
# the orphan fast path: bench/real_gpu_bench.py (RUNS=1) for the time from a
# TERM-responsive orphan's kill to verified clean.
# Safety: a dry run comes first, and the real run happens only if every
# process on the plan is one this script started. It kills only PIDs it
# started. It never resets a GPU.
# Needs: FLEETREAP (binary), python3 + torch; BENCH (optional): the source tree's
# bench/ folder, with tests/gpu and playbooks/ beside it as in the tree.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
log="$out/restarter.txt"
exec > >(tee "$log") 2>&1
work=$(mktemp -d)

cat > "$work/worker.py" <<'PY'
import sys, time
t0 = time.time()
import torch
torch.cuda.init()
x = torch.empty(int(10 * 2**30), dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print(f"{time.time():.3f} worker ready: allocated at +{time.time() - t0:.2f} s", flush=True)
time.sleep(600)
PY
cat > "$work/supervisor.py" <<'PY'
import subprocess, sys, time
work, delay = sys.argv[1], float(sys.argv[2])
def start(n):
    p = subprocess.Popen([sys.executable, f"{work}/worker.py"],
                         stdout=open(f"{work}/worker{n}.out", "w"), stderr=subprocess.STDOUT)
    open(f"{work}/worker{n}.pid", "w").write(str(p.pid))
    print(f"{time.time():.3f} started worker {n}: pid {p.pid}", flush=True)
    return p
p = start(1)
p.wait()
print(f"{time.time():.3f} worker 1 ended ({p.returncode}); again in {delay} s", flush=True)
time.sleep(delay)
p = start(2)
p.wait()
print(f"{time.time():.3f} worker 2 ended ({p.returncode}); not again", flush=True)
time.sleep(600)
PY

used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '{s+=$1} END {print s+0}'; }

one_case() {  # one_case DELAY
  local delay=$1 tag="delay-$1" supervisor rc start end
  rm -f "$work"/worker*.pid "$work"/worker*.out
  python3 "$work/supervisor.py" "$work" "$delay" > "$work/supervisor.out" 2>&1 &
  supervisor=$!
  for _ in $(seq 1 90); do grep -q ready "$work/worker1.out" 2>/dev/null && break; sleep 1; done
  local worker1; worker1=$(cat "$work/worker1.pid")
  echo "== case $delay s: supervisor $supervisor, worker $worker1: $(cat "$work/worker1.out")"
  stop_all() {
    kill -KILL "$supervisor" 2>/dev/null; wait "$supervisor" 2>/dev/null
    for f in "$work"/worker*.pid; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done
    for _ in $(seq 1 30); do [ "$(used)" -lt 100 ] && break; sleep 0.5; done
  }
  "$bin" --local --dry-run --json "$out/$tag-dry.json" >/dev/null 2>&1
  if ! python3 - "$out/$tag-dry.json" "$worker1" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
sys.exit(0 if targets == {int(sys.argv[2])} else 1)
PY
  then echo "plan names something we did not start: stopping"; stop_all; return 1; fi
  start=$(date +%s.%N)
  "$bin" --local --json "$out/$tag.json" > "$out/$tag-table.txt" 2>&1; rc=$?
  end=$(date +%s.%N)
  local wall; wall=$(python3 -c "print(round($end-$start,2))")
  # The GPU for 12 s after fleetreap ended: any memory back?
  local most=0 now
  for _ in $(seq 1 24); do now=$(used); [ "$now" -gt "$most" ] && most=$now; sleep 0.5; done
  cat "$work/supervisor.out"
  python3 - "$out/$tag.json" "$rc" "$wall" "$most" "$delay" <<'PY'
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
rc, wall, most, delay = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
steps = " ".join(t["step"] for t in host.get("timings", []))
ready = rc == 0 and host["status"] == "clean"
alive = [f["text"] for f in host.get("findings", []) if f["kind"] == "restarter_alive"]
print(f"status {host['status']}, exit {rc}, wall {wall} s, rounds {host['rounds']}, "
      f"respawning_parent {host.get('respawning_parent')}, GPU max after {most} MiB")
print("steps:", steps)
for text in alive: print("named:", text)
ok = not (ready and most > 100)
print(f"RESTARTER case {delay} {'OK' if ok else 'FAIL'}")
PY
  stop_all
}

echo "== before: $(used) MiB"
for d in ${DELAYS:-0.5 3 6}; do one_case "$d"; done
if [ -n "${BENCH:-}" ]; then
  echo "== orphan fast path"
  mkdir -p "$out/bench"
  python3 "$BENCH/real_gpu_bench.py" --fleetreap "$bin" --runs "${RUNS:-1}" --out "$out/bench" 2>&1 |
    tail -14
fi
echo "== after: $(used) MiB"
rm -rf "$work"
