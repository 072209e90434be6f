#!/usr/bin/env bash
# On a machine with a real NVIDIA GPU: `--spare-pods` against
# real nvidia-smi, real cgroups and real CUDA processes. No kubelet here: one
# PyTorch worker is put in a cgroup shaped like a Kubernetes pod's container
# under the systemd driver (kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope), under a tree
# of our own; another is an orphan outside any pod. Then:
#   1. dry run --spare-pods: only the orphan planned, the pod's worker
#      out_of_scope with its pod UID;
#   2. real run --spare-pods: the orphan goes, the pod's worker lives, GPU 0
#      stays busy (the pod still holds it): exit 1, as contrib/k8s documents;
#   3. the pod is "deleted" (this script ends its worker), then a plain run
#      verifies 0 MiB.
# Safety: the real run happens only if the dry run's plan names only PIDs this
# script started; it kills what it started by PID at the end.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
exec > >(tee "$out/pods-run.txt") 2>&1

echo "== machine"; readlink /proc/self/ns/pid
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
cg=/sys/fs/cgroup
[ -f $cg/cgroup.procs ] || { echo "no cgroup v2 at $cg"; exit 1; }
uid=5f0c1d2e-7a8b-4c3d-9e1f-0a1b2c3d4e5f
cid=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
pod=$cg/fleetreap-dev/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice
box=$pod/cri-containerd-$cid.scope
mkdir -p "$box"

cat > /tmp/podworker.py <<'PY'
import sys, time, torch
x = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda")
print("ready", sys.argv[1], flush=True)
time.sleep(900)
PY
setsid sh -c "echo \$\$ > $box/cgroup.procs; exec python3 /tmp/podworker.py pod" >/tmp/podworker.pod 2>&1 </dev/null &
setsid python3 /tmp/podworker.py orphan >/tmp/podworker.orphan 2>&1 </dev/null &
for _ in $(seq 1 120); do
  n=$(cat /tmp/podworker.pod /tmp/podworker.orphan 2>/dev/null | grep -c ready); [ "$n" = 2 ] && break; sleep 1
done
ours=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | tr -d ' ' | sort -n | tr '\n' ' ')
echo "== workers (compute apps): $ours"
podpid=
for p in $ours; do
  echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-40) | $(cat "/proc/$p/cgroup")"
  grep -q kubepods "/proc/$p/cgroup" && podpid=$p
done
cleanup() { for p in $ours; do kill -KILL "$p" 2>/dev/null; done; sleep 1
  d=$box; while [ "$d" != "$cg" ]; do rmdir "$d" 2>/dev/null; d=$(dirname "$d"); done; }
trap cleanup EXIT

plan() {  # plan REPORT: fails unless every planned or signalled PID is ours and not the pod's
  python3 - "$1" "$ours" "$podpid" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); host = r["hosts"][0]
ours = {int(p) for p in sys.argv[2].split()}; pod = int(sys.argv[3])
print("  status", host["status"], "|", host["summary"], "| scope", r.get("scope"))
for h in host["holders"]:
    print("   ", h["pid"], h["name"], h["fate"], "pod=%s" % (h.get("owner") or {}).get("pod_uid"),
          "out_of_scope=%s" % h.get("out_of_scope"))
for g in host.get("gpus", []):
    print("    GPU", g.get("index"), g.get("state"), g.get("memory_used_mib"), "MiB")
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill", "terminated", "killed")}
print("  signalled or would be", sorted(targets))
sys.exit(0 if targets <= ours and pod not in targets else 1)
PY
}
echo "== 1. dry run --spare-pods"
"$bin" --local --dry-run --quiet --spare-pods --json "$out/spare-dry.json"; echo "exit $?"
plan "$out/spare-dry.json" || exit 1
echo "== 2. real run --spare-pods"; t=$(date +%s.%N)
"$bin" --local --quiet --spare-pods --json "$out/spare.json"; rc=$?
echo "exit $rc in $(python3 -c "import time,sys; print('%.1f s' % (time.time() - float(sys.argv[1])))" "$t")"
plan "$out/spare.json" || true
for p in $ours; do kill -0 "$p" 2>/dev/null && echo "$p alive" || echo "$p gone"; done
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
echo "== 3. the pod is deleted (its worker ended by this script), then a plain verify"
kill -KILL "$podpid"; sleep 2
"$bin" --local --quiet --json "$out/after.json"; echo "exit $?"
plan "$out/after.json" || true
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
