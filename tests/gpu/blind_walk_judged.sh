#!/usr/bin/env bash
# A holder walk that cannot run, on a real GPU: on a host of ~100,000
# processes the scan's grep over every maps file, or its find over every
# thread's fd folder, can fail to start (an argument list too long, exit
# 126). Here a wrapper bind-mounted over /usr/bin/grep, then /usr/bin/find,
# in a mount namespace of fleetreap's own (its scripts run with a fixed
# PATH, so a folder first in PATH would not reach them; the machine's own
# /usr/bin is never changed) makes the tool fail that way when handed maps
# files or task folders. Each round starts an orphaned PyTorch
# worker that maps an NCCL-style /dev/shm segment, runs `fleetreap --local`
# (a dry run first: the real run only if the plan names the worker alone)
# and checks: the scan says the walk could not run, the host is dirty
# whatever the GPUs read, the worker (still seen by the other half of the
# walk) is signalled and the GPU freed; with find failing, /dev/shm keeps
# the segment. Ends only the PIDs it started; never resets a GPU.
#   FLEETREAP=build/device/run-fleetreap OUT=/tmp/out bash tests/gpu/blind_walk_judged.sh
# Needs unshare(1) and mount in a new mount namespace (root).
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
exec > >(tee "$out/blind-walk.txt") 2>&1
fake=$(mktemp -d)
ok=1

start_worker() {
  python3 - <<'PY'
import subprocess, sys
code = r'''
import mmap, os, time, torch
x = torch.empty(int(2 * 2**30), dtype=torch.uint8, device="cuda:0")
path = "/dev/shm/nccl-fleetreap-blind-%d" % os.getpid()
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 65536)
m = mmap.mmap(fd, 65536)
os.close(fd)
print("worker ready", path, flush=True)
time.sleep(600)
'''
p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                     stdout=open("/tmp/blind-worker.out", "w"), stderr=subprocess.STDOUT)
open("/tmp/blind-worker.pid", "w").write(str(p.pid))
PY
  worker=$(cat /tmp/blind-worker.pid)
  for _ in $(seq 1 60); do grep -q ready /tmp/blind-worker.out 2>/dev/null && break; sleep 1; done
  seg=/dev/shm/nccl-fleetreap-blind-$worker
}

# blind TOOL ARGS...: fleetreap ARGS with the wrapper over /usr/bin/TOOL.
# Where the host has perl the walk is one perl run, so the find and grep
# rounds also hide perl (a file that cannot be run, over /usr/bin/perl) to
# reach the shell path; the perl round's wrapper kills itself instead.
# shellcheck disable=SC2016  # the inner shell expands them
blind() {
  local tool=$1; shift
  local hide=/usr/bin/true
  if [ "$tool" != perl ] && [ -e /usr/bin/perl ]; then hide=/usr/bin/perl; fi
  : > "$fake/noperl"; chmod 644 "$fake/noperl"
  unshare -m --propagation private sh -c \
    'mount --bind "$1" "/usr/bin/$2" && { [ "$4" = /usr/bin/true ] || mount --bind "$3" "$4"; } && shift 4 && exec "$@"' \
    sh "$fake/$tool" "$tool" "$fake/noperl" "$hide" "$bin" "$@"
}

# round TOOL TAIL: TOOL exits 126 when handed a path ending in TAIL.
round() {
  local tool=$1 tail=$2
  rm -f "$fake"/*
  cp "/usr/bin/$tool" "$fake/$tool.real"
  # shellcheck disable=SC2016  # the wrapper expands them, not this script
  if [ "$tool" = perl ]; then
    # A perl that dies mid-walk: the scan must read as blind, never as "no holder".
    printf '#!/bin/sh\nkill -KILL $$\n' > "$fake/$tool"
  else
    printf '#!/bin/sh\nfor a in "$@"; do case $a in *%s) echo "%s: Argument list too long" >&2; exit 126;; esac; done\nexec %s "$@"\n' \
      "$tail" "$tool" "$fake/$tool.real" > "$fake/$tool"
  fi
  chmod 755 "$fake/$tool"
  start_worker
  echo "== $tool failing on *$tail; orphaned worker $worker, segment $seg"
  blind "$tool" --local --dry-run --json "$out/blind-$tool-dry.json"; echo "dry-run exit $?"
  if ! python3 - "$out/blind-$tool-dry.json" "$worker" <<'PY'; then
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets), "notes:", [n[:60] for n in host.get("notes", [])])
blind = any("holder walk could not run" in n for n in host.get("notes", []))
sys.exit(0 if targets == {int(sys.argv[2])} and blind else 1)
PY
    echo "plan names something else, or no blind note: stopping"; kill -KILL "$worker"; rm -f "$seg"; ok=; return
  fi
  if [ "$tool" = perl ]; then
    # The signal step runs perl too (pidfds): with every perl dying the plan
    # is the check; the worker is ended here, by its PID.
    kill -KILL "$worker"; rm -f "$seg"; sleep 2
    nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
    return
  fi
  blind "$tool" --local --json "$out/blind-$tool-run.json"; rc=$?
  echo "run exit $rc"
  python3 - "$out/blind-$tool-run.json" <<'PY' || ok=
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
print("status:", host["status"], "| message:", host.get("error_message", "")[:70],
      "| TERM", host["term_sent"], "KILL", host["kill_sent"], "| shm_removed:", host.get("shm_removed"),
      "| GPUs after:", [g["memory_used_mib"] for g in host["gpus_after"]])
sys.exit(0 if host["status"] == "dirty" and "holder walk could not run" in host.get("error_message", "")
         and host["term_sent"] + host["kill_sent"] >= 1 else 1)
PY
  [ "$rc" = 1 ] || { echo "expected exit 1 (dirty), got $rc"; ok=; }
  sleep 1
  if kill -0 "$worker" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$worker/stat" | cut -d' ' -f1)" != Z ]; then
    echo "worker $worker STILL ALIVE"; kill -KILL "$worker"; ok=
  fi
  if [ "$tool" = find ]; then
    if [ -e "$seg" ]; then echo "the segment was kept (the fd walk could not run)"; else echo "the segment was REMOVED"; ok=; fi
  fi
  rm -f "$seg"
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
}

round grep /maps
round find /task
if [ -e /usr/bin/perl ]; then round perl -; fi
rm -rf "$fake"
[ -n "$ok" ] && echo "BLIND WALK OK"
