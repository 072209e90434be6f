// The steps of remote_script.h that change a host (signal, /dev/shm, GPU
// reset), built around the prelude of remote_script.cc.
#include "fleetreap/base/shell.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/remote/remote_script.h"
#include "remote_script_prelude.h"

namespace fleetreap {

using remote_script_internal::Prelude;

constexpr char kSignalBody[] = R"SH(z 'signal 1'
nvm; Q=1; HP=
# shellcheck disable=SC2086  # a list of /proc paths
[ -z "$DIRS" ] || fds $DIRS
# shellcheck disable=SC2086  # a list of /proc paths
[ -z "$MAPS" ] || mps $MAPS
pst $$; z "now $S"
cs() { read -r u _ </proc/uptime; C=$(( ${u%.*} * 100 + 1${u#*.} - 100 )); }
cs; B=$C
# The check and the kill, back to back: the PID still has the start time
# it had when seen, is not a zombie (lv), and still holds an NVIDIA device
# file (an fd of any thread, or a mapping).
W=
for t in $TG; do
  p=${t%%:*}; r=${t#*:}; w=${r%%:*}; m=${r#*:}
  if lv "$p" "$w" && { [ "$m" = m ] || case " $HP " in *" $p "*) true;; *) false;; esac; }; then
    # A holder that exits between the check and the kill is gone, not refused.
    if kill -s "$SIG" "$p" 2>/dev/null; then z "sent $p"; W="$W $t"
    elif lv "$p" "$w"; then z "failed $p"
    else z "gone $p"; fi
  else
    z "gone $p"
  fi
done
# Waits with tail --pid (repeatable since coreutils 9; an older tail returns
# when the last PID is gone, and the loop asks again). A zombie whose every
# thread has exited is gone: tail waits for its reaping, so each tail is
# cut to a slice (twice the poll, doubling up to 1 s) and the loop looks again.
alive() { A=; for t in $W; do p=${t%%:*}; r=${t#*:}; lv "$p" "${r%%:*}" && A="$A $p:$Z"; done; }
if [ -n "$W" ]; then
  cs; E=$((C + WAITCS)); L=$((POLLCS * 2))
  while :; do
    alive; [ -n "$A" ] || break
    cs; [ $C -lt $E ] || break
    k=$((E - C)); [ $k -le $L ] || k=$L
    L=$((L * 2)); [ $L -le 100 ] || L=100
    c=$((k % 100)); [ $c -lt 10 ] && c=0$c
    a=; for t in $A; do a="$a --pid=${t%%:*}"; done
    # shellcheck disable=SC2086  # a holds one --pid=PID per target
    timeout $((k / 100)).$c tail -s "$POLL" -f $a /dev/null >/dev/null 2>&1
    case $? in 0|124) ;; *) sleep $POLL;; esac
  done
fi
alive; for t in $A; do z "left ${t%%:*} ${t#*:}"; done
for p in $PP; do lv "$p" && z "parent $p"; done
cs; z "done $((C - B))"
z end
)SH";

std::string SignalScript(const std::string& signal, const std::vector<Target>& targets,
                         std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                         const HostPaths& paths, const std::vector<int>& parents) {
  std::string list, dirs, maps, pp;
  for (const Target& t : targets) {
    list += " " + std::to_string(t.pid) + ":" + std::to_string(t.start_time) + ":" +
            (t.needs_fd ? "f" : "m");
    dirs += " /proc/" + std::to_string(t.pid) + "/task";
    maps += " /proc/" + std::to_string(t.pid) + "/maps";
  }
  for (int pid : parents) pp += " " + std::to_string(pid);
  std::string s = Prelude(paths);
  s += std::string("SIG=") + (signal == "KILL" ? "KILL" : "TERM") + "\n";
  s += "TG='" + list + "'\nDIRS='" + dirs + "'\nMAPS='" + maps + "'\nPP='" + pp + "'\n";
  s += "WAITCS=" + std::to_string(wait.count() / 10) + "\n";
  s += "POLL=" + FractionalSeconds(poll) + "\n";
  s += "POLLCS=" + std::to_string(std::max<int64_t>(1, poll.count() / 10)) + "\n";
  return s + kSignalBody;
}

// The /dev/shm step's body. Inputs: M (the folder), DRY, and cand, the
// find over M's regular files matching the playbook's patterns.
constexpr char kShmBody[] = R"SH(z 'shm 1'
# The candidates' inodes, then which of them any process has open (the fd
# pass) or mapped (maps lines on /dev/shm's device with that inode). No
# candidate (the usual case): nothing more to read or start.
set -f; CI=$(cand -printf '%i ' 2>/dev/null); set +f
if [ -n "$CI" ]; then
  SD=$(find "$M" -maxdepth 0 -printf '%D' 2>/dev/null)
  case $SD in ''|*[!0-9]*) SD=;; esac
  if [ -n "$SD" ]; then
    # st_dev as glibc encodes it, and its spelling in maps ("00:1a").
    mj=$(( ((SD >> 8) & 0xfff) | ((SD >> 32) & ~0xfff) )); mn=$(( (SD & 0xff) | ((SD >> 12) & ~0xff) ))
    hx() {
      h=; n=$1
      while [ "$n" -gt 0 ] || [ -z "$h" ]; do
        d=$((n % 16))
        case $d in 10) d=a;; 11) d=b;; 12) d=c;; 13) d=d;; 14) d=e;; 15) d=f;; esac
        h=$d$h; n=$((n / 16))
      done
      [ ${#h} -ge 2 ] || h=0$h
    }
    hx $mj; SX=$h; hx $mn; SX=$SX:$h
    nvm; Q=1; fds /proc/[0-9]*/task
    # shellcheck disable=SC2086  # CI is a list of inode numbers
    set -- $CI; IFS='|'; e="$*"; IFS=" 	$NL"
    y=$(find /proc/[0-9]*/maps -exec grep -h -E " $SX ($e) " {} + 2>/dev/null)
    set -f; IFS=$NL
    # shellcheck disable=SC2086  # the maps line's fields
    for l in $y; do IFS=' '; set -- $l; [ "$4" = "$SX" ] && UI="$UI $5"; done
    IFS=" 	$NL"; set +f
  fi
  i=; for u in $UI; do case " $CI " in *" $u "*) i="$i -o -inum $u";; esac; done
  # Unknown device: every match counts as in use, nothing is removed.
  i=${i# -o }; [ -n "$i" ] || i=-false; [ -n "$SD" ] || i=-true
  set -f
  # shellcheck disable=SC2086  # i is find's -inum expression, word by word
  if [ -n "$DRY" ]; then
    cand \( \( $i \) -printf 'inuse:%f\0' -o -printf 'would:%f\0' \) 2>/dev/null
  else
    # find's own errors say why a removal failed ("...: Permission denied").
    exec 3>&1
    e=$(cand \( \( $i \) -printf 'inuse:%f\0' -o -delete -printf 'removed:%f\0' -o -printf 'failed:%f\0' \) 2>&1 >&3)
    exec 3>&-
    [ -z "$e" ] || printf 'shmerr:%s\0' "$e"
  fi
  set +f
fi
)SH";

std::string ShmCleanScript(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths) {
  return remote_script_internal::ShmCleanRecords(patterns, dry_run, paths) + "z end\n";
}

std::string remote_script_internal::ShmCleanRecords(const std::vector<std::string>& patterns,
                                                    bool dry_run, const HostPaths& paths) {
  std::string names;
  for (const std::string& pattern : patterns) {
    names += std::string(names.empty() ? "" : " -o") + " -name " + ShellQuote(pattern);
  }
  if (names.empty()) names = " -false";
  std::string s = Prelude(paths);
  s += "M=" + ShellQuote(paths.shm_dir) + "\n";
  s += std::string("DRY=") + (dry_run ? "1" : "") + "\n";
  s +=
      "cand() { find \"$M\" -mindepth 1 -maxdepth 1 -xdev -type f \\(" + names + " \\) \"$@\"; }\n";
  return s + kShmBody;
}

std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n";
  for (int gpu : gpus) {
    std::string index = std::to_string(gpu);
    s += "o=$(timeout -k 2 " + TimeoutSeconds(per_gpu) + " nvidia-smi --gpu-reset -i " + index +
         " 2>&1 </dev/null); r=$?\n";
    s += "printf 'reset " + index + " %s:%s\\0' \"$r\" \"$o\"\n";
  }
  s += "z end\n";
  return s;
}

}  // namespace fleetreap
