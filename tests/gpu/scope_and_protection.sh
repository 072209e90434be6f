#!/usr/bin/env bash
# On a machine with a real NVIDIA GPU: protection, scope and the PID
# namespace check against real nvidia-smi, real cgroups and real CUDA jobs.
# Starts two PyTorch jobs in two cgroups of its own (job A, job B) and a
# third from a root-owned copy of python named /tmp/nvidia-persistenced
# (an impostor), then:
#   1. a dry run over the whole host: all three planned, the impostor named_like;
#   2. a dry run as job 7's Slurm epilog (SLURM_JOB_ID=7): nothing planned;
#   3. a dry run from a nested PID namespace: refused, nothing planned;
#   4. --cgroup <job A>: only job A is signalled; B and the impostor live.
# Safety: every real run is preceded by a dry run whose plan must name only
# PIDs this script started; it kills what it started by PID at the end.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
exec > >(tee "$out/scope-run.txt") 2>&1

echo "== machine"; uname -r; readlink /proc/self/ns/pid; cat /proc/self/cgroup
nvidia-smi --query-gpu=index,memory.used,gpu_recovery_action --format=csv,noheader
cg=; for c in /sys/fs/cgroup /sys/fs/cgroup/unified; do
  [ -f $c/cgroup.procs ] && mkdir -p $c/fleetreap-dev/jobA $c/fleetreap-dev/jobB 2>/dev/null && cg=$c && break
done
echo "cgroup v2 root: ${cg:-none}"

cat > /tmp/sworker.py <<'PY'
import torch, time, sys
x = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda")
print("ready", sys.argv[1], flush=True)
time.sleep(600)
PY
start() {  # start NAME CGROUP PYTHON: an orphaned job, its PID on stdout
  setsid sh -c "[ -n '$2' ] && echo \$\$ > '$2/cgroup.procs'; exec $3 /tmp/sworker.py $1" \
    >"/tmp/sworker.$1" 2>&1 </dev/null &
}
cp "$(readlink -f "$(command -v python3)")" /tmp/nvidia-persistenced
# The copy finds the real interpreter's modules (torch) through PYTHONPATH.
PYTHONPATH=$(python3 -c 'import sys; print(":".join(p for p in sys.path if p))')
export PYTHONPATH
start A "${cg:+$cg/fleetreap-dev/jobA}" python3
start B "${cg:+$cg/fleetreap-dev/jobB}" python3
start I "" /tmp/nvidia-persistenced
for _ in $(seq 1 120); do
  n=$(cat /tmp/sworker.A /tmp/sworker.B /tmp/sworker.I 2>/dev/null | grep -c ready); [ "$n" = 3 ] && break; sleep 1
done
tail -2 /tmp/sworker.I
ours=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | tr -d ' ' | sort -n | tr '\n' ' ')
echo "== jobs (compute apps): $ours"
for p in $ours; do echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60) | $(tr '\n' ' ' <"/proc/$p/cgroup")"; done
A=; for p in $ours; do grep -q fleetreap-dev/jobA "/proc/$p/cgroup" && A=$p; done
cleanup() { for p in $ours; do kill -KILL "$p" 2>/dev/null; done; sleep 1
  [ -n "$cg" ] && rmdir $cg/fleetreap-dev/jobA $cg/fleetreap-dev/jobB $cg/fleetreap-dev 2>/dev/null; }
trap cleanup EXIT

plan() {  # plan REPORT: "pid:fate:named_like:owner" per holder; fails unless every target is ours
  python3 - "$1" "$ours" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); host = r["hosts"][0]; ours = {int(p) for p in sys.argv[2].split()}
print("status", host["status"], "|", host["summary"], "|", host["error_message"], "| scope", r.get("scope"))
for h in host["holders"]:
    print(" ", h["pid"], h["name"], h["fate"], "named_like=%s" % h.get("named_like"),
          "protected_by=%s" % h.get("protected_by"), "cgroup=%s" % h.get("cgroup"),
          "out_of_scope=%s" % h.get("out_of_scope"))
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("  would signal", sorted(targets))
sys.exit(0 if targets <= ours else 1)
PY
}
echo "== 1. dry run, whole host"; "$bin" --local --dry-run --quiet --json "$out/whole.json"; echo "exit $?"
plan "$out/whole.json" || exit 1
echo "== 2. dry run as Slurm job 7's epilog"
SLURM_JOB_ID=7 SLURM_JOB_GPUS=0 "$bin" --local --dry-run --quiet --json "$out/slurm.json"; echo "exit $?"
plan "$out/slurm.json" || exit 1
echo "== 3. dry run from a nested PID namespace"
unshare -p -f --mount-proc "$bin" --local --dry-run --quiet --json "$out/nested.json"; echo "exit $?"
plan "$out/nested.json" || exit 1
if [ -n "$cg" ] && [ -n "$A" ]; then
  echo "== 4. --cgroup /fleetreap-dev/jobA (job A is pid $A)"
  "$bin" --local --dry-run --quiet --cgroup /fleetreap-dev/jobA --json "$out/scoped-dry.json"; echo "exit $?"
  plan "$out/scoped-dry.json" || exit 1
  "$bin" --local --quiet --cgroup /fleetreap-dev/jobA --json "$out/scoped.json"; echo "exit $?"
  plan "$out/scoped.json" || true
  for p in $ours; do kill -0 "$p" 2>/dev/null && echo "$p alive" || echo "$p gone"; done
fi
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
