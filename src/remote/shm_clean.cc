// The /dev/shm step: its script and its grammar (shm_clean.h), side by
// side.
#include "fleetreap/remote/shm_clean.h"

#include <algorithm>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "prelude.h"
#include "scan_records.h"
#include "step_records.h"

namespace fleetreap {

using remote_script_internal::StepScript;

namespace {

// Why find's -delete failed, from its error lines ("find: cannot delete
// '/dev/shm/x': Permission denied"): the text after each line's last ": "
// (the name may hold anything, the system's message comes last), the
// distinct ones joined with "; ", at most 200 characters, control
// characters as '?'.
std::string FailureReason(const std::string& errors) {
  std::vector<std::string> reasons;
  for (const std::string& line : SplitLines(errors)) {
    size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;
    std::string reason = line.substr(colon + 2);
    for (char& c : reason) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (!reason.empty() && std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
      reasons.push_back(reason);
    }
  }
  std::string joined = Join(reasons, "; ");
  return joined.empty() ? "unknown" : joined.substr(0, 200);
}

// The find expression of the selected files: each inode with the owner
// its file must have; " -false" when none is.
std::string SelectedFiles(const ShmSelection& selection) {
  std::string any;
  for (const ShmFile& file : selection.only) {
    if (file.inode == 0 || file.uid < 0) continue;
    any += std::string(any.empty() ? "" : " -o") + " \\( -inum " + std::to_string(file.inode) +
           " -uid " + std::to_string(file.uid) + " \\)";
  }
  return any.empty() ? " -false" : any;
}

}  // namespace

// The /dev/shm step's body. Inputs: M (the folder), DRY, and cand, the
// find over M's regular files matching the playbook's patterns (and, under
// a scope, being one of the selected inodes with its owner).
constexpr char kShmBody[] = R"SH(z 'shm 1'
# The candidates' inodes, then which of them any process has open (the fd
# pass) or mapped (maps lines on /dev/shm's device with that inode). No
# candidate (the usual case): nothing more to read or start. Only these
# inodes are ever removed (CV): a file made after this listing was checked by
# no one and is left for the next run.
set -f; CI=$(cand -printf '%i ' 2>/dev/null); set +f
if [ -n "$CI" ]; then
  CV=; for u in $CI; do CV="$CV -o -inum $u"; done; CV=${CV# -o }
  SD=$(find "$M" -maxdepth 0 -printf '%D' 2>/dev/null)
  case $SD in ''|*[!0-9]*) SD=;; esac
  if [ -n "$SD" ]; then
    sdx "$SD"
    # One perl where the host has it (pwk: the fd pass and the candidates'
    # mappings), else fds, find and grep.
    [ -n "$PL" ] || nvm; Q=1
    if [ -n "$PL" ]; then
      pwk fs "$SX"
      # shellcheck disable=SC2034  # FW and FF are for a scan after it (walk)
      FW=1 FF=$FE
    else
      fds /proc/[0-9]*/task
      # shellcheck disable=SC2034  # FW and FF are for a scan after it (walk)
      FW=1 FF=$FE
      # shellcheck disable=SC2086  # CI is a list of inode numbers
      set -- $CI; IFS='|'; e="$*"; IFS=" 	$NL"
      y=$(find /proc/[0-9]*/maps -exec grep -h -E " $SX ($e) " {} + 2>/dev/null)
      [ $? -lt 2 ] || FE=1
      set -f; IFS=$NL
      # shellcheck disable=SC2086  # the maps line's fields
      for l in $y; do IFS=' '; set -- $l; [ "$4" = "$SX" ] && UI="$UI $5"; done
      IFS=" 	$NL"; set +f
    fi
  fi
  i=; for u in $UI; do case " $CI " in *" $u "*) i="$i -o -inum $u";; esac; done
  # Unknown device, or a walk that could not run (FE): every match counts
  # as in use, nothing is removed.
  i=${i# -o }; [ -n "$i" ] || i=-false
  if [ -z "$SD" ] || [ -n "$FE" ]; then i=-true; fi
  set -f
  # shellcheck disable=SC2086  # i and CV are find's -inum expressions, word by word
  if [ -n "$DRY" ]; then
    cand \( $CV \) \( \( $i \) -printf 'inuse:%f\0' -o -printf 'would:%f\0' \) 2>/dev/null
  else
    # find's own errors say why a removal failed ("...: Permission denied").
    rmv() { cand \( $CV \) \( \( $i \) -printf 'inuse:%f\0' -o -delete -printf 'removed:%f\0' "$@" -o -printf 'failed:%f\0' \); }
    exec 3>&1
    if [ -n "$AP" ]; then
      # The removed names also go, NUL-ended, to one od: hex bytes the
      # shell turns into audit lines (hb), whatever bytes a name holds.
      h=$( { e=$(rmv -fprintf /proc/self/fd/4 '%f\0' 2>&1 >&3); [ -z "$e" ] || printf 'shmerr:%s\0' "$e" >&3; } 4>&1 | od -An -v -tx1)
      n=
      for b in $h; do
        if [ "$b" = 00 ]; then al "action=shm_remove file=$MA/$n"; n=; else hb "$b"; n=$n$c; fi
      done
    else
      e=$(rmv 2>&1 >&3)
      [ -z "$e" ] || printf 'shmerr:%s\0' "$e"
    fi
    exec 3>&-
  fi
  set +f
fi
aud
)SH";

std::string ShmCleanScript(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths, const AuditRequest& audit,
                           const ShmSelection& selection) {
  return Whole(
             remote_script_internal::ShmCleanRecords(patterns, dry_run, paths, audit, selection)) +
         "z end\n";
}

StepScript remote_script_internal::ShmCleanRecords(const std::vector<std::string>& patterns,
                                                   bool dry_run, const HostPaths& paths,
                                                   const AuditRequest& audit,
                                                   const ShmSelection& selection) {
  std::string names;
  for (const std::string& pattern : patterns) {
    names += std::string(names.empty() ? "" : " -o") + " -name " + ShellQuote(pattern);
  }
  if (names.empty()) names = " -false";
  if (!selection.all) names += " \\) \\(" + SelectedFiles(selection);
  StepScript script;
  script.library = {LibraryPiece::kPrelude, LibraryPiece::kPerlWalk, LibraryPiece::kShmHolders};
  if (!dry_run && audit.enabled()) script.library.insert(LibraryPiece::kAuditHexDecoder);
  std::string& s = script.own;
  s = PreludeSettings(paths) + AuditPrelude(dry_run ? AuditRequest() : audit);
  s += "M=" + ShellQuote(paths.shm_dir) + "\nMA=" + ShellQuote(AuditValue(paths.shm_dir)) + "\n";
  s += std::string("DRY=") + (dry_run ? "1" : "") + "\n";
  s +=
      "cand() { find \"$M\" -mindepth 1 -maxdepth 1 -xdev -type f \\(" + names + " \\) \"$@\"; }\n";
  s += kShmBody;
  return script;
}

// "shm 1", then "removed|would|inuse|failed:NAME" records, then
// "shmerr:TEXT" (find's errors) when there were any.
Status TakeShmRecords(RecordReader& reader, ShmOutput* result) {
  Status status = reader.TakeHeader("shm");
  if (!status.ok()) return status;
  for (std::string word = reader.PeekWord();
       word == "removed" || word == "would" || word == "inuse" || word == "failed";
       word = reader.PeekWord()) {
    const HostRecord* r = nullptr;
    status = reader.Take(word, 1, true, "removed|would|inuse|failed:NAME", &r);
    if (!status.ok()) return status;
    if (r->payload.empty()) return reader.Error("empty file name");
    if (word == "removed" || word == "would") result->removed.push_back(r->payload);
    if (word == "inuse") result->in_use.push_back(r->payload);
    if (word == "failed") result->failed.push_back(r->payload);
  }
  if (reader.PeekWord() == "shmerr") {
    const HostRecord* r = nullptr;
    status = reader.Take("shmerr", 1, true, "shmerr:TEXT", &r);
    if (!status.ok()) return status;
    result->failed_why = FailureReason(r->payload);
  }
  return TakeAuditRecord(reader, &result->audit);
}

Status ParseShmOutput(const std::string& out, ShmOutput* result, ScanOutput* scan) {
  *result = ShmOutput();
  if (scan != nullptr) *scan = ScanOutput();
  return ParseHostRecords(out, scan ? "shm and verify" : "shm", [&](RecordReader& reader) {
    Status status = TakeShmRecords(reader, result);
    if (!status.ok()) return status;
    return scan != nullptr ? ParseScanRecords(reader, scan) : reader.TakeEnd();
  });
}

}  // namespace fleetreap
