// The shell library the remote scripts share, and a step's script as the
// pieces it needs and its own part (prelude.h).
#include "prelude.h"

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "perl_walk.h"
#include "shm_holders.h"

namespace fleetreap {
namespace remote_script_internal {

// The functions every script shares, and the two constants they are
// written with (the C locale, NL); what they read is set for each step by
// PreludeSettings. z prints a record of the script's own
// words; pst reads /proc/PID/stat by the kernel's rule (S: start time, Z:
// state); nvm lists the NVIDIA character majors; fds is the one fd pass and
// mps the mappings' pass; cap prints their records, control-only holders
// past a cap left out; dump describes processes; q runs nvidia-smi bounded
// by $T.
constexpr char kPrelude[] = R"SH(LC_ALL=C; export LC_ALL; unset QUOTING_STYLE POSIXLY_CORRECT
NL='
'
# This shell's start time (SS) and ancestors (SA, SV once read), as the
# round trip's first walk by perl read them (pwk): the same for each step.
# shellcheck disable=SC2034  # read by the steps that use them, where any
SS='' SA='' SV='' NV=''
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
# nvm: MJ and MN once per round trip (NV), from a walk's perl where one read
# /proc/devices (pwk), else read here.
nvm() {
  [ -z "$NV" ] || return 0
  NV=1; MJ=195; MN=; c=
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
# fds TASKDIR...: the fds of every thread (/proc/PID/task/TID/fd), one line
# per (PID, device) however many fds or threads hold it. Threads that share
# one table show the same fd count (the folder's size), so a PID's folders
# are read once per count (a folder that shows 0 is empty, or its kernel
# counts nothing: read). The records wait in FR, HP gets each holder, GP
# those that hold a GPU's own file (/dev/nvidiaN). FE=1 when a find could
# not walk (exit 2 or more: an argument list too long, a find that would not
# start; 1 is only files gone while it walked).
# shellcheck disable=SC2086,SC2034  # splits find's lines into words, under set -f; FE is the caller's
fds() {
  HP=; GP=; FR=; LP=; K=; w=; FE=
  if [ -n "$SD" ]; then t=f; else t=c; fi
  x=$(find "$@" -mindepth 2 -maxdepth 2 -name fd -printf '%s %p\n' 2>/dev/null)
  [ $? -lt 2 ] || FE=1
  set -f; IFS=$NL
  for l in $x; do
    n=${l%% *}; d=${l#* }; p=${d#/proc/}; p=${p%%/*}
    case $n in ''|*[!0-9]*) continue;; esac
    case $p in ''|*[!0-9]*) continue;; esac
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    if [ "$n" != 0 ]; then case " $K " in *" $n "*) continue;; esac; K="$K $n"; fi
    w="$w$NL$d"
  done
  x=
  [ -z "$w" ] || x=$( { find $w -mindepth 1 -maxdepth 1 \( -lname "$DV/nvidia*" ! -lname '*[!-a-zA-Z0-9/_.]*' -printf 'p %p %l\n' \) , \( \( -xtype c -o -xtype $t \) -exec stat -L --printf 'c %f %t %T %d %i %n\n' {} + \) 2>/dev/null || printf 'E %s\n' $?; } | sort -u -t/ -k1,1 -k3,3 -k8)
  for l in $x; do
    IFS=' '; set -- $l
    if [ "$1" = E ] && [ $# -eq 2 ]; then [ "$2" -lt 2 ] 2>/dev/null || FE=1; continue; fi
    if [ "$1" = c ] && [ $# -eq 7 ]; then p=$7; elif [ "$1" = p ] && [ $# -eq 3 ]; then p=$2; else continue; fi
    p=${p#/proc/}; f=${p##*/}; p=${p%%/*}
    case $p$f in *[!0-9]*) continue;; esac
    if [ "$1" = c ]; then
      [ -n "$SD" ] && [ "$5" = "$SD" ] && case " $CI " in *" $6 "*) UI="$UI $6";; esac
      case $2 in 2???) ;; *) continue;; esac
      a=$((0x$3)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      b=$((0x$4)); [ "$a" = 195 ] && [ "$b" -lt 254 ] && GP="$GP $p"
      FR="${FR}fd $p $f $a $b$NL"
    else
      case $3 in "$DV"/nvidia[0-9]*) GP="$GP $p";; esac
      FR="${FR}fdp $p $f:$3$NL"
    fi
    add "$p"
  done
  IFS=" 	$NL"; set +f
}
# mps MAPS...: the mappings of NVIDIA device files (/proc/PID/maps lines
# whose file is named nvidia*), each PID's files once. A plain file under
# $DV counts by path (mmp); any other file counts by the device number of
# the file behind the mapping (map_files, else the path in the process's
# root), stat'ed in one call (mm). The records wait in MR; GP gets the PIDs
# that map a GPU's own file. FE=1 when grep could not start (126 or more:
# an argument list too long; 2 is only maps files gone while it read).
# shellcheck disable=SC2086,SC2034  # splits grep's lines, under set -f; FE is the caller's
mps() {
  MR=
  x=$( { grep -H -E ' /([^ ]*/)?nvidia[^/ ]*( \(deleted\))?$' "$@" 2>/dev/null || printf 'E %s\n' $?; } | sort -u -t/ -k3,3 -k5)
  set -f; IFS=$NL; LP=; K=; y=
  for l in $x; do
    case $l in 'E '*) [ "${l#E }" -lt 126 ] 2>/dev/null || FE=1; continue;; esac
    p=${l#/proc/}; p=${p%%/*}
    case $p in ''|*[!0-9]*) continue;; esac
    r=${l#*/maps:}; r=${r%% *}
    n=${l% (deleted)}; n=/${n##* /}
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    case " $K " in *" $n "*) continue;; esac; K="$K $n"
    case $n in "$DV"/nvidia*) case $n in *[!-a-zA-Z0-9/_.]*) ;; *)
      MR="${MR}mmp $p:$n$NL"
      case $n in "$DV"/nvidia[0-9]*) GP="$GP $p";; esac
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
      b=$((0x$5)); [ "$a" = 195 ] && [ "$b" -lt 254 ] && GP="$GP $p"
      MR="${MR}mm $p $a $b$NL"
      add "$p"
    done
  fi
  IFS=" 	$NL"; set +f
}
# cap N: the holders (HP) that hold no GPU's own file (GP) and that
# nvidia-smi does not charge (D) hold only control devices (nvidiactl,
# nvidia-uvm...). Past N of them none of them is kept, and "ctl COUNT" says
# how many were left out. Prints the fd and mapping records (FR, MR) of the
# holders kept, who stay in HP.
# shellcheck disable=SC2086  # the records' words, under set -f
cap() {
  [ -z "$Q" ] || return 0
  k=" $GP $D "; n=0
  for p in $HP; do case $k in *" $p "*) ;; *) n=$((n+1));; esac; done
  [ "$n" -gt "$1" ] || k=
  set -f; IFS=$NL
  for l in $FR$MR; do
    IFS=' '; set -- $l; p=${2%%:*}
    case ${k:-" $p "} in *" $p "*) printf '%s\0' "$l";; esac
  done
  IFS=" 	$NL"; set +f
  [ -n "$k" ] || return 0
  y=$HP; HP=; for p in $y; do case $k in *" $p "*) HP="$HP $p";; esac; done
  z "ctl $n"
}
# dump PIDS: describes processes: stat, status, cgroup whole (the kernel
# bounds them), cmdline's first 32 arguments each cut at 256 bytes (empty
# ones left out), the exe, and only the names of the loader's injection
# variables in environ. The find of the exe links also reads the paths in
# NY (the scan's PID namespace and PID files: "L TARGET" for a link, "O
# PATH" for root's files writable by no one else), one line each in NS.
# shellcheck disable=SC2086,SC2034  # $f, $c, $e, $v and NY are lists of paths, under set -f; NS is the caller's
dump() {
  set -f; f=; c=; e=; v=; NS=
  for p in $1; do f="$f /proc/$p/stat /proc/$p/status /proc/$p/cgroup"; c="$c /proc/$p/cmdline"; e="$e /proc/$p/exe"; v="$v /proc/$p/environ"; done
  if [ -n "$f" ]; then
    grep -a -z -H '' $f /etc/passwd 2>/dev/null
    grep -a -z -H -o -m 32 -E '^.{0,256}' $c 2>/dev/null
    # Only the names of the loader's injection variables, never a value.
    grep -a -z -H -o -E '^LD_(PRELOAD|AUDIT)=' $v 2>/dev/null
  fi
  if [ -n "$e$NY" ]; then
    exec 3>&1
    NS=$(find $e $NY -maxdepth 0 \( -path '/proc/[0-9]*/exe' -printf 'exe %h:%l\0' \) -o \( -type l -fprintf /proc/self/fd/4 'L %l\n' \) -o \( -user 0 ! -perm /022 -fprintf /proc/self/fd/4 'O %p\n' \) 4>&1 >&3 2>/dev/null)
    exec 3>&-
  fi
  [ -z "$e" ] || find -L $e -maxdepth 0 -printf 'exs %h %U %m\0' 2>/dev/null
  set +f
}
# shellcheck disable=SC2034  # sets o and r for the caller
q() { o=$(timeout -k 1 "$T" nvidia-smi "$@" 2>&1 </dev/null); r=$?; }
)SH";

std::string PreludeSettings(const HostPaths& paths) {
  return "IFS=\" \t$NL\"\nDV=" + ShellQuote(paths.dev_dir) + "\nSD=; CI=; UI=; Q=\n";
}

std::string LibraryText(const std::set<LibraryPiece>& pieces) {
  std::string s;
  for (LibraryPiece piece : pieces) {
    switch (piece) {
      case LibraryPiece::kPrelude: s += kPrelude; break;
      case LibraryPiece::kPerlWalk: s += PerlWalkFunctions(); break;
      case LibraryPiece::kShmHolders: s += ShmHolderFunctions(); break;
      case LibraryPiece::kAuditHexDecoder: s += AuditHexDecoder(); break;
    }
  }
  return s;
}

std::string Whole(const StepScript& step) { return LibraryText(step.library) + step.own; }

}  // namespace remote_script_internal
}  // namespace fleetreap
