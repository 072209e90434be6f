#!/usr/bin/env bash
# Captures real nvidia-smi / fuser output on a machine with NVIDIA GPUs, with
# and without a PyTorch process holding GPU memory, into $OUT (or ./capture).
# It only starts and ends its own process (by PID). It never resets a GPU.
set -u
dest=${OUT:-.}
out=$(mktemp -d)
mkdir -p "$out"
q='index,uuid,name,pci.bus_id,memory.used,memory.total'
cap() { local name=$1; shift; { "$@"; echo "exit=$?"; } >"$out/$name.out" 2>"$out/$name.err"; }
cap idle-query-csv nvidia-smi --query-gpu=$q --format=csv
cap idle-query-noheader-nounits nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
cap idle-apps nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv
cap idle-fuser fuser -v /dev/nvidia*
ls -l /dev/nvidia* > "$out/dev-listing.txt" 2>&1
nvidia-smi -L > "$out/list.txt" 2>&1
nvidia-smi --version > "$out/version.txt" 2>&1
python3 - <<'PY' &
import torch, time, os, signal
x = torch.empty(int(2.5 * 2**30), dtype=torch.uint8, device="cuda")
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", os.getpid(), flush=True)
time.sleep(60)
PY
holder=$!
for _ in $(seq 1 60); do
  nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q . && break
  sleep 1
done
sleep 2
cap load-query-csv nvidia-smi --query-gpu=$q --format=csv
cap load-query-noheader-nounits nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
cap load-apps nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv
cap load-apps-noheader-nounits nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid --format=csv,noheader,nounits
cap load-fuser fuser /dev/nvidia*
cap load-fuser-v fuser -v /dev/nvidia*
cap load-proc-fd sh -c "ls -l /proc/$holder/fd | grep nvidia"
cap load-stat cat /proc/$holder/stat
cap bad-field nvidia-smi --query-gpu=index,bogus.field --format=csv
# SIGTERM is ignored by the holder: show that, then end it with SIGKILL.
kill -TERM "$holder"; sleep 1
cap after-term-apps nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
kill -KILL "$holder"; wait "$holder" 2>/dev/null
sleep 1
cap after-kill-query nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
# shellcheck disable=SC2012  # counts the capture files, named by this script (no newlines)
tar -C "$out" -cf "$dest/capture.tar" . && echo "captured: $(ls "$out" | wc -l) files"
