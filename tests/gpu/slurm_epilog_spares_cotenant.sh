#!/usr/bin/env bash
# On a machine with a real NVIDIA GPU: the shipped Slurm prolog and
# epilog (contrib/slurm/) against real nvidia-smi, real cgroups and real CUDA
# jobs, run the way slurmd runs them (as root, SLURM_JOB_ID, SLURM_JOB_GPUS,
# no SLURM_STEP_ID). No slurmd here: the two jobs' processes are put in
# cgroups shaped like Slurm's cgroup/v2 plugin's, under a tree of our own
# (fleetreap-dev/system.slice/slurmstepd.scope/job_N/step_0/user/task_0).
#   job 7: a PyTorch worker that ignores SIGTERM, orphaned (setsid);
#   job 8: a PyTorch worker on the same GPU (a co-tenant).
# Then:
#   1. prolog of job 9 on GPU 0: refuses (one line naming GPU 0 and a holder);
#   2. epilog of job 7: job 7's worker TERM, KILL; job 8 untouched, so GPU 0
#      is not clean: one line naming job 8's worker, non-zero (slurmd drains);
#   3. epilog of job 8: job 8's worker goes, GPU 0 reads 0 MiB, exit 0;
#   4. prolog of job 9 again: exit 0.
# Safety: before each real epilog a dry run's plan must name only PIDs this
# script started; it kills what it started by PID at the end.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
export FLEETREAP_BIN=$bin FLEETREAP_REPORT_DIR=$out/reports FLEETREAP_TIMEOUT=2m
here=$(cd "$(dirname "$0")/../.." && pwd)
epilog=$here/contrib/slurm/fleetreap-epilog
prolog=$here/contrib/slurm/fleetreap-prolog
exec > >(tee "$out/slurm-epilog-run.txt") 2>&1

echo "== machine"; uname -r; readlink /proc/self/ns/pid
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
cg=/sys/fs/cgroup
[ -f $cg/cgroup.procs ] || { echo "no cgroup v2 at $cg"; exit 1; }
base=$cg/fleetreap-dev/system.slice/slurmstepd.scope
for j in 7 8; do mkdir -p $base/job_$j/step_0/user/task_0; done

cat > /tmp/jobworker.py <<'PY'
import signal, sys, time, torch
if sys.argv[2] == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
x = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda")
print("ready", sys.argv[1], flush=True)
time.sleep(900)
PY
start() {  # start JOB MODE: the job's worker in its task cgroup, orphaned
  setsid sh -c "echo \$\$ > $base/job_$1/step_0/user/task_0/cgroup.procs; exec python3 /tmp/jobworker.py $1 $2" \
    >"/tmp/jobworker.$1" 2>&1 </dev/null &
}
start 7 ignore-term
start 8 plain
for _ in $(seq 1 120); do
  n=$(cat /tmp/jobworker.7 /tmp/jobworker.8 2>/dev/null | grep -c ready); [ "$n" = 2 ] && break; sleep 1
done
ours=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | tr -d ' ' | sort -n | tr '\n' ' ')
echo "== jobs (compute apps): $ours"
for p in $ours; do echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-50) | $(cat "/proc/$p/cgroup")"; done
cleanup() { for p in $ours; do kill -KILL "$p" 2>/dev/null; done; sleep 1
  rmdir $base/job_*/step_0/user/task_0 $base/job_*/step_0/user $base/job_*/step_0 $base/job_* \
        $base $cg/fleetreap-dev/system.slice $cg/fleetreap-dev 2>/dev/null; }
trap cleanup EXIT

only_ours() {  # only_ours REPORT: fails unless every planned target is ours
  python3 - "$1" "$ours" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); host = r["hosts"][0]; ours = {int(p) for p in sys.argv[2].split()}
print("  status", host["status"], "|", host["summary"], "| scope", r.get("scope"))
for h in host["holders"]:
    print("   ", h["pid"], h["name"], h["fate"], "owner=%s" % h.get("owner"), "out_of_scope=%s" % h.get("out_of_scope"))
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill", "terminated", "killed")}
print("  signalled or would be", sorted(targets))
sys.exit(0 if targets <= ours else 1)
PY
}
slurm() {  # slurm JOB SCRIPT [ARGS]: run a prolog/epilog as slurmd does
  local job=$1; shift
  env -u SLURM_STEP_ID SLURM_JOB_ID="$job" SLURM_JOB_GPUS=0 SLURM_JOB_UID=0 SLURM_JOB_USER=root \
    CUDA_VISIBLE_DEVICES=0 "$@"
}
elapsed() { python3 -c "import time,sys; print('%.1f s' % (time.time() - float(sys.argv[1])))" "$1"; }

echo "== 1. prolog of job 9"; t=$(date +%s.%N)
slurm 9 "$prolog"; echo "exit $? in $(elapsed "$t")"
only_ours "$out/reports/job-9.prolog.json" || exit 1
run_epilog() {  # run_epilog STEP JOB: a dry run whose plan must be ours, then the real epilog
  echo "== $1. epilog of job $2 (dry run first)"
  slurm "$2" "$bin" --local --dry-run --quiet --json "$out/job-$2.dry.json"; echo "dry run exit $?"
  only_ours "$out/job-$2.dry.json" || exit 1
  t=$(date +%s.%N); slurm "$2" "$epilog"; echo "exit $? in $(elapsed "$t")"
  only_ours "$out/reports/job-$2.json" || true
  for p in $ours; do kill -0 "$p" 2>/dev/null && echo "$p alive" || echo "$p gone"; done
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
}
run_epilog 2 7
run_epilog 3 8
echo "== 4. prolog of job 9 again"; t=$(date +%s.%N)
slurm 9 "$prolog"; echo "exit $? in $(elapsed "$t")"
ls -l "$out/reports"
