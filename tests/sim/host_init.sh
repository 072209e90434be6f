#!/bin/sh
# host_init.sh: turns a fresh PID + mount + UTS namespace into one simulated
# GPU host. Runs as PID 2 (under tini, PID 1), started by simfleet.py as
#   unshare --pid --mount --uts [--cgroup] --fork --mount-proc --propagation private \
#     tini -s -- /bin/sh host_init.sh HOSTDIR SIMBIN HOSTNAME START_SSHD CGROUPS
# CGROUPS=yes: the host runs in its own cgroup namespace, rooted at its own
# subtree of the machine's cgroup v2 hierarchy (simfleet.py made it); it is
# mounted at /sys/fs/cgroup here, laid out like a systemd host.
# Every mount below happens inside the host's private mount namespace, so the
# machine's real /dev, /etc, /usr, /run and /root are never written to; all
# of it disappears when the namespace's last process exits.
set -eu
H=$1        # the host's directory on the machine (etc/, state/, shm/, ...)
SIMBIN=$2   # fleet-wide tool directory (nvidia-smi, systemctl, gpuload)
NAME=$3
START_SSHD=$4
CGROUPS=${5:-no}

hostname "$NAME"

# /dev: a private tmpfs with the few real nodes a host needs, plus plain
# files standing in for the NVIDIA device nodes.
mount -t tmpfs -o mode=755,size=1m,nosuid fakedev /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/random c 1 8
mknod -m 666 /dev/urandom c 1 9
mknod -m 666 /dev/tty c 5 0
mkdir /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
ln -s pts/ptmx /dev/ptmx
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
gpus=$(cat "$H/state/gpus")
if [ "$(cat "$H/state/driver")" = loaded ]; then
  i=0
  while [ "$i" -lt "$gpus" ]; do
    : > "/dev/nvidia$i"; chmod 666 "/dev/nvidia$i"; i=$((i + 1))
  done
  : > /dev/nvidiactl; : > /dev/nvidia-uvm
  chmod 666 /dev/nvidiactl /dev/nvidia-uvm
  # The driver's own list: /proc/driver/nvidia/gpus/BUS/information names
  # each GPU's device minor (the N of /dev/nvidiaN). The bus ids are the fake
  # nvidia-smi's, in index order; the minors are the identity here, and
  # HostSetup.gpu_minors permutes them as real hosts may (PrincetonUniversity/jobstats#34).
  if mount -t tmpfs -o size=256k,mode=755 fakedriver /proc/driver 2>/dev/null; then
    i=0
    for b in 19 3b 4c 5d 9b bb cb db; do
      [ "$i" -lt "$gpus" ] || break
      mkdir -p "/proc/driver/nvidia/gpus/0000:$b:00.0"
      printf 'Model: \t\t NVIDIA H200\nBus Location: \t 0000:%s:00.0\nDevice Minor: \t %s\n' \
        "$b" "$i" > "/proc/driver/nvidia/gpus/0000:$b:00.0/information"
      i=$((i + 1))
    done
  fi
fi
mount --bind "$H/shm" /dev/shm
# The kernel log's stand-in: a boot record in /dev/kmsg's format, root's and
# 0600 as dmesg_restrict keeps it from users (readiness_states.py adds lines).
printf '6,0,0,-;Linux version 6.8.0-sim (root@sim) #1 SMP\n' > /dev/kmsg
chmod 600 /dev/kmsg

# /run: private, with sshd's privilege separation directory and the
# simulator's state (read by the fake nvidia-smi and systemctl).
mount -t tmpfs -o mode=755,size=4m tmpfs /run
mkdir -p /run/sshd /run/fakegpu
chmod 755 /run/sshd
mount --bind "$H/state" /run/fakegpu

# /etc, /usr/bin, /usr/sbin, /opt and /usr/local/bin: writable overlays
# whose writes land in HOSTDIR/up (never in the machine's own files); the
# lower layers HOSTDIR/rootfs/DIR add this host's daemons and files (root-
# owned, as a package would install them) over the machine's own.
overlay() {  # overlay DIR LOWER...: DIR becomes LOWER... (first on top), writable
  d=$1; shift
  lower=$(printf '%s:' "$@"); lower=${lower%:}
  mkdir -p "$H/up$d" "$H/work$d"
  mount -t overlay overlay -o "lowerdir=$lower,upperdir=$H/up$d,workdir=$H/work$d" "$d"
}
overlay /etc "$H/rootfs/etc" /etc
for d in /usr/bin /usr/sbin /opt; do
  [ -d "$d" ] && overlay "$d" "$H/rootfs$d" "$d"
done
overlay /usr/local/bin "$H/rootfs/usr/local/bin" "$SIMBIN"
mount --bind "$SIMBIN" /usr/local/sbin
# fleetreap's marker: this (child) PID namespace stands for the host's own.
mkdir -p /etc/fleetreap
chmod 755 /etc/fleetreap
readlink /proc/self/ns/pid > /etc/fleetreap/host-pid-namespace
chmod 644 /etc/fleetreap/host-pid-namespace

# Accounts, sudo policy and name resolution of this host only.
# A minimal system may lack one (debootstrap's minbase has no /etc/hosts):
# the mount point is made in the /etc overlay above, never in the real /etc.
for f in passwd shadow group sudoers hosts; do
  [ -e "/etc/$f" ] || : >"/etc/$f"
  mount --bind "$H/etc/$f" "/etc/$f"
done
mount --bind "$H/root" /root
mount --bind "$H/home" /home

# (The fake tools are first on PATH: sshd's default PATH and sudo's
# secure_path both start with /usr/local/sbin:/usr/local/bin, mounted above.)

# cgroups: the host's subtree at /sys/fs/cgroup, tini and this script in
# /init.scope (systemd's PID 1 is there), sshd and so every SSH session in
# /system.slice/ssh.service.
SSHD_CG=
if [ "$CGROUPS" = yes ]; then
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  mkdir -p /sys/fs/cgroup/init.scope /sys/fs/cgroup/system.slice/ssh.service
  echo 1 > /sys/fs/cgroup/init.scope/cgroup.procs
  echo $$ > /sys/fs/cgroup/init.scope/cgroup.procs
  SSHD_CG=/sys/fs/cgroup/system.slice/ssh.service/cgroup.procs
  : > /run/fakegpu/cgroups
fi

# syslog: /dev/log served by devlog, which appends each message to
# HOSTDIR/syslog (the audit lines' tests read it back).
"$SIMBIN/devlog" /dev/log "$H/syslog" </dev/null >/dev/null 2>>"$H/devlog.err" &
echo $! > /run/fakegpu/devlog.pid

if [ "$START_SSHD" = yes ]; then
  /bin/sh -c '[ -z "$1" ] || echo $$ > "$1"; shift; exec "$@"' sh "$SSHD_CG" \
    /usr/sbin/sshd -D -f "$H/etc/sshd_config" -E "$H/sshd.log" &
  echo $! > /run/fakegpu/sshd.pid
fi
: > /run/fakegpu/ready
# Stay alive as the host's "system" process; reap sshd if it is killed.
while :; do wait || true; sleep 3600; done
