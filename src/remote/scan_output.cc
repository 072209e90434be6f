// ParseScanOutput (scan_output.h): the scan's record grammar, which
// the fused steps' parsers (shm_clean.cc, batch.cc) reuse through
// scan_records.h.
#include "fleetreap/remote/scan_output.h"

#include <set>
#include <utility>

#include "fleetreap/base/text.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/systemctl_show.h"
#include "scan_records.h"
#include "shm_holders.h"

namespace fleetreap {
namespace {

// "WORD RC:TEXT" or "WORD -".
Status TakeCommand(RecordReader& reader, const std::string& word, const char* shape, int* exit_code,
                   std::string* text) {
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
  if (reader.PeekWord() != "clock") return Status::Ok();
  status = reader.Take("clock", 2, false, "clock TICKS", &r);
  if (status.ok() && !ParseTagU64(r->Words()[1], &scan->clock)) {
    status = reader.Error("bad " + QuoteForMessage(r->tag, 40));
  }
  return status;
}

// "owners:UNIT...": the names the script took from the holders' cgroups,
// each checked there (A-Za-z0-9:_.@-, ending in .service) and here again.
Status ReadOwners(RecordReader& reader, const std::string& text, std::vector<std::string>* units) {
  static const std::string kSuffix = ".service";
  size_t at = 0;
  while (at < text.size()) {
    size_t space = text.find(' ', at);
    if (space == std::string::npos) space = text.size();
    const std::string unit = text.substr(at, space - at);
    at = space + 1;
    if (unit.empty()) continue;
    const bool ok = unit.size() > kSuffix.size() && IsPlainUnitName(unit) &&
                    unit.compare(unit.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
    if (!ok) return reader.Error("bad owner unit " + QuoteForMessage(unit, 60));
    units->push_back(unit);
  }
  return Status::Ok();
}

// The holder part: "majors", then "fd" and "fdp" records, the mappings'
// "mmp" and "mm" records, "ctl COUNT" (control-only holders left out),
// "blind" (a walk that could not run), "minor" records; the "kids" records
// are read by ParseKids.
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
  // The mappings: "mmp PID:PATH" (by path), then "mm PID MAJOR MINOR".
  while (reader.PeekWord() == "mmp" || reader.PeekWord() == "mm") {
    bool by_path = reader.PeekWord() == "mmp";
    status = by_path ? reader.Take("mmp", 2, true, "mmp PID:PATH", &r)
                     : reader.Take("mm", 4, false, "mm PID MAJOR MINOR", &r);
    if (!status.ok()) return status;
    words = r->Words();
    DeviceFd map;
    map.fd = -1;
    map.mapped = true;
    bool ok = ParseTagInt(words[1], &map.pid) && map.pid > 0;
    if (!by_path) ok = ok && ParseTagInt(words[2], &map.major) && ParseTagInt(words[3], &map.minor);
    if (by_path) map.path = r->payload;
    if (!ok || (by_path && map.path.empty())) {
      return reader.Error("bad mapping record " + QuoteForMessage(r->tag, 60));
    }
    scan->fds.push_back(map);
  }
  if (reader.PeekWord() == "ctl") {
    status = reader.Take("ctl", 2, false, "ctl COUNT", &r);
    if (!status.ok()) return status;
    int count = 0;
    if (!ParseTagInt(r->Words()[1], &count) || count <= 0) {
      return reader.Error("bad ctl " + QuoteForMessage(r->tag, 40));
    }
    scan->control_only_left_out = count;
  }
  if (reader.PeekWord() == "blind") {
    status = reader.Take("blind", 1, false, "blind", &r);
    if (!status.ok()) return status;
    scan->holder_walk_failed = true;
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

// "kids PARENT CHILD..." per watched parent; "kids PARENT -" when the
// kernel lists no children (no /proc/PID/task/*/children files).
Status ParseKids(RecordReader& reader, ScanOutput* scan,
                 std::vector<std::pair<int, std::vector<int>>>* kids) {
  const HostRecord* r = nullptr;
  while (reader.PeekWord() == "kids") {
    Status status = reader.Take("kids", -1, false, "kids PARENT CHILD...", &r);
    if (!status.ok()) return status;
    std::vector<std::string> words = r->Words();
    const bool unlisted = words.size() == 3 && words[2] == "-";
    if (unlisted) words.pop_back();
    bool ok = false;
    std::vector<int> pids = Pids(words, 1, &ok);
    if (!ok || pids.empty()) return reader.Error("bad kids " + QuoteForMessage(r->tag, 60));
    if (unlisted) scan->children_unlisted.push_back(pids[0]);
    kids->push_back({pids[0], std::vector<int>(pids.begin() + 1, pids.end())});
  }
  return Status::Ok();
}

// The words after the details: at their place after the kids, and where
// the walk's perl gave them, after the queries' records.
const std::set<std::string> kAfterDetails = {"end", "pidns", "pidf", "pidmark", "selfcg", "shmh"};
const std::set<std::string> kAfterEarlyDetails = {"end", "table", "drv", "majors", "show"};

// "/proc/PID/stat:..." and friends, "/etc/passwd:...", "exe PID:TARGET",
// up to a word of "after".
Status ParseDetails(RecordReader& reader, ScanOutput* scan,
                    const std::set<std::string>& after = kAfterDetails) {
  const HostRecord* r = nullptr;
  for (std::string word = reader.PeekWord(); !after.count(word) && !reader.AtEnd();
       word = reader.PeekWord()) {
    if (word == "exs") {
      Status status = reader.Take("exs", 4, false, "exs /proc/PID UID MODE", &r);
      if (!status.ok()) return status;
      std::vector<std::string> words = r->Words();
      int pid = 0, uid = 0;
      unsigned mode = 0;
      bool ok = words[1].rfind("/proc/", 0) == 0 && ParseTagInt(words[1].substr(6), &pid) &&
                ParseTagInt(words[2], &uid) && words[3].size() <= 6 && !words[3].empty() &&
                words[3].find_first_not_of("01234567") == std::string::npos;
      if (!ok) return reader.Error("bad exs record " + QuoteForMessage(r->tag, 40));
      for (char c : words[3]) mode = mode * 8 + static_cast<unsigned>(c - '0');
      scan->processes[pid].exe_uid = uid;
      scan->processes[pid].exe_mode = static_cast<int>(mode);
      continue;
    }
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
    } else if (file == "cgroup") {
      text.cgroup += r->payload;
    } else if (file == "environ" && (r->payload == "LD_PRELOAD=" || r->payload == "LD_AUDIT=")) {
      text.preloaded = true;
    } else {
      return reader.Error("unexpected " + QuoteForMessage(word, 40));
    }
  }
  return Status::Ok();
}

// After the details: "pidns:LINK", "pidf N:PID"..., "pidmark:TEXT",
// "selfcg:TEXT", then "owners:UNIT..." (the units the show was asked for
// because holders run in them).
Status ParseHostFacts(RecordReader& reader, ScanOutput* scan) {
  const HostRecord* r = nullptr;
  Status status;
  if (reader.PeekWord() == "pidns") {
    status = reader.Take("pidns", 1, true, "pidns:LINK", &r);
    if (!status.ok()) return status;
    scan->pid_namespace = r->payload;
  }
  while (reader.PeekWord() == "pidf") {
    status = reader.Take("pidf", 2, true, "pidf N:TEXT", &r);
    if (!status.ok()) return status;
    int index = 0;
    if (!ParseTagInt(r->Words()[1], &index) || scan->pid_files.count(index)) {
      return reader.Error("bad pidf record " + QuoteForMessage(r->tag, 40));
    }
    scan->pid_files[index] = r->payload;
  }
  if (reader.PeekWord() == "pidmark") {
    status = reader.Take("pidmark", 1, true, "pidmark:TEXT", &r);
    if (!status.ok()) return status;
    scan->has_pid_marker = true;
    scan->pid_marker = r->payload;
  }
  status = reader.Take("selfcg", 1, true, "selfcg:TEXT", &r);
  if (!status.ok()) return status;
  scan->self_cgroup = r->payload;
  status = reader.Take("owners", 1, true, "owners:UNIT...", &r);
  if (!status.ok()) return status;
  return ReadOwners(reader, r->payload, &scan->owner_units);
}

// A PCI bus id as the driver's folder names it ("0000:3b:00.0").
bool IsBusIdName(const std::string& name) {
  if (name.empty() || name.size() > 16) return false;
  return name.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
}

// "drv: BUS_ID...": the names under the driver's GPU folder.
Status ParseDriverGpus(RecordReader& reader, ScanOutput* scan) {
  const HostRecord* r = nullptr;
  Status status = reader.Take("drv", 1, true, "drv:BUS_ID...", &r);
  if (!status.ok()) return status;
  size_t at = 0;
  while (at < r->payload.size()) {
    size_t space = r->payload.find(' ', at);
    if (space == std::string::npos) space = r->payload.size();
    const std::string word = r->payload.substr(at, space - at);
    at = space + 1;
    if (word.empty()) continue;
    if (!IsBusIdName(word)) return reader.Error("bad driver GPU " + QuoteForMessage(word, 40));
    scan->driver_gpus.push_back(word);
  }
  return Status::Ok();
}

// The readiness part: "drv:BUS_ID...", "fabric N FM", "kmsg R:TEXT" or
// "kmsg -".
Status ParseReadiness(RecordReader& reader, ScanOutput* scan) {
  Status status = ParseDriverGpus(reader, scan);
  if (!status.ok()) return status;
  const HostRecord* r = nullptr;
  status = reader.Take("fabric", 3, false, "fabric NVSWITCHES FM", &r);
  if (!status.ok()) return status;
  std::vector<std::string> words = r->Words();
  bool ok = ParseTagInt(words[1], &scan->nvswitches) && scan->nvswitches >= 0;
  if (words[2] == "-") {
    ok = ok && scan->nvswitches == 0;
  } else {
    ok = ok && ParseTagInt(words[2], &scan->fabric_manager) && scan->fabric_manager >= 0 &&
         scan->fabric_manager <= 1 && scan->nvswitches > 0;
  }
  if (!ok) return reader.Error("bad fabric record " + QuoteForMessage(r->tag, 40));
  status = TakeCommand(reader, "kmsg", "kmsg R:TEXT", &scan->kmsg_exit, &scan->kmsg_out);
  if (!status.ok()) return status;
  if (scan->kmsg_exit > 1) return reader.Error("bad kmsg record");
  scan->readiness = true;
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

}  // namespace

Status ParseScanRecords(RecordReader& reader, ScanOutput* scan) {
  Status status = reader.TakeHeader("scan");
  if (status.ok()) status = ParseSession(reader, scan);
  if (status.ok()) {
    status =
        TakeCommand(reader, "gpu", "gpu RC:TEXT", &scan->nvidia_smi_exit, &scan->nvidia_smi_out);
  }
  if (status.ok())
    status = TakeCommand(reader, "apps", "apps RC:TEXT", &scan->apps_exit, &scan->apps_out);
  if (status.ok()) status = ParseDetails(reader, scan, kAfterEarlyDetails);
  if (status.ok()) {
    status = TakeCommand(reader, "table", "table RC:TEXT", &scan->table_exit, &scan->table_out);
  }
  if (status.ok() && reader.PeekWord() == "drv") status = ParseReadiness(reader, scan);
  if (!status.ok()) return status;
  std::vector<std::pair<int, std::vector<int>>> kids;
  if (reader.PeekWord() == "majors") {
    scan->holders = true;
    status = ParseHolderPart(reader, scan);
    if (!status.ok()) return status;
    status = ParseKids(reader, scan, &kids);
    if (status.ok()) status = ParseDetails(reader, scan);
    if (status.ok()) status = TakeShmHolderRecords(reader, scan);
    if (status.ok()) status = ParseHostFacts(reader, scan);
    if (!status.ok()) return status;
  }
  // "show RC:TEXT", "show -" (nothing to ask) or "show 127:" (no systemctl).
  status = TakeCommand(reader, "show", "show RC:TEXT", &scan->show_exit, &scan->show_out);
  if (status.ok()) status = reader.TakeEnd();
  if (!status.ok()) return status;
  return FoldKids(kids, scan);
}

Status ParseScanOutput(const std::string& out, ScanOutput* scan) {
  *scan = ScanOutput();
  return ParseHostRecords(out, "scan",
                          [&](RecordReader& reader) { return ParseScanRecords(reader, scan); });
}

}  // namespace fleetreap
