// The GPU reset step's grammar (gpu_reset.h): GpuResetScript's
// records read into a GpuResetReply.
#include "fleetreap/base/text.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/gpu_reset.h"
#include "step_records.h"

namespace fleetreap {

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

// The text's non-empty lines, trimmed.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (const std::string& line : SplitLines(text)) {
    if (!Trim(line).empty()) lines.push_back(Trim(line));
  }
  return lines;
}

// An optional "WORD RC:STATES" record: is-active's states, one a line.
Status TakeStates(RecordReader& reader, const std::string& word, std::vector<std::string>* states) {
  std::string text;
  int exit_code = -1;
  Status status = TakeUnitRecord(reader, word, &exit_code, &text);
  if (status.ok()) *states = Lines(text);
  return status;
}

// "reset N RC:TEXT" (tried) or "busy N RC:PIDS" (not tried: the compute
// processes nvidia-smi listed on it, or the query failed).
Status TakeReset(RecordReader& reader, GpuReset* reset) {
  const std::string word = reader.PeekWord();
  std::string text;
  int exit_code = -1;
  Status status = TakeIndexed(reader, word, "reset|busy N RC:TEXT", &reset->gpu, &exit_code, &text);
  if (!status.ok()) return status;
  const std::string joined = Join(Lines(text), "; ");
  if (word == "reset") {
    reset->exit_code = exit_code;
    reset->message = joined;
  } else if (exit_code != 0) {
    reset->refused = "nvidia-smi could not list its compute processes (exit " +
                     std::to_string(exit_code) + (joined.empty() ? "" : ": " + joined) + ")";
  } else {
    reset->refused = "nvidia-smi lists a compute process on it (pid " + joined + ")";
  }
  return Status::Ok();
}

}  // namespace

Status ParseGpuResetOutput(const std::string& out, GpuResetReply* reply) {
  *reply = GpuResetReply();
  return ParseHostRecords(out, "GPU reset", [&](RecordReader& reader) {
    std::string ignored;
    Status status = TakeUnitRecord(reader, "guard", &reply->guard_exit, &ignored);
    if (status.ok()) status = TakeUnitRecord(reader, "stop", &reply->stop_exit, &reply->stop_text);
    if (status.ok()) status = TakeStates(reader, "stopped", &reply->after_stop);
    while (status.ok() && (reader.PeekWord() == "reset" || reader.PeekWord() == "busy")) {
      GpuReset reset;
      status = TakeReset(reader, &reset);
      if (status.ok()) reply->resets.push_back(reset);
    }
    if (status.ok()) {
      status = TakeUnitRecord(reader, "start", &reply->start_exit, &reply->start_text);
    }
    if (status.ok()) status = TakeStates(reader, "active", &reply->active);
    if (status.ok()) status = TakeAuditRecord(reader, &reply->audit);
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
