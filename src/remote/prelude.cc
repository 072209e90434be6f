// The shell prelude every remote script starts with (remote_script_prelude.h).
#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "remote_script_prelude.h"

namespace fleetreap {
namespace remote_script_internal {

// The functions every script shares. z prints a record of the script's own
// words; pst reads /proc/PID/stat by the kernel's rule (S: start time, Z:
// state); nvm lists the NVIDIA character majors; fds is the one fd pass;
// dump describes processes; q runs nvidia-smi bounded by $T.
constexpr char kPrelude[] = R"SH(LC_ALL=C; export LC_ALL; unset QUOTING_STYLE POSIXLY_CORRECT
NL='
'
IFS=" 	$NL"
z() { printf '%s\0' "$*"; }
add() { case " $HP " in *" $1 "*) ;; *) HP="$HP $1";; esac; }
# shellcheck disable=SC2034,SC2086  # sets Z and S for the caller; splits stat's fields
pst() {
  s=; l=
  { while IFS= read -r l; do s="$s$l"; done; } 2>/dev/null </proc/"$1"/stat || return 1
  s="$s$l"; s=${s##*[)]}
  set -- $s
  [ $# -ge 20 ] || return 1
  Z=$1; S=${20}
}
nvm() {
  MJ=195; MN=; c=
  { while read -r a b; do
    case $a in Character) c=1; continue;; Block) c=; continue;; esac
    [ -n "$c" ] || continue
    case $a in ''|*[!0-9]*) continue;; esac
    case $b in nvidia*) ;; *) continue;; esac
    case $b in *[!a-z0-9-]*) continue;; esac
    MN="$MN $a $b"; [ "$a" = 195 ] || MJ="$MJ $a"
  done; } 2>/dev/null </proc/devices
}
# lv PID [START]: the PID is there (with that start time) and not a zombie
# whose every thread has exited; a Z leader with live threads is alive.
# shellcheck disable=SC2048,SC2086  # the glob counts the tasks
lv() {
  pst "$1" || return 1
  [ -z "$2" ] || [ "$S" = "$2" ] || return 1
  case $Z in Z|X) set -- /proc/"$1"/task/[0-9]*; [ $# -gt 1 ];; esac
}
# fds TASKDIR...: the fds of every thread (/proc/PID/task/TID/fd), each PID's
# entries once; K holds what this PID already printed.
# shellcheck disable=SC2086  # splits find's lines into words, under set -f
fds() {
  HP=; LP=; K=
  if [ -n "$SD" ]; then t=f; else t=c; fi
  x=$(find "$@" -mindepth 2 -maxdepth 3 \( -path '*/task/*/fd/*' \( -lname "$DV/nvidia*" ! -lname '*[!-a-zA-Z0-9/_.]*' -printf 'p %p %l\n' \) , \( \( -xtype c -o -xtype $t \) -exec stat -L --printf 'c %n %f %t %T %d %i\n' {} + \) \) -o \( ! -name fd -prune \) 2>/dev/null)
  set -f; IFS=$NL
  for l in $x; do
    IFS=' '; set -- $l
    p=${2#/proc/}; f=${p##*/}; p=${p%%/*}
    case $p$f in *[!0-9]*) continue;; esac
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    if [ "$1" = c ] && [ $# -eq 7 ]; then
      [ -n "$SD" ] && [ "$6" = "$SD" ] && case " $CI " in *" $7 "*) UI="$UI $7";; esac
      case $3 in 2???) ;; *) continue;; esac
      a=$((0x$4)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      k=$f:$a:$((0x$5)); case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || z "fd $p $f $a $((0x$5))"
      add "$p"
    elif [ "$1" = p ] && [ $# -eq 3 ]; then
      k=$f:$3; case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || printf 'fdp %s %s:%s\0' "$p" "$f" "$3"
      add "$p"
    fi
  done
  IFS=" 	$NL"; set +f
}
# mps MAPS...: the mappings of NVIDIA device files (/proc/PID/maps lines
# whose file is named nvidia*), each PID's files once. A plain file under
# $DV counts by path (mmp); any other file counts by the device number of
# the file behind the mapping (map_files, else the path in the process's
# root), stat'ed in one call (mm).
# shellcheck disable=SC2086  # splits grep's lines, under set -f
mps() {
  x=$(grep -H -E ' /([^ ]*/)?nvidia[^/ ]*( \(deleted\))?$' "$@" 2>/dev/null)
  set -f; IFS=$NL; LP=; K=; y=
  for l in $x; do
    p=${l#/proc/}; p=${p%%/*}
    case $p in ''|*[!0-9]*) continue;; esac
    r=${l#*/maps:}; r=${r%% *}
    n=${l% (deleted)}; n=/${n##* /}
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    case " $K " in *" $n "*) continue;; esac; K="$K $n"
    case $n in "$DV"/nvidia*) case $n in *[!-a-zA-Z0-9/_.]*) ;; *)
      [ -n "$Q" ] || printf 'mmp %s:%s\0' "$p" "$n"
      add "$p"; continue;; esac;; esac
    case $r in *[!0-9a-f-]*|'') continue;; esac
    y="$y$NL/proc/$p/map_files/$r"
    case $l in *' (deleted)') ;; *) y="$y$NL/proc/$p/root$n";; esac
  done
  if [ -n "$y" ]; then
    x=$(stat -L --printf 'm %n %f %t %T\n' $y 2>/dev/null); LP=; K=
    for l in $x; do
      IFS=' '; set -- $l
      p=${2#/proc/}; p=${p%%/*}
      case $p in ''|*[!0-9]*) continue;; esac
      [ $# -eq 5 ] || continue
      case $3 in 2???) ;; *) continue;; esac
      a=$((0x$4)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      [ "$p" = "$LP" ] || { LP=$p; K=; }
      k=$a:$((0x$5)); case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || z "mm $p $a $((0x$5))"
      add "$p"
    done
  fi
  IFS=" 	$NL"; set +f
}
# shellcheck disable=SC2086  # $f and $e are lists of /proc paths, under set -f
dump() {
  set -f; f=; e=; v=
  for p in $1; do f="$f /proc/$p/stat /proc/$p/status /proc/$p/cmdline /proc/$p/cgroup"; e="$e /proc/$p/exe"; v="$v /proc/$p/environ"; done
  if [ -n "$f" ]; then
    grep -a -z -H '' $f /etc/passwd 2>/dev/null
    # Only the names of the loader's injection variables, never a value.
    grep -a -z -H -o -E '^LD_(PRELOAD|AUDIT)=' $v 2>/dev/null
    find $e -maxdepth 0 -printf 'exe %h:%l\0' 2>/dev/null
    find -L $e -maxdepth 0 -printf 'exs %h %U %m\0' 2>/dev/null
  fi
  set +f
}
# shellcheck disable=SC2034  # sets o and r for the caller
q() { o=$(timeout -k 1 "$T" nvidia-smi "$@" 2>&1 </dev/null); r=$?; }
)SH";

std::string Prelude(const HostPaths& paths) {
  return std::string(kPrelude) + "DV=" + ShellQuote(paths.dev_dir) + "\nSD=; CI=; UI=; Q=\n";
}

}  // namespace remote_script_internal
}  // namespace fleetreap
