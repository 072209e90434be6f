// The parsers of remote_script_output.h: each accepts exactly its script's
// record grammar (remote_script.h) through a RecordReader.
#include "fleetreap/remote_script_output.h"

#include <set>

#include "fleetreap/proc_scan.h"
#include "fleetreap/report.h"
#include "fleetreap/text.h"

namespace fleetreap {
namespace {

// Splits "records" of "out" for "step"; the reader then walks them.
struct Parsed {
  std::vector<HostRecord> records;
  Status status;
  Parsed(const std::string& out, const std::string& step)
      : status(SplitHostRecords(out, step, &records)) {}
};

Status TakeHeader(RecordReader& reader, const std::string& word) {
  const HostRecord* r = nullptr;
  std::string shape = word + " 1";
  Status status = reader.Take(word, 2, false, shape.c_str(), &r);
  if (!status.ok()) return status;
  if (r->Words()[1] != "1") return reader.Error("unknown " + word + " version " + r->Words()[1]);
  return Status::Ok();
}

// "WORD RC:TEXT" or "WORD -".
Status TakeCommand(RecordReader& reader, const std::string& word, const char* shape,
                   int* exit_code, std::string* text) {
  const HostRecord* r = nullptr;
  Status status = reader.Take(word, 2, true, shape, &r);
  if (!status.ok()) {
    Status not_run = reader.Take(word, 2, false, shape, &r);
    if (!not_run.ok()) return status;
    if (r->Words()[1] != "-") return reader.Error(std::string("expected \"") + shape + "\"");
    *exit_code = -1;
    text->clear();
    return Status::Ok();
  }
  if (!ParseTagExit(r->Words()[1], exit_code) || *exit_code < 0) {
    return reader.Error("bad exit status " + QuoteForMessage(r->Words()[1], 20));
  }
  *text = r->payload;
  return Status::Ok();
}

std::vector<int> Pids(const std::vector<std::string>& words, size_t from, bool* ok) {
  std::vector<int> pids;
  *ok = true;
  for (size_t i = from; i < words.size(); ++i) {
    int pid = 0;
    if (!ParseTagInt(words[i], &pid) || pid <= 0) *ok = false;
    pids.push_back(pid);
  }
  return pids;
}

Status ParseSession(RecordReader& reader, ScanOutput* scan) {
  const HostRecord* r = nullptr;
  Status status = reader.Take("session", -1, false, "session PID ANCESTOR...", &r);
  if (!status.ok()) return status;
  bool ok = false;
  std::vector<int> pids = Pids(r->Words(), 1, &ok);
  if (!ok || pids.empty()) return reader.Error("bad session " + QuoteForMessage(r->tag, 60));
  scan->shell_pid = pids[0];
  scan->ancestors.assign(pids.begin() + 1, pids.end());
  return Status::Ok();
}

void ReadUnits(const std::string& text, std::vector<std::string>* units) {
  for (const std::string& line : SplitLines(text)) {
    std::string trimmed = Trim(line);
    std::string unit = trimmed.substr(0, trimmed.find_first_of(" \t"));
    if (!unit.empty()) units->push_back(unit);
  }
}

// The fd pass: "majors", then "fd" and "fdp" records, "minor" records, and
// "kids" records.
Status ParseHolderPart(RecordReader& reader, ScanOutput* scan) {
  const HostRecord* r = nullptr;
  Status status = reader.Take("majors", -1, false, "majors (N NAME)...", &r);
  if (!status.ok()) return status;
  std::vector<std::string> words = r->Words();
  if (words.size() % 2 != 1) return reader.Error("bad majors " + QuoteForMessage(r->tag, 80));
  for (size_t i = 1; i + 1 < words.size(); i += 2) {
    int major = 0;
    if (!ParseTagInt(words[i], &major)) return reader.Error("bad major " + words[i]);
    scan->majors[major] = words[i + 1];
  }
  while (reader.PeekWord() == "fd" || reader.PeekWord() == "fdp") {
    bool by_path = reader.PeekWord() == "fdp";
    status = by_path ? reader.Take("fdp", 3, true, "fdp PID FD:PATH", &r)
                     : reader.Take("fd", 5, false, "fd PID FD MAJOR MINOR", &r);
    if (!status.ok()) return status;
    words = r->Words();
    DeviceFd fd;
    bool ok = ParseTagInt(words[1], &fd.pid) && fd.pid > 0 && ParseTagInt(words[2], &fd.fd);
    if (!by_path) ok = ok && ParseTagInt(words[3], &fd.major) && ParseTagInt(words[4], &fd.minor);
    if (by_path) fd.path = r->payload;
    if (!ok) return reader.Error("bad fd record " + QuoteForMessage(r->tag, 60));
    scan->fds.push_back(fd);
  }
  while (reader.PeekWord() == "minor") {
    status = reader.Take("minor", 2, true, "minor N:BUS_ID", &r);
    if (!status.ok()) return status;
    int minor = 0;
    if (!ParseTagInt(r->Words()[1], &minor) || r->payload.empty()) {
      return reader.Error("bad minor " + QuoteForMessage(r->tag, 40));
    }
    scan->minors[r->payload] = minor;
  }
  return Status::Ok();
}

// "/proc/PID/stat:..." and friends, "/etc/passwd:...", "exe PID:TARGET".
Status ParseDetails(RecordReader& reader, ScanOutput* scan) {
  const HostRecord* r = nullptr;
  for (std::string word = reader.PeekWord(); word != "end" && !reader.AtEnd();
       word = reader.PeekWord()) {
    if (word == "exe") {
      Status status = reader.Take("exe", 2, true, "exe /proc/PID:TARGET", &r);
      if (!status.ok()) return status;
      const std::string path = r->Words()[1];
      int pid = 0;
      if (path.rfind("/proc/", 0) != 0 || !ParseTagInt(path.substr(6), &pid)) {
        return reader.Error("bad exe record " + QuoteForMessage(r->tag, 40));
      }
      scan->processes[pid].has_exe = true;
      scan->processes[pid].exe = r->payload;
      continue;
    }
    Status status = reader.Take(word, 1, true, "FILE:TEXT", &r);
    if (!status.ok()) return status;
    if (word == "/etc/passwd") {
      scan->passwd += r->payload;
      continue;
    }
    size_t slash = word.rfind('/');
    int pid = 0;
    if (word.rfind("/proc/", 0) != 0 || slash <= 6 ||
        !ParseTagInt(word.substr(6, slash - 6), &pid)) {
      return reader.Error("unexpected " + QuoteForMessage(word, 40));
    }
    std::string file = word.substr(slash + 1);
    ProcessText& text = scan->processes[pid];
    if (file == "stat" && text.stat.empty()) {
      text.stat = r->payload;
    } else if (file == "status" && text.status.empty()) {
      text.status = r->payload;
    } else if (file == "cmdline") {
      text.argv.push_back(r->payload);
    } else {
      return reader.Error("unexpected " + QuoteForMessage(word, 40));
    }
  }
  return Status::Ok();
}

// The watched parents and their children, described by the details.
Status FoldKids(const std::vector<std::pair<int, std::vector<int>>>& kids, ScanOutput* scan) {
  for (const auto& [parent, children] : kids) {
    Holder p;
    auto found = scan->processes.find(parent);
    if (found == scan->processes.end() || !ParseProcStat(found->second.stat, &p).ok()) continue;
    scan->parents.push_back({parent, 0, 0, p.comm});
    for (int pid : children) {
      Holder c;
      auto child = scan->processes.find(pid);
      if (child == scan->processes.end() || !ParseProcStat(child->second.stat, &c).ok()) continue;
      scan->children.push_back({parent, pid, c.start_time, c.comm});
    }
  }
  return Status::Ok();
}

Status ParseScanRecords(RecordReader& reader, ScanOutput* scan) {
  Status status = TakeHeader(reader, "scan");
  if (status.ok()) status = ParseSession(reader, scan);
  std::string units;
  if (status.ok()) status = TakeCommand(reader, "units", "units RC:TEXT", &scan->units_exit, &units);
  if (!status.ok()) return status;
  ReadUnits(units, &scan->active_units);
  status = TakeCommand(reader, "gpu", "gpu RC:TEXT", &scan->nvidia_smi_exit, &scan->nvidia_smi_out);
  if (status.ok()) status = TakeCommand(reader, "apps", "apps RC:TEXT", &scan->apps_exit, &scan->apps_out);
  if (status.ok()) {
    status = TakeCommand(reader, "table", "table RC:TEXT", &scan->table_exit, &scan->table_out);
  }
  if (!status.ok()) return status;
  std::vector<std::pair<int, std::vector<int>>> kids;
  if (reader.PeekWord() == "majors") {
    scan->holders = true;
    status = ParseHolderPart(reader, scan);
    if (!status.ok()) return status;
    const HostRecord* r = nullptr;
    while (reader.PeekWord() == "kids") {
      status = reader.Take("kids", -1, false, "kids PARENT CHILD...", &r);
      if (!status.ok()) return status;
      bool ok = false;
      std::vector<int> pids = Pids(r->Words(), 1, &ok);
      if (!ok || pids.empty()) return reader.Error("bad kids " + QuoteForMessage(r->tag, 60));
      kids.push_back({pids[0], std::vector<int>(pids.begin() + 1, pids.end())});
    }
    status = ParseDetails(reader, scan);
    if (!status.ok()) return status;
  }
  const HostRecord* r = nullptr;
  status = reader.Take("end", 1, false, "end", &r);
  if (!status.ok()) return status;
  return FoldKids(kids, scan);
}

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

// "shm 1", then "removed|would|inuse|failed:NAME" records.
Status TakeShmRecords(RecordReader& reader, ShmOutput* result) {
  Status status = TakeHeader(reader, "shm");
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
Status TakeSignalRecords(RecordReader& reader, SignalOutput* result) {
  Status status = TakeHeader(reader, "signal");
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
    (word == "sent" ? result->sent : word == "gone" ? result->gone : result->failed).push_back(pid);
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
  return reader.Take("end", 1, false, "end", &r);
}

}  // namespace

Status ParseScanOutput(const std::string& out, ScanOutput* scan) {
  *scan = ScanOutput();
  Parsed parsed(out, "scan");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("scan", parsed.records);
  Status status = ParseScanRecords(reader, scan);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParsePerGpuQueryOutput(const std::string& out, std::vector<PerGpuQuery>* queries) {
  queries->clear();
  Parsed parsed(out, "per-GPU query");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("per-GPU query", parsed.records);
  while (reader.PeekWord() == "pgpu") {
    PerGpuQuery q;
    Status status = TakeIndexed(reader, "pgpu", "pgpu N RC:TEXT", &q.index, &q.exit_code, &q.out);
    if (!status.ok()) return status;
    queries->push_back(q);
  }
  const HostRecord* r = nullptr;
  Status status = reader.Take("end", 1, false, "end", &r);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseStopUnitsOutput(const std::string& out, const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops) {
  stops->clear();
  Parsed parsed(out, "stop units");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("stop units", parsed.records);
  Status status = TakeStopRecords(reader, units, stops);
  const HostRecord* r = nullptr;
  if (status.ok()) status = reader.Take("end", 1, false, "end", &r);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseStopAndSignalOutput(const std::string& out, const std::vector<std::string>& units,
                                std::vector<UnitStop>* stops, SignalOutput* signal) {
  stops->clear();
  *signal = SignalOutput();
  Parsed parsed(out, "stop units and signal");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("stop units and signal", parsed.records);
  Status status = TakeStopRecords(reader, units, stops);
  if (status.ok()) status = TakeSignalRecords(reader, signal);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseSignalOutput(const std::string& out, SignalOutput* result) {
  *result = SignalOutput();
  Parsed parsed(out, "signal");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("signal", parsed.records);
  Status status = TakeSignalRecords(reader, result);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseShmOutput(const std::string& out, ShmOutput* result, ScanOutput* scan) {
  *result = ShmOutput();
  const std::string step = scan ? "shm and verify" : "shm";
  Parsed parsed(out, step);
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader(step, parsed.records);
  Status status = TakeShmRecords(reader, result);
  if (!status.ok()) return status;
  if (scan != nullptr) {
    *scan = ScanOutput();
    status = ParseScanRecords(reader, scan);
  } else {
    const HostRecord* r = nullptr;
    status = reader.Take("end", 1, false, "end", &r);
  }
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseRescanShmVerifyOutput(const std::string& out, ScanOutput* rescan, ShmOutput* shm,
                                  ScanOutput* verify) {
  *rescan = ScanOutput();
  *shm = ShmOutput();
  *verify = ScanOutput();
  Parsed parsed(out, "rescan, shm and verify");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("rescan, shm and verify", parsed.records);
  Status status = ParseScanRecords(reader, rescan);
  if (status.ok()) status = TakeShmRecords(reader, shm);
  if (status.ok()) status = ParseScanRecords(reader, verify);
  return status.ok() ? reader.ExpectEnd() : status;
}

Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets) {
  resets->clear();
  Parsed parsed(out, "GPU reset");
  if (!parsed.status.ok()) return parsed.status;
  RecordReader reader("GPU reset", parsed.records);
  while (reader.PeekWord() == "reset") {
    GpuReset reset;
    std::string text;
    Status status = TakeIndexed(reader, "reset", "reset N RC:TEXT", &reset.gpu, &reset.exit_code,
                                &text);
    if (!status.ok()) return status;
    for (const std::string& line : SplitLines(text)) {
      std::string trimmed = Trim(line);
      if (trimmed.empty()) continue;
      reset.message += (reset.message.empty() ? "" : "; ") + trimmed;
    }
    resets->push_back(reset);
  }
  const HostRecord* r = nullptr;
  Status status = reader.Take("end", 1, false, "end", &r);
  return status.ok() ? reader.ExpectEnd() : status;
}

}  // namespace fleetreap
