// The parsers of remote_script_output.h but the scan's (scan_output.cc):
// each accepts exactly its script's record grammar (remote_script.h)
// through a RecordReader.
#include "fleetreap/remote/remote_script_output.h"

#include <algorithm>
#include <set>

#include "fleetreap/base/text.h"
#include "scan_records.h"

namespace fleetreap {
namespace {

// "reset N RC:TEXT" and "pgpu N RC:TEXT".
Status TakeIndexed(RecordReader& reader, const std::string& word, const char* shape, int* index,
                   int* exit_code, std::string* text) {
  const HostRecord* r = nullptr;
  Status status = reader.Take(word, 3, true, shape, &r);
  if (!status.ok()) return status;
  std::vector<std::string> words = r->Words();
  if (!ParseTagInt(words[1], index) || !ParseTagExit(words[2], exit_code) || *exit_code < 0) {
    return reader.Error("bad " + QuoteForMessage(r->tag, 40));
  }
  *text = r->payload;
  return Status::Ok();
}

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
  return Status::Ok();
}

// "stop I RC" for each unit, in order.
Status TakeStopRecords(RecordReader& reader, const std::vector<std::string>& units,
                       std::vector<UnitStop>* stops) {
  for (size_t i = 0; i < units.size(); ++i) {
    const HostRecord* r = nullptr;
    Status status = reader.Take("stop", 3, false, "stop I RC", &r);
    if (!status.ok()) return status;
    int index = 0, code = 0;
    if (!ParseTagInt(r->Words()[1], &index) || index != static_cast<int>(i) ||
        !ParseTagExit(r->Words()[2], &code) || code < 0) {
      return reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    stops->push_back({units[i], code});
  }
  return Status::Ok();
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

}  // namespace

Status ParsePerGpuQueryOutput(const std::string& out, std::vector<PerGpuQuery>* queries) {
  queries->clear();
  return ParseHostRecords(out, "per-GPU query", [&](RecordReader& reader) {
    while (reader.PeekWord() == "pgpu") {
      PerGpuQuery q;
      Status status = TakeIndexed(reader, "pgpu", "pgpu N RC:TEXT", &q.index, &q.exit_code, &q.out);
      if (!status.ok()) return status;
      queries->push_back(q);
    }
    return reader.TakeEnd();
  });
}

Status ParseStopUnitsOutput(const std::string& out, const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops) {
  stops->clear();
  return ParseHostRecords(out, "stop units", [&](RecordReader& reader) {
    Status status = TakeStopRecords(reader, units, stops);
    return status.ok() ? reader.TakeEnd() : status;
  });
}

Status ParseStopAndSignalOutput(const std::string& out, const std::vector<std::string>& units,
                                std::vector<UnitStop>* stops, SignalReply* signal) {
  stops->clear();
  *signal = SignalReply();
  return ParseHostRecords(out, "stop units and signal", [&](RecordReader& reader) {
    Status status = TakeStopRecords(reader, units, stops);
    return status.ok() ? TakeSignalRecords(reader, signal) : status;
  });
}

Status ParseSignalOutput(const std::string& out, SignalReply* result) {
  *result = SignalReply();
  return ParseHostRecords(out, "signal",
                          [&](RecordReader& reader) { return TakeSignalRecords(reader, result); });
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

Status ParseRescanShmVerifyOutput(const std::string& out, ScanOutput* rescan, ShmOutput* shm,
                                  ScanOutput* verify) {
  *rescan = ScanOutput();
  *shm = ShmOutput();
  *verify = ScanOutput();
  return ParseHostRecords(out, "rescan, shm and verify", [&](RecordReader& reader) {
    Status status = ParseScanRecords(reader, rescan);
    if (status.ok()) status = TakeShmRecords(reader, shm);
    return status.ok() ? ParseScanRecords(reader, verify) : status;
  });
}

Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets) {
  resets->clear();
  return ParseHostRecords(out, "GPU reset", [&](RecordReader& reader) {
    while (reader.PeekWord() == "reset") {
      GpuReset reset;
      std::string text;
      Status status =
          TakeIndexed(reader, "reset", "reset N RC:TEXT", &reset.gpu, &reset.exit_code, &text);
      if (!status.ok()) return status;
      for (const std::string& line : SplitLines(text)) {
        std::string trimmed = Trim(line);
        if (trimmed.empty()) continue;
        reset.message += (reset.message.empty() ? "" : "; ") + trimmed;
      }
      resets->push_back(reset);
    }
    return reader.TakeEnd();
  });
}

}  // namespace fleetreap
