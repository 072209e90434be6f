// The GPU reset step: its script (remote_script.h) and its grammar
// (remote_script_output.h), side by side.
#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/remote_script.h"
#include "fleetreap/remote/remote_script_output.h"
#include "remote_script_prelude.h"
#include "step_records.h"

namespace fleetreap {

namespace {

// "u=$(timeout ... systemctl VERB -- UNIT...); printf 'WORD RC:TEXT'".
std::string UnitCommand(const char* verb, const char* word, const std::vector<std::string>& units,
                        std::chrono::milliseconds timeout, bool with_errors) {
  std::string s = "u=$(timeout -k 2 " + TimeoutSeconds(timeout) + " systemctl " + verb + " --";
  for (const std::string& unit : units) s += " " + ShellQuote(unit);
  s += std::string(with_errors ? " 2>&1" : " 2>/dev/null") + " </dev/null); r=$?\n";
  return s + "printf '" + word + " %s:%s\\0' \"$r\" \"$u\"\n";
}

// One audit line per unit of "units", with the systemctl call's exit code $r.
std::string AuditUnits(const char* action, const std::vector<std::string>& units) {
  std::string s;
  for (const std::string& unit : units) {
    s += "al " +
         ShellQuote(std::string("action=") + action + " unit=" + AuditValue(unit) +
                    " for=gpu_reset") +
         "\" rc=$r\"\n";
  }
  return s;
}

}  // namespace

std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                           const std::vector<std::string>& units,
                           std::chrono::milliseconds unit_timeout, const AuditRequest& audit) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n" + remote_script_internal::AuditPrelude(audit);
  if (!units.empty()) {
    s += UnitCommand("stop", "stop", units, unit_timeout, true);
    s += AuditUnits("stop_unit", units);
  }
  for (int gpu : gpus) {
    std::string index = std::to_string(gpu);
    s += "o=$(timeout -k 2 " + TimeoutSeconds(per_gpu) + " nvidia-smi --gpu-reset -i " + index +
         " 2>&1 </dev/null); r=$?\n";
    s += "printf 'reset " + index + " %s:%s\\0' \"$r\" \"$o\"\n";
    s += "al 'action=gpu_reset gpu=" + index + "'\" rc=$r\"\n";
  }
  if (!units.empty()) {
    s += UnitCommand("start", "start", units, unit_timeout, true);
    s += AuditUnits("start_unit", units);
    s += UnitCommand("is-active", "active", units, std::chrono::seconds(10), false);
  }
  s += "aud\nz end\n";
  return s;
}

namespace {

// An optional "WORD RC:TEXT" record: absent leaves *exit_code at -1.
Status TakeUnitRecord(RecordReader& reader, const std::string& word, int* exit_code,
                      std::string* text) {
  if (reader.PeekWord() != word) return Status::Ok();
  const HostRecord* r = nullptr;
  Status status = reader.Take(word, 2, true, "WORD RC:TEXT", &r);
  if (!status.ok()) return status;
  if (!ParseTagExit(r->Words()[1], exit_code) || *exit_code < 0) {
    return reader.Error("bad " + QuoteForMessage(r->tag, 40));
  }
  *text = r->payload;
  return Status::Ok();
}

}  // namespace

Status ParseGpuResetOutput(const std::string& out, GpuResetReply* reply) {
  *reply = GpuResetReply();
  return ParseHostRecords(out, "GPU reset", [&](RecordReader& reader) {
    Status status = TakeUnitRecord(reader, "stop", &reply->stop_exit, &reply->stop_text);
    while (status.ok() && reader.PeekWord() == "reset") {
      GpuReset reset;
      std::string text;
      status = TakeIndexed(reader, "reset", "reset N RC:TEXT", &reset.gpu, &reset.exit_code, &text);
      if (!status.ok()) return status;
      for (const std::string& line : SplitLines(text)) {
        std::string trimmed = Trim(line);
        if (trimmed.empty()) continue;
        reset.message += (reset.message.empty() ? "" : "; ") + trimmed;
      }
      reply->resets.push_back(reset);
    }
    if (status.ok())
      status = TakeUnitRecord(reader, "start", &reply->start_exit, &reply->start_text);
    std::string active;
    int active_exit = -1;
    if (status.ok()) status = TakeUnitRecord(reader, "active", &active_exit, &active);
    if (!status.ok()) return status;
    for (const std::string& line : SplitLines(active)) {
      if (!Trim(line).empty()) reply->active.push_back(Trim(line));
    }
    status = TakeAuditRecord(reader, &reply->audit);
    return status.ok() ? reader.TakeEnd() : status;
  });
}

Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets,
                           AuditOutcome* audit) {
  GpuResetReply reply;
  Status status = ParseGpuResetOutput(out, &reply);
  *resets = reply.resets;
  if (audit != nullptr) *audit = reply.audit;
  return status;
}

}  // namespace fleetreap
