#!/usr/bin/env bash
# Shows on a machine with a real NVIDIA GPU that fleetreap's signals go
# through pidfds: two orphaned PyTorch holders this script starts (one that
# answers SIGTERM, one that ignores it), a dry run whose plan must name
# exactly those two (else it stops), then the real run: the report's
# pidfd_sent must equal term_sent + kill_sent, both holders gone, the GPU
# back to what it read before. Prints PIDFD OK or PIDFD FAIL.
# Safety: only the processes this script started are ever on a plan or
# killed (by PID); it never resets a GPU.
# Needs: FLEETREAP (binary), python3 + torch, perl. Writes under $OUT.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
here=$(cd "$(dirname "$0")" && pwd)
cap=$(mktemp -d)
exec > >(tee "$out/pidfd-run.txt") 2>&1
echo "== $(date -u +%FT%TZ) $(uname -r); perl $(perl -e 'print $^V'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
# What this kernel and its seccomp filter answer to pidfd_open of our own PID.
perl -e '$f = syscall(434, $$ + 0, 0); print "pidfd_open(self): ", ($f < 0 ? "failed: $!" : "fd $f"), "\n"'
echo "== before"; nvidia-smi --query-gpu=index,memory.used --format=csv,noheader

pids=()
for on_term in exit ignore; do
  pf="$cap/$on_term.pid"
  python3 "$here/gpu_holder.py" fd 2048 "$pf" --on-term "$on_term"
  for _ in $(seq 1 120); do [ -f "$pf.ready" ] && break; sleep 0.25; done
  pid=$(cat "$pf" 2>/dev/null)
  [ -n "$pid" ] || { echo "holder ($on_term) did not start"; cat "$pf.log"; exit 1; }
  pids+=("$pid")
done
sleep 1
echo "== holders: ${pids[*]}"; nvidia-smi --query-compute-apps=pid,used_gpu_memory --format=csv

end_ours() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; }
"$bin" --local --dry-run --json "$cap/dry.json" >/dev/null; echo "dry run exit $?"
python3 - "$cap/dry.json" "${pids[@]}" <<'PY' || { echo "plan names something we did not start: stopping"; end_ours; echo "PIDFD FAIL"; exit 1; }
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets))
sys.exit(0 if targets == {int(p) for p in sys.argv[2:]} else 1)
PY

start=$(date +%s.%N)
"$bin" --local --json "$cap/run.json" --log-dir "$cap/logs"; rc=$?
end=$(date +%s.%N)
echo "exit $rc, wall $(python3 -c "print(round($end-$start,2))") s"
echo "== after"; nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
python3 - "$cap/run.json" "${pids[@]}" <<'PY'; ok=$?
import json, os, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
sent = host["term_sent"] + host["kill_sent"]
print("status", host["status"], "term_sent", host["term_sent"], "kill_sent", host["kill_sent"],
      "pidfd_sent", host.get("pidfd_sent"), "timings", [(t["step"], t["duration_ms"]) for t in host["timings"]])
def gone(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z" and len(os.listdir(f"/proc/{pid}/task")) <= 1
left = [p for p in sys.argv[2:] if not gone(p)]
print("left:", left)
open(sys.argv[1] + ".left", "w").write(" ".join(left))
sys.exit(0 if host["status"] == "clean" and sent >= 2 and host.get("pidfd_sent") == sent and not left else 1)
PY
# Only a holder just seen alive (still ours) is ended here.
read -r -a left < "$cap/run.json.left" 2>/dev/null || left=()
for p in "${left[@]}"; do kill -KILL "$p"; done
cp "$cap/run.json" "$out/pidfd-run.json"
if [ "$ok" = 0 ]; then echo "PIDFD OK"; else echo "PIDFD FAIL"; fi
exit "$ok"
