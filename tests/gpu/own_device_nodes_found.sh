#!/usr/bin/env bash
# Runs fleetreap --local on a machine with a real NVIDIA GPU against a CUDA
# job that opened its OWN device nodes, as CDI and `--device` containers do:
# a PyTorch worker in a private mount namespace whose /dev is a tmpfs with
# nodes made by mknod (nvidia0 195:0, nvidiactl 195:255, nvidia-uvm and
# nvidia-uvm-tools by the major /proc/devices gives). fuser on the host's
# /dev/nvidia0 cannot see it (another inode); fleetreap finds it by device
# number. Also counts the processes each fleetreap step starts (the PID
# namespace's counter). Safety: a dry run comes first, and the real run
# happens only if everything fleetreap would signal or remove is what this
# script started. It never resets a GPU.
# Needs: FLEETREAP (binary), its libraries on LD_LIBRARY_PATH, python3 + torch.
set -u
out=${OUT:-.}
bin=${FLEETREAP:?set FLEETREAP to the fleetreap binary}
exec > >(tee "$out/container-run.txt") 2>&1

echo "== before"; nvidia-smi --query-gpu=index,memory.used,gpu_recovery_action --format=csv,noheader
uvm=$(awk '$2 == "nvidia-uvm" {print $1}' /proc/devices)
echo "nvidia-uvm major: $uvm"

cat > /tmp/cworker.py <<'PY'
import torch, time, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
x = torch.empty(int(8 * 2**30), dtype=torch.uint8, device="cuda")
print("worker ready", flush=True)
time.sleep(600)
PY
# The job: its own /dev (tmpfs) with its own nodes, orphaned (setsid, the
# launching shell exits).
setsid unshare --mount --propagation private sh -c "
  mount -t tmpfs -o mode=755 cdev /dev
  mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5; mknod -m 666 /dev/urandom c 1 9
  mknod -m 666 /dev/nvidia0 c 195 0; mknod -m 666 /dev/nvidiactl c 195 255
  mknod -m 666 /dev/nvidia-uvm c $uvm 0; mknod -m 666 /dev/nvidia-uvm-tools c $uvm 1
  mkdir /dev/shm
  exec python3 /tmp/cworker.py" >/tmp/cworker.out 2>&1 </dev/null &
for _ in $(seq 1 90); do grep -q ready /tmp/cworker.out 2>/dev/null && break; sleep 1; done
tail -3 /tmp/cworker.out
worker=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | head -1 | tr -d ' ')
echo "== job: pid $worker, its fds:"
# shellcheck disable=SC2010  # /proc/PID/fd holds only numeric names; the lines show the targets
ls -l "/proc/$worker/fd" | grep -c nvidia
# shellcheck disable=SC2012  # as above
ls -lL "/proc/$worker/fd" 2>/dev/null | awk '$1 ~ /^c/' | sort -u -k5,6 | head
echo "fuser /dev/nvidia0 sees: [$(fuser /dev/nvidia0 2>/dev/null)]"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader

count() { cat /proc/sys/kernel/ns_last_pid; }
echo "== fleetreap --local --dry-run (inspect only)"
a=$(count); "$bin" --local --dry-run --playbook playbooks/inspect.yaml --json "$out/inspect.json"; echo "exit $?"; b=$(count)
echo "processes started by an inspect run (fleetreap's own forks included): $((b - a - 1))"
a=$(count); "$bin" --local --dry-run --json "$out/dry-run.json"; echo "exit $?"; b=$(count)
echo "processes started by a dry run (inspect + shm dry run): $((b - a - 1))"
python3 - "$out/dry-run.json" "$worker" <<'PY' || { echo "plan names something we did not start: stopping"; kill -KILL "$worker"; exit 1; }
import json, sys
host = json.load(open(sys.argv[1]))["hosts"][0]
targets = {h["pid"] for h in host["holders"] if h["fate"] in ("would_term", "would_kill")}
print("would signal:", sorted(targets), "would remove:", host.get("shm_would_remove", []))
print("holders:", [(h["pid"], h["name"], h["fate"], h.get("devices")) for h in host["holders"]])
print("gpus:", [(g["index"], g["state"], g.get("memory_used_mib")) for g in host["gpus_after"]])
sys.exit(0 if targets == {int(sys.argv[2])} and not host.get("shm_would_remove") else 1)
PY
echo "== fleetreap --local"
a=$(count); s=$(date +%s.%N)
"$bin" --local --json "$out/run.json"; rc=$?
e=$(date +%s.%N); b=$(count)
echo "exit $rc, wall $(python3 -c "print(round($e-$s,2))") s, processes started: $((b - a - 1))"
echo "== after"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
if kill -0 "$worker" 2>/dev/null; then echo "job $worker STILL ALIVE"; kill -KILL "$worker"; else echo "job $worker gone"; fi
