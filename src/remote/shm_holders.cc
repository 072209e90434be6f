// The /dev/shm files the holders hold (shm_holders.h): the scan's part
// that reads them and its records' grammar.
#include "shm_holders.h"

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "fleetreap/base/text.h"

namespace fleetreap {

namespace {

constexpr int kMaxFilesPerHolder = 64;

constexpr char kFunctions[] = R"SH(# sdx DEV: SX, the device as maps spells it.
sdx() {
  mj=$(( (($1 >> 8) & 0xfff) | (($1 >> 32) & ~0xfff) )); mn=$(( ($1 & 0xff) | (($1 >> 12) & ~0xff) ))
  hx $mj; SX=$h; hx $mn; SX=$SX:$h
}
hx() {
  h=; n=$1
  while [ "$n" -gt 0 ] || [ -z "$h" ]; do
    d=$((n % 16))
    case $d in 10) d=a;; 11) d=b;; 12) d=c;; 13) d=d;; 14) d=e;; 15) d=f;; esac
    h=$d$h; n=$((n / 16))
  done
  [ ${#h} -ge 2 ] || h=0$h
}
# shmh PIDS: the files in SM that they hold, by inode (shm_holders.h).
# shellcheck disable=SC2086  # lists of /proc paths and numbers, under set -f
shmh() {
  [ -n "$SM" ] || return 0
  sd=$(find "$SM" -maxdepth 0 -printf '%D' 2>/dev/null)
  case $sd in ''|*[!0-9]*) z 'shmh -'; return 0;; esac
  z 'shmh 1'
  [ -n "$1" ] || return 0
  sdx "$sd"; st=; sm=
  for p in $1; do
    st="$st /proc/$p/task"
    if pst "$p" && [ "$Z" = Z ]; then
      for g in /proc/"$p"/task/[0-9]*/maps; do sm="$sm $g"; done
    else
      sm="$sm /proc/$p/maps"
    fi
  done
  set -f
  sl=$(grep -m 256 -H -E " $SX [0-9]+ " $sm 2>/dev/null)
  sf=$(find $st -mindepth 2 -maxdepth 3 \( -path '*/task/*/fd/*' -lname "$SM/*" -exec stat -L --printf '%n %d %i\n' {} + \) -o \( ! -name fd -prune \) 2>/dev/null | head -n 16384)
  sp=; si=; IFS=$NL
  for l in $sl $sf; do
    IFS=' '
    case $l in
      */maps:*) p=${l#/proc/}; p=${p%%/*}; set -- ${l#*/maps:}; [ "$4" = "$SX" ] || continue; i=$5;;
      *) set -- $l; { [ $# -eq 3 ] && [ "$2" = "$sd" ]; } || continue; p=${1#/proc/}; p=${p%%/*}; i=$3;;
    esac
    case $p$i in ''|*[!0-9]*) continue;; esac
    case " $sp " in *" $p:$i "*) continue;; esac
    set -- $sp; c=0; for k in "$@"; do [ "${k%%:*}" = "$p" ] && c=$((c+1)); done
    [ $c -lt MAXF ] || continue
    sp="$sp $p:$i"; case " $si " in *" $i "*) ;; *) si="$si $i";; esac
  done
  IFS=" 	$NL"
  if [ -n "$si" ]; then
    e=; for i in $si; do e="$e -o -inum $i"; done
    su=" $(find "$SM" -mindepth 1 -maxdepth 1 -xdev -type f \( ${e# -o } \) -printf '%i:%U ' 2>/dev/null)"
    for k in $sp; do
      i=${k#*:}; case $su in *" $i:"*) ;; *) continue;; esac
      u=${su#* "$i":}; u=${u%% *}
      case $u in ''|*[!0-9]*) continue;; esac
      z "shmf ${k%%:*} $i $u"
    done
  fi
  set +f
}
)SH";

}  // namespace

std::string remote_script_internal::ShmHolderFunctions() {
  std::string s = kFunctions;
  const std::string mark = "MAXF";
  s.replace(s.find(mark), mark.size(), std::to_string(kMaxFilesPerHolder));
  return s;
}

Status TakeShmHolderRecords(RecordReader& reader, ScanOutput* scan) {
  if (reader.PeekWord() != "shmh") return Status::Ok();
  const HostRecord* r = nullptr;
  Status status = reader.Take("shmh", 2, false, "shmh 1|-", &r);
  if (!status.ok()) return status;
  const std::string state = r->Words()[1];
  if (state != "1" && state != "-") return reader.Error("bad " + QuoteForMessage(r->tag, 20));
  scan->shm_read = state == "1";
  std::set<std::pair<int, uint64_t>> seen;
  std::map<int, int> per_pid;
  while (reader.PeekWord() == "shmf") {
    status = reader.Take("shmf", 4, false, "shmf PID INODE UID", &r);
    if (!status.ok()) return status;
    const std::vector<std::string> words = r->Words();
    ShmHold hold;
    bool ok = scan->shm_read && ParseTagInt(words[1], &hold.pid) && hold.pid > 0 &&
              ParseTagU64(words[2], &hold.file.inode) && hold.file.inode > 0 &&
              ParseTagInt(words[3], &hold.file.uid) && hold.file.uid >= 0 &&
              seen.insert({hold.pid, hold.file.inode}).second &&
              ++per_pid[hold.pid] <= kMaxFilesPerHolder;
    if (!ok) return reader.Error("bad shmf record " + QuoteForMessage(r->tag, 60));
    scan->shm_holds.push_back(hold);
  }
  return Status::Ok();
}

}  // namespace fleetreap
