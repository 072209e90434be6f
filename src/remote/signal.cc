// The signal step: its script and its grammar (signal.h), side by
// side.
#include "fleetreap/remote/signal.h"

#include <set>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/remote/host_paths.h"
#include "prelude.h"
#include "step_records.h"

namespace fleetreap {

using remote_script_internal::SignalParts;
using remote_script_internal::StepScript;
using remote_script_internal::Whole;

namespace {

// "atl PID": adds the audit line of the signal just sent to target PID.
std::string TargetAuditLines(const std::string& signal, const std::vector<Target>& targets,
                             const AuditRequest& audit) {
  if (!audit.enabled()) return "atl() { :; }\n";
  const std::string action = signal == "KILL" ? "kill" : "term";
  std::string s = "atl() { case $1 in";
  for (const Target& t : targets) {
    auto found = audit.targets.find(t.pid);
    AuditFields fields =
        found != audit.targets.end()
            ? found->second
            : AuditFields{{"pid", std::to_string(t.pid)}, {"start", std::to_string(t.start_time)}};
    std::string line = AuditLine(AuditRequest(), action, fields);
    line = line.substr(line.find(" action=") + 1);
    s += "\n  " + std::to_string(t.pid) + ") al " + ShellQuote(line) + ";;";
  }
  return s + "\n  esac\n}\n";
}

}  // namespace

// The signal step's body. Inputs: SIG (TERM or KILL), TG (targets as
// "PID:START:f|m", m for one only nvidia-smi charges), DIRS (their fd
// folders), WAITCS (the wait, centiseconds), POLLCS (the poll interval,
// centiseconds), PP (the targets' parents), SB (the scan's start, ticks; ""
// none).
constexpr char kSignalBody[] = R"SH(z 'signal 1'
[ -n "$PL" ] || nvm; Q=1; HP=; FE=
# The targets' fds (every thread's) and mappings: one perl where the host
# has it (pwk, the targets' PIDs only), which also checks and signals them
# (KS, KB, KT: the checks and the kill below, in the same run; its answers
# PA, PK=1), else fds and mps; a perl that failed or died (FE) is not
# trusted, the shell walks again and its answers are not read, but for the
# signals it set out to send before it died (PY): a target of one that is
# gone now is recorded as sent (gn), as that signal may be what ended it.
[ -z "$PL" ] || [ -z "$PIDS" ] || { KS=$SIG KB=$SB KT=$TG; pwk fm '' '' "$PIDS"; KS='' KB='' KT=''; }
[ -z "$FE" ] || PK=
if [ -z "$PL" ] || [ -n "$FE" ]; then
  HP=
  # shellcheck disable=SC2086  # a list of /proc paths
  [ -z "$DIRS" ] || fds $DIRS
  # shellcheck disable=SC2086  # a list of /proc paths
  [ -z "$MAPS" ] || mps $MAPS
fi
if [ -n "$SS" ]; then S=$SS; else pst $$; fi; z "now $S"
cs() { read -r u _ </proc/uptime; C=$(( ${u%.*} * 100 + 1${u#*.} - 100 )); }
cs; B=$C
# The checks: the PID was born before the scan that saw it began (SB), and
# still holds an NVIDIA device file (an fd of any thread, or a mapping), also
# when only nvidia-smi named it ("m"): every CUDA process holds the device
# files (an H200's MPS client too), so one that holds none is not the process
# nvidia-smi charged, or not one a signal would free. That it still has the
# start time it had when seen and is not a zombie (lv) is checked right
# before its signal, below, by perl or by the shell: once, not twice (a
# shell's lv reads the stat file a byte at a time).
# After the walk's perl (PK) that checked them itself, every target is E
# until its answers are read.
W=; R=; K=; P=; N=0; E=
# gn T: T is gone; where a perl had set out to signal it ("try T": PY), it
# is recorded sent, as that signal may be what ended it.
gn() {
  case " $PY " in
    *" $1 "*) z "sent ${1%%:*}"; W="$W $1"; N=$((N + 1)); atl "${1%%:*}";;
    *) z "gone ${1%%:*}";;
  esac
}
if [ -n "$PK" ]; then E=$TG; else
  for t in $TG; do
    p=${t%%:*}; r=${t#*:}; w=${r%%:*}
    if { [ -z "$SB" ] || [ "$w" -lt "$SB" ]; } &&
       case " $HP " in *" $p "*) true;; *) false;; esac; then
      E="$E $t"
    else
      gn "$t"
    fi
  done
fi
# The kill. Where the host has perl and the kernel pidfds (Linux 5.3), pks
# (PKS, perl_kill.cc) signals each target through a pidfd after reading its
# start time and state again: a PID freed and reused after the check is
# never the one signalled. It answers "sent|gone|failed T" per target T
# (PID:START:f|m), "try T" before each signal, or "kill T" where no pidfd
# opens (ENOSYS, a seccomp filter): kill(1) then, the check and the kill
# back to back. Where the walk's perl did the checks and the kill (PK), its
# answers (PA), a line for each target; else the kill's own perl runs pks.
y=$PA
if [ -z "$PK" ] && [ -n "$E" ] && [ -n "$PL" ]; then
  # shellcheck disable=SC2016,SC2086  # perl's own variables; E's words
  y=$(perl -e "$PKS"'pks($ARGV[0] eq "KILL" ? 9 : 15, "", @ARGV[1 .. $#ARGV])' "$SIG" $E 2>/dev/null)
fi
set -f; IFS=$NL
for l in $y; do
  IFS=' '
  # shellcheck disable=SC2086  # the line's two words
  set -- $l
  IFS=$NL
  [ $# -eq 2 ] || continue
  case " $E " in *" $2 "*) ;; *) continue;; esac
  case " $R " in *" $2 "*) continue;; esac
  t=$2; p=${t%%:*}
  case $1 in
    try) PY="$PY $t"; continue;;
    sent) R="$R $t"; z "sent $p"; W="$W $t"; N=$((N + 1)); atl "$p";;
    gone) R="$R $t"; gn "$t";;
    failed) R="$R $t"; z "failed $p";;
    kill) case " $K " in *" $t "*) continue;; esac; K="$K $t";;
    skip) R="$R $t"; z "gone $p"; continue;;
  esac
  P="$P $t"
done
# After the walk's perl, the targets that passed its checks (P) are E.
[ -z "$PK" ] || E=$P
IFS=" 	$NL"; set +f
# The targets perl did not answer for (no perl, no pidfd): kill(1). After
# the walk's perl, only those it checked and found no pidfd for (K).
for t in $E; do
  case " $R " in *" $t "*) continue;; esac
  [ -z "$PK" ] || case " $K " in *" $t "*) ;; *) continue;; esac
  p=${t%%:*}; r=${t#*:}; w=${r%%:*}
  # A holder that exits between the check and the kill is gone, not refused.
  if ! lv "$p" "$w"; then gn "$t"
  elif kill -s "$SIG" "$p" 2>/dev/null; then z "sent $p"; W="$W $t"; atl "$p"
  elif lv "$p" "$w"; then z "failed $p"
  else gn "$t"; fi
done
[ -z "$E$PY" ] || z "pidfd $N"
aud
# Waits by looking at the targets every 10 ms for the first second (a holder
# that answers TERM is gone within it; a killed one once the driver has freed
# its memory, about 0.2 s for 40 GiB on an H200), then every poll interval.
# A zombie whose every thread has exited is gone (lv): no wait for its reaping.
# Past the first look, one perl looks where the host has it (the same checks,
# each stat file read whole, perl's own sleeps) and answers "ok" and the
# targets still there at its last look (PID:STATE, PW), else the shell goes on
# looking (a shell's look reads each stat file a byte at a time).
alive() { A=; for t in $W; do p=${t%%:*}; r=${t#*:}; lv "$p" "${r%%:*}" && A="$A $p:$Z"; done; }
if [ -n "$W" ]; then
  cs; E=$((C + WAITCS)); F=$((C + 100))
  alive; PW=
  if [ -n "$A" ] && [ -n "$PL" ]; then
    # shellcheck disable=SC2016,SC2086  # perl's own variables; W's words
    y=$(perl -e 'my ($e, $f, $pc, @w) = @ARGV;
sub cs { open(my $u, "<", "/proc/uptime") or return undef; my $l = <$u>;
  defined $l && $l =~ /^([0-9]+)\.([0-9][0-9])/ ? $1 * 100 + $2 : undef }
sub lv { my ($p, $w) = @_; open(my $h, "<", "/proc/$p/stat") or return "";
  local $/; my $s = <$h>; $s = "" unless defined $s; $s =~ s/^.*\)//s; my @a = split " ", $s;
  return "" if @a < 20 || $a[19] ne $w;
  if ($a[0] =~ /^[ZX]$/) { opendir(my $t, "/proc/$p/task") or return "";
    my @k = grep { /^[0-9]/ } readdir $t; return "" if @k < 2 }
  $a[0] }
my @a;
while (1) {
  @a = ();
  for (@w) { my ($p, $w) = split /:/; my $z = lv($p, $w); push @a, "$p:$z" if $z ne "" }
  last unless @a;
  my $c = cs(); last unless defined $c && $c < $e;
  my $k = $c >= $f ? $pc : 1; $k = $e - $c if $e - $c < $k;
  select(undef, undef, undef, $k / 100);
}
print join(" ", "ok", @a), "\n";' "$E" "$F" "$POLLCS" $W 2>/dev/null </dev/null)
    case $y in ok|'ok '*) A=${y#ok}; PW=1;; esac
  fi
  while [ -z "$PW" ] && [ -n "$A" ]; do
    cs; [ $C -lt $E ] || break
    k=$POLLCS; [ $C -ge $F ] || k=1
    [ $((E - C)) -ge $k ] || k=$((E - C))
    c=$((k % 100)); [ $c -lt 10 ] && c=0$c
    sleep $((k / 100)).$c
    alive
  done
fi
# WL: a TERM left a target, or a parent lives on: the steps that ride after
# the wave in its round trip (the re-scan, the clean) would come too early,
# and the batch skips them (BatchScript).
# shellcheck disable=SC2034  # WL is read by the steps after the wave, where any
{
  WL=
  [ -n "$PW" ] || alive; for t in $A; do z "left ${t%%:*} ${t#*:}"; [ "$SIG" = KILL ] || WL=1; done
  for p in $PP; do lv "$p" && { z "parent $p"; WL=1; }; done
}
cs; z "done $((C - B))"
z end
)SH";

std::string SignalScript(const std::string& signal, const std::vector<Target>& targets,
                         std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                         const HostPaths& paths, const std::vector<int>& parents,
                         const AuditRequest& audit, uint64_t scan_start) {
  return Whole(SignalParts(signal, targets, wait, poll, paths, parents, audit, scan_start));
}

StepScript remote_script_internal::SignalParts(
    const std::string& signal, const std::vector<Target>& targets, std::chrono::milliseconds wait,
    std::chrono::milliseconds poll, const HostPaths& paths, const std::vector<int>& parents,
    const AuditRequest& audit, uint64_t scan_start) {
  std::string list, pids, dirs, maps, pp;
  for (const Target& t : targets) {
    list += " " + std::to_string(t.pid) + ":" + std::to_string(t.start_time) + ":" +
            (t.needs_fd ? "f" : "m");
    pids += (pids.empty() ? "" : " ") + std::to_string(t.pid);
    dirs += " /proc/" + std::to_string(t.pid) + "/task";
    maps += " /proc/" + std::to_string(t.pid) + "/maps";
  }
  for (int pid : parents) pp += " " + std::to_string(pid);
  std::string s =
      PreludeSettings(paths) + AuditPrelude(audit) + TargetAuditLines(signal, targets, audit);
  s += std::string("SIG=") + (signal == "KILL" ? "KILL" : "TERM") + "\n";
  s += "TG='" + list + "'\nPIDS='" + pids + "'\nDIRS='" + dirs + "'\nMAPS='" + maps + "'\nPP='" +
       pp + "'\n";
  s += "SB=" + (scan_start > 0 ? std::to_string(scan_start) : std::string()) + "\n";
  s += "WAITCS=" + std::to_string(wait.count() / 10) + "\n";
  s += "POLLCS=" + std::to_string(std::max<int64_t>(1, poll.count() / 10)) + "\n";
  return {{LibraryPiece::kPrelude, LibraryPiece::kPerlWalk}, s + kSignalBody};
}

// The signal script's records, its "end" included.
Status TakeSignalRecords(RecordReader& reader, SignalReply* result) {
  Status status = reader.TakeHeader("signal");
  const HostRecord* r = nullptr;
  if (status.ok()) status = reader.Take("now", 2, false, "now TICKS", &r);
  if (!status.ok()) return status;
  if (!ParseTagU64(r->Words()[1], &result->now)) return reader.Error("bad clock " + r->tag);
  std::set<int> seen;
  for (std::string word = reader.PeekWord(); word == "sent" || word == "gone" || word == "failed";
       word = reader.PeekWord()) {
    status = reader.Take(word, 2, false, "sent|gone|failed PID", &r);
    int pid = 0;
    if (status.ok() && (!ParseTagInt(r->Words()[1], &pid) || !seen.insert(pid).second)) {
      status = reader.Error("bad or repeated PID " + QuoteForMessage(r->tag, 40));
    }
    if (!status.ok()) return status;
    if (word == "sent") {
      result->sent.push_back(pid);
    } else if (word == "gone") {
      result->gone.push_back(pid);
    } else {
      result->failed.push_back(pid);
    }
  }
  if (reader.PeekWord() == "pidfd") {
    status = reader.Take("pidfd", 2, false, "pidfd COUNT", &r);
    if (status.ok() && (!ParseTagInt(r->Words()[1], &result->pidfd_sent) ||
                        result->pidfd_sent > static_cast<int>(result->sent.size()))) {
      status = reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    if (!status.ok()) return status;
  }
  status = TakeAuditRecord(reader, &result->audit);
  if (!status.ok()) return status;
  while (reader.PeekWord() == "left") {
    status = reader.Take("left", 3, false, "left PID STATE", &r);
    if (!status.ok()) return status;
    int pid = 0;
    std::string state = r->Words()[2];
    if (!ParseTagInt(r->Words()[1], &pid) || state.size() != 1 || !seen.count(pid)) {
      return reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    result->left.push_back({pid, state[0]});
  }
  while (reader.PeekWord() == "parent") {
    status = reader.Take("parent", 2, false, "parent PID", &r);
    int pid = 0;
    if (status.ok() && !ParseTagInt(r->Words()[1], &pid)) {
      status = reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    if (!status.ok()) return status;
    result->live_parents.push_back(pid);
  }
  if (reader.PeekWord() == "done") {
    status = reader.Take("done", 2, false, "done CS", &r);
    if (status.ok() && !ParseTagInt(r->Words()[1], &result->waited_cs)) {
      status = reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    if (!status.ok()) return status;
  }
  return reader.TakeEnd();
}

Status ParseSignalOutput(const std::string& out, SignalReply* result) {
  *result = SignalReply();
  return ParseHostRecords(out, "signal",
                          [&](RecordReader& reader) { return TakeSignalRecords(reader, result); });
}

}  // namespace fleetreap
