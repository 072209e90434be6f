// The audit lines of the steps that change a host (audit.h), and the shell
// that hands them to logger (prelude.h).
#include "fleetreap/remote/audit.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/model/process_owner.h"
#include "prelude.h"
#include "step_records.h"

namespace fleetreap {

namespace {

constexpr size_t kMaxValue = 240;

bool SafeAuditByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string("._,:@+/-").find(static_cast<char>(c)) != std::string::npos;
}

std::string HexByte(unsigned char c) {
  char buf[4];
  std::snprintf(buf, sizeof buf, "%02x", c);
  return buf;
}

}  // namespace

std::string AuditValue(const std::string& text) {
  if (text.empty()) return "-";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    std::string piece = SafeAuditByte(c) ? std::string(1, ch) : "%" + HexByte(c);
    if (out.size() + piece.size() > kMaxValue) return out + "...";
    out += piece;
  }
  return out;
}

std::string AuditLine(const AuditRequest& request, const std::string& action,
                      const AuditFields& fields) {
  std::string line =
      "run=" + AuditValue(request.run_id) + " controller=" + AuditValue(request.controller) +
      " operator=" + AuditValue(request.operator_name) + " action=" + AuditValue(action);
  for (const auto& [key, value] : fields) line += " " + key + "=" + AuditValue(value);
  return line;
}

AuditFields AuditFieldsOf(const Holder& holder) {
  std::set<int> gpus(holder.gpus.begin(), holder.gpus.end());
  gpus.insert(holder.charged_gpus.begin(), holder.charged_gpus.end());
  std::vector<std::string> indexes;
  for (int gpu : gpus) indexes.push_back(std::to_string(gpu));
  return {{"pid", std::to_string(holder.pid)},
          {"start", std::to_string(holder.start_time)},
          {"exe", holder.exe},
          {"user", holder.user},
          {"owner", DescribeOwner(holder.owner)},
          {"gpus", Join(indexes, ",")}};
}

namespace remote_script_internal {

// Without a run id: the functions do nothing, and AP is empty.
constexpr char kNoAudit[] = R"SH(# shellcheck disable=SC2034  # the /dev/shm step reads it
AP=
al() { :; }
aud() { :; }
)SH";

// With one: al adds a line (AP, the run's fields, then its own), aud hands
// the batch to one logger, which fails (rather than drop the lines) when no
// one serves /dev/log.
constexpr char kAuditFunctions[] = R"SH(AL=; AN=0
al() { AL="$AL$AP $1
"; AN=$((AN + 1)); }
aud() {
  [ "$AN" -gt 0 ] || return 0
  printf '%s' "$AL" | logger --socket-errors=on -S 2048 -t fleetreap >/dev/null 2>&1
  z "audit $AN $?"; AL=; AN=0
}
)SH";

std::string AuditPrelude(const AuditRequest& request) {
  if (!request.enabled()) return kNoAudit;
  // The run's own fields, without "action" (AuditLine's first four).
  std::string run = AuditLine(request, "", {});
  run = run.substr(0, run.rfind(" action="));
  return "AP=" + ShellQuote(run) + "\n" + kAuditFunctions;
}

std::string AuditHexDecoder() {
  std::string s = "hb() { case $1 in";
  for (char c = 0x21; c < 0x7f; ++c) {
    const auto byte = static_cast<unsigned char>(c);
    if (SafeAuditByte(byte)) s += " " + HexByte(byte) + ") c=" + std::string(1, c) + ";;";
  }
  return s + " *) c=%$1;; esac; }\n";
}

}  // namespace remote_script_internal

Status TakeAuditRecord(RecordReader& reader, AuditOutcome* audit) {
  if (reader.PeekWord() != "audit") return Status::Ok();
  const HostRecord* r = nullptr;
  Status status = reader.Take("audit", 3, false, "audit LINES RC", &r);
  if (!status.ok()) return status;
  AuditOutcome outcome;
  if (!ParseTagInt(r->Words()[1], &outcome.lines) || outcome.lines <= 0 ||
      !ParseTagExit(r->Words()[2], &outcome.exit_code) || outcome.exit_code < 0) {
    return reader.Error("bad " + QuoteForMessage(r->tag, 40));
  }
  if (audit != nullptr) {
    audit->lines += outcome.lines;
    if (audit->exit_code <= 0) audit->exit_code = outcome.exit_code;
  }
  return Status::Ok();
}

}  // namespace fleetreap
