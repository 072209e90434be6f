// The scan step's script (scan_script.h): the scan used by inspect, re-scan
// and verify. The per-GPU query after a lost GPU is per_gpu_query.cc; the
// scan's grammar is scan_output.cc, its reading into a HostSnapshot scan.cc.
#include "fleetreap/remote/scan_script.h"

#include <algorithm>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/model/daemon_pid_file.h"
#include "fleetreap/remote/gpu_health_query.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "prelude.h"
#include "step_records.h"

namespace fleetreap {

namespace {

using remote_script_internal::ScanParts;
using remote_script_internal::StepScript;
using remote_script_internal::Whole;

// Where nv-fabricmanager writes its PID (DaemonPidFiles).
std::string FabricManagerPidFile() {
  for (const DaemonPidFile& file : DaemonPidFiles()) {
    if (file.daemon == "nv-fabricmanager") return file.path;
  }
  return "/var/run/nvidia-fabricmanager/nv-fabricmanager.pid";
}

// A playbook unit as the show's argument: a glob as it is, a plain name as
// a glob that matches only that name (its last character in brackets).
// systemd 252's `systemctl show` (systemctl-show.c, show()) reads a number
// as a job id, shows a plain name whether loaded or not (LoadState=
// not-found, ActiveState=inactive) and fails as a whole, printing no more
// blocks, on a name it cannot load (a template such as "vllm@.service", an
// invalid one); a glob it expands (expand_unit_names, get_unit_list) to the
// loaded units whose names match (ListUnitsByPatterns: fnmatch without
// escapes, the match list-units made) and that are not inactive, as
// list-units without --all lists them. As globs, the playbook's names match
// what list-units matched, and none of them can fail the show.
std::string ShowPattern(const std::string& unit) {
  if (unit.find_first_of("*?[") != std::string::npos) return unit;
  return unit.substr(0, unit.size() - 1) + "[" + unit.back() + "]";
}

std::string AppsArguments() {
  return "--query-compute-apps=" + Join(ScanAppsFields(), ",") + " --format=csv,nounits";
}

}  // namespace

const std::vector<std::string>& ScanGpuFields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> all = GpuQueryFields();
    for (const std::string& field : GpuHealthFields()) {
      if (std::find(all.begin(), all.end(), field) == all.end()) all.push_back(field);
    }
    return all;
  }();
  return fields;
}

const std::vector<std::string>& ScanAppsFields() {
  static const std::vector<std::string> fields = {"pid", "gpu_uuid", "gpu_bus_id",
                                                  "used_gpu_memory"};
  return fields;
}

std::string ComputePidsArguments(int gpu) {
  return "--query-compute-apps=pid --format=csv,noheader -i " + std::to_string(gpu);
}

// The scan's body. Its inputs are set before it: the playbook's units as
// the positional parameters (each a glob: ShowPattern) and U empty, T
// (nvidia-smi's bound in seconds), GF (the GPU query's fields,
// ScanGpuFields) and GB (the base fields an old driver knows), AQ (compute
// apps), HOLD (the holder part), TABLE (the plain table too), WATCH
// (parents whose children to list), CC (how many control-only holders are
// described at most), DR (the driver's GPU folder), RD (the readiness part)
// and KM (the kernel log, "" not read).
constexpr char kScanBody[] = R"SH(z 'scan 1'
# The readiness part (RD): the driver's GPU list, the NVSwitch nodes and,
# where there are any, whether root's fabric manager runs (by the comm of
# the PID its PID file FP names, else of each process: no process started),
# then with KM the kernel log: whether it opens, and its boot record and
# Xid lines (dd and grep, bounded; read by the walk's perl where it ran
# before: KR, KY).
rdy() {
  [ -n "$RD" ] || return 0
  y=; for g in "$DR"/*; do [ -e "$g" ] && y="$y ${g##*/}"; done; printf 'drv:%s\0' "$y"
  n=0; for g in "$DV"/nvidia-nvswitch[0-9]*; do [ -e "$g" ] && n=$((n+1)); done
  m=-
  if [ $n -gt 0 ]; then
    m=0; p=
    read -r p 2>/dev/null <"$FP"; case $p in ''|*[!0-9]*) p=;; esac
    for f in ${p:+"/proc/$p/comm"} /proc/[0-9]*/comm; do
      c=; read -r c 2>/dev/null <"$f"
      case $c in nv-fabricmanag*) ;; *) continue;; esac
      u=; { while read -r k v w; do [ "$k" = Uid: ] && u=$v && break; done; } 2>/dev/null <"${f%/comm}/status"
      [ "$u" = 0 ] && m=1 && break
    done
  fi
  z "fabric $n $m"
  if [ -z "$KM" ]; then
    z 'kmsg -'
  elif [ -n "$KR" ] && true 2>/dev/null <"$KM"; then
    printf 'kmsg 0:%s\0' "$KY"
  elif true 2>/dev/null <"$KM"; then
    y=$(dd if="$KM" iflag=nonblock bs=8192 count=262144 2>/dev/null | grep -a -m 1000 -e '^[0-9]*,0,' -e 'NVRM: Xid')
    printf 'kmsg 0:%s\0' "$y"
  else
    z 'kmsg 1:'
  fi
}
# walk: the holder walk (nvm, fds, mps; one perl where the host has it:
# pwk), which only fills variables. The fd pass of a /dev/shm listing
# earlier in the same round trip (RW: the listing and this scan are one read
# of the host; FW: its pass ran, FF its FE) is this scan's: one walk of
# every thread's fds per round trip.
walk() {
  [ -n "$PL" ] || nvm
  if [ -n "$RW" ] && [ -n "$FW" ]; then
    FE=$FF; if [ -n "$PL" ]; then pwk m '' "$KM"; else mps /proc/[0-9]*/maps; fi
  elif [ -n "$PL" ]; then
    pwk fm '' "$KM"
  else
    fds /proc/[0-9]*/task; mps /proc/[0-9]*/maps
  fi
  WK=1; RW=
}
# d: the folder of PID file $1, /var/run read as the /run it links to.
pdir() { d=${1%/*}; case $d in /var/run) d=/run;; /var/run/*) d=/run/${d#/var/run/};; esac; }
# With the holder part, the GPU query and the compute-apps query run beside
# each other and beside the holder walk (nvm, fds, mps: they only fill
# variables, printed below in their order), each query into a file of its
# own in one folder (where none can be made: the queries one after the
# other, then the walk), which ulimit -f keeps to 8 MiB or more (512- or
# 1024-byte blocks) whatever a flooding nvidia-smi prints: past it the query
# is cut, read as broken. The scan's own nvidia-smi runs, which may hold
# device files while the walk looks, have ended and been reaped before the
# holders are described (dump), so none of them is ever described: their
# records name no process.
AF=; AP=; GQ=; WK=; KR=; QG=; QD=; QF=; QS=; PQ=; MD=; MI=; DN=
# With the holder part: the PID namespace this shell sees, and which of the
# daemons' PID files (and the namespace marker) are root's and writable by
# no one else: read by dump's find of the exe links (NY), printed after the
# details. Each file's folder is vouched for too: /var/run is a link to
# /run, so a file directly in it is judged by /run. Where no table and no
# watched parent can add PIDs to describe (TABLE, WATCH), the walk's perl
# describes the charged PIDs and the holders itself (DN: pwk).
if [ -n "$HOLD" ]; then
  set -f
  PD=; for f in $PF; do pdir "$f"; PD="$PD $d"; done
  NY="/proc/$$/ns/pid $PF $PD /etc/fleetreap/host-pid-namespace"
  set +f
  [ -n "$TABLE" ] || [ -n "$WATCH" ] || DN=$NY
fi
# Where the host has perl, the walk's perl runs the two queries beside the
# walk itself (each bounded as timeout bounds it, read through a pipe and cut
# at 8 MiB: no folder, no files, no timeout process) and prints their records: QG is the GPU query's exit,
# QD the PIDs the compute apps charge. No QG (a driver that does not know a
# field, a perl that failed): the queries the shell's way below.
if [ -n "$HOLD" ] && [ -n "$PL" ]; then PQ=1; walk; PQ=; fi
DN=
# The session and the clock, where the walk's perl did not print them before
# the queries' records (QS).
if [ -z "$QS" ]; then
  # The session: this shell and its ancestors, by the PPid line of status
  # (SA where a walk's perl earlier in the round trip read them: SV).
  a=$SA; p=$$; i=0
  while [ -z "$SV" ] && [ "$p" -gt 1 ] 2>/dev/null && [ $i -lt 64 ]; do
    n=; { while read -r k v; do [ "$k" = PPid: ] && n=$v && break; done; } 2>/dev/null </proc/"$p"/status
    case $n in ''|*[!0-9]*) break;; esac
    p=$n; i=$((i+1)); [ "$p" -gt 1 ] && a="$a $p"
  done
  z "session $$$a"
  # The scan's start: this shell's own start time (the signal step drops
  # targets born after it; SS where a walk's perl read it).
  if [ -n "$SS" ]; then z "clock $SS"; else pst $$ && z "clock $S"; fi
fi
# QF: the GPU query named a field the driver does not know; its first
# leaving-out ("1 FIELDS", else "0": the base fields), and the loop below
# goes on from there.
i=0
# shellcheck disable=SC2086  # AQ is nvidia-smi's arguments, one word each
if [ -n "$QG" ]; then
  o=
elif [ -n "$QF" ]; then
  i=1; GF=${QF#* }; case $QF in 1*) ;; *) GF=$GB; i=4;; esac
  q --query-gpu="$GF" --format=csv,nounits
elif [ -n "$HOLD" ] && [ -z "$WK" ] && AF=$(mktemp -d 2>/dev/null); then
  (ulimit -f 16384 2>/dev/null; exec timeout -k 1 "$T" nvidia-smi $AQ >"$AF/a" 2>&1 </dev/null) &
  AP=$!
  (ulimit -f 16384 2>/dev/null; exec timeout -k 1 "$T" nvidia-smi --query-gpu="$GF" --format=csv,nounits >"$AF/g" 2>&1 </dev/null) &
  GQ=$!
  walk
  wait "$GQ"; r=$?; o=$(cat "$AF/g" 2>/dev/null)
else
  # The GPU query; a driver that does not know a field names it: asked again
  # without it (three such fields at most), then with the base fields alone
  # (GB): five runs at most, one on a driver that knows every field.
  q --query-gpu="$GF" --format=csv,nounits
fi
while [ $i -lt 4 ]; do
  case $o in *'not a valid field'*) ;; *) break;; esac
  f=; k=; IFS=,
  for y in $GF; do case $o in *"\"$y\""*) k=1;; *) f="$f${f:+,}$y";; esac; done
  IFS=" 	$NL"; i=$((i+1))
  { [ -n "$k" ] && [ $i -lt 4 ]; } || { f=$GB; i=4; }
  GF=$f; q --query-gpu="$GF" --format=csv,nounits
done
if [ -n "$QG" ]; then G=$QG; else printf 'gpu %s:%s\0' "$r" "$o"; G=$r; fi
if [ -z "$HOLD" ]; then
  z 'apps -'; z 'table -'; rdy
else
  D=$QD
  # A hung nvidia-smi is not asked again; the PIDs it charges are holders.
  if [ -n "$QG" ]; then
    :
  elif [ "$G" = 124 ] || [ "$G" = 137 ]; then
    [ -z "$AP" ] || wait "$AP"
    z 'apps -'
  else
    if [ -n "$AP" ]; then
      wait "$AP"; r=$?; o=$(cat "$AF/a" 2>/dev/null)
    else
      # shellcheck disable=SC2086
      q $AQ
    fi
    printf 'apps %s:%s\0' "$r" "$o"
    set -f; IFS=$NL
    for l in $o; do p=${l%%,*}; case $p in ''|*[!0-9]*) ;; *) D="$D $p";; esac; done
    IFS=" 	$NL"; set +f
  fi
  # The plain table's Processes box: the PID is the word before a type.
  if [ -z "$TABLE" ] || [ "$G" = 124 ] || [ "$G" = 137 ]; then
    z 'table -'
  else
    q; printf 'table %s:%s\0' "$r" "$o"
    set -f; IFS=$NL
    for l in $o; do
      IFS=' '; w=
      for y in $l; do
        case $y in C|G|C+G|M|M+C) case $w in ''|*[!0-9]*) ;; *) D="$D $w";; esac;; esac
        w=$y
      done
    done
    IFS=" 	$NL"; set +f
  fi
  [ -z "$AF" ] || rm -rf "$AF"
  rdy
  [ -n "$WK" ] || walk
  z "majors$MN"
  cap "$CC"
  # A walk that could not run saw no holder: said, never read as none.
  [ -z "$FE" ] || z 'blind'
  # Each GPU's minor: as the walk's perl read them (MD, MI), else here.
  if [ -n "$MD" ]; then
    set -f; IFS=$NL
    for l in $MI; do printf 'minor %s:%s\0' "${l%% *}" "${l#* }"; done
    IFS=" 	$NL"; set +f
  else
    for g in "$DR"/*; do
      [ -r "$g/information" ] || continue
      { while IFS=: read -r k v; do
        [ "$k" = 'Device Minor' ] || continue
        # The minor's digits without the blanks (no set --: the positional
        # parameters are the playbook's units, for the show below).
        for v in $v; do break; done
        case $v in ''|*[!0-9]*) ;; *) printf 'minor %s:%s\0' "$v" "${g##*/}";; esac
        break
      done; } 2>/dev/null <"$g/information"
    done
  fi
  D="$D$HP"
  # A kernel without CONFIG_PROC_CHILDREN has no children files: "kids P -".
  for p in $WATCH; do
    [ -d "/proc/$p" ] || continue
    c=; k=-
    for f in "/proc/$p"/task/*/children; do
      [ -e "$f" ] || continue
      k=; y=; read -r y <"$f" 2>/dev/null; c="$c $y"
    done
    k="kids $p${k:+ $k}"; for y in $c; do k="$k $y"; done; z "$k"; D="$D $p $c"
  done
  # Each PID once, in the order first seen.
  HP=; for p in $D; do add "$p"; done
  # The details: by the walk's perl where it gave them (DT: its records came
  # after the queries', NS's lines in PN), else by perl where the walk was
  # perl's and ran, else dump's.
  if [ -n "$DT" ]; then NS=$PN; elif [ -n "$PL" ] && [ -z "$FE" ]; then pdt "$HP"; else dump "$HP"; fi
  [ -z "$SM" ] || shmh "$HP"
  set -f
  y=$NS
  # The units that own the holders, where perl (the details' or the walk's)
  # read them from the cgroups (the first line of NS, UD), else by the loop
  # below.
  U=; UD=
  case $y in U|'U '*) l=${y%%"$NL"*}; U=${l#U}; UD=1;; esac
  IFS=$NL; ok=
  for l in $y; do
    case $l in 'L pid:['*']') printf 'pidns:%s\0' "${l#L }";; 'O '*) ok="$ok ${l#O }";; esac
  done
  IFS=" 	$NL"
  i=0
  for f in $PF; do
    pdir "$f"
    case " $ok " in *" $d "*) case " $ok " in *" $f "*) v=; read -r v <"$f" 2>/dev/null; printf 'pidf %s:%s\0' $i "$v";; esac;; esac
    i=$((i+1))
  done
  case " $ok " in *" /etc/fleetreap/host-pid-namespace "*) v=; read -r v </etc/fleetreap/host-pid-namespace 2>/dev/null; printf 'pidmark:%s\0' "$v";; esac
  # This shell's cgroup, and the units that own the holders (from their
  # cgroups), printed for the show's reading (owners).
  c=; while IFS= read -r l; do c="$c$l$NL"; done </proc/$$/cgroup 2>/dev/null
  printf 'selfcg:%s\0' "$c"
  [ -n "$UD" ] || for p in $HP; do
    while read -r l; do
      case $l in 0::/*|*:name=systemd:/*) ;; *) continue;; esac
      IFS=/; for w in ${l#*:/}; do case $w in *[!A-Za-z0-9:_.@-]*) ;; ?*.service) case " $U " in *" $w "*) ;; *) U="$U $w";; esac;; esac; done; IFS=" 	$NL"
    done <"/proc/$p/cgroup" 2>/dev/null
  done
  set +f
  printf 'owners:%s\0' "$U"
fi
# One systemctl run: the holders' units (U) and the playbook's units (the
# positional parameters, each a glob: ScanParts), their Restart=,
# RestartSec=, KillMode=, cgroup and main PID, and ActiveState, which tells
# the playbook's active units (ActiveUnitsShown, systemctl_show.h).
if [ -z "$U" ] && [ $# -eq 0 ]; then
  z 'show -'
elif command -v systemctl >/dev/null 2>&1; then
  # shellcheck disable=SC2086  # U is a list of unit names, each checked
  u=$(systemctl show -p Id,ActiveState,Restart,RestartUSec,KillMode,ControlGroup,MainPID -- $U "$@" 2>/dev/null </dev/null); printf 'show %s:%s\0' $? "$u"
else
  z 'show 127:'
fi
z end
)SH";

std::string ScanScript(const ScanRequest& request, const HostPaths& paths) {
  return Whole(ScanParts(request, paths));
}

StepScript remote_script_internal::ScanParts(const ScanRequest& request, const HostPaths& paths) {
  std::string watch;
  for (int pid : request.watch) watch += (watch.empty() ? "" : " ") + std::to_string(pid);
  const bool shm = request.holders && request.shm_files;
  StepScript script;
  script.library = {LibraryPiece::kPrelude, LibraryPiece::kPerlWalk};
  if (shm) script.library.insert(LibraryPiece::kShmHolders);
  std::string& s = script.own;
  s = PreludeSettings(paths) + "U=\nset --";
  for (const std::string& unit : request.units) {
    if (!unit.empty()) s += " " + ShellQuote(ShowPattern(unit));
  }
  s += "\nT=" + TimeoutSeconds(request.nvidia_smi_timeout) + "\n";
  s += "GF=" + ShellQuote(Join(ScanGpuFields(), ",")) + "\n";
  s += "GB=" + ShellQuote(Join(GpuQueryFieldsWithoutRecovery(), ",")) + "\n";
  s += std::string("RD=") + (request.readiness ? "1" : "") + "\n";
  s += "KM=" + (request.readiness && request.kernel_log ? ShellQuote(paths.kmsg) : "") + "\n";
  s += "AQ=" + ShellQuote(AppsArguments()) + "\n";
  s += std::string("HOLD=") + (request.holders ? "1" : "") + "\n";
  s += std::string("TABLE=") + (request.table ? "1" : "") + "\n";
  s += "WATCH='" + watch + "'\n";
  s += "CC=" + std::to_string(request.control_only_cap) + "\n";
  s += "DR=" + ShellQuote(paths.driver_dir) + "\n";
  std::string pid_files;
  for (const DaemonPidFile& file : DaemonPidFiles()) pid_files += " " + file.path;
  s += "PF='" + pid_files + "'\n";
  s += "FP=" + ShellQuote(FabricManagerPidFile()) + "\n";
  s += "SM=" + (shm ? ShellQuote(paths.shm_dir) : "") + "\n";
  s += kScanBody;
  return script;
}

}  // namespace fleetreap
