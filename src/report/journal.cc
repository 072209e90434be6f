#include "fleetreap/report/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fleetreap/base/text.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_reader.h"

namespace fleetreap {
namespace {

using Json = nlohmann::json;

constexpr char kMagic[] = "{\"fleetreap_journal\":";

Status WriteError(const std::string& path, int error) {
  return Status::Error(ErrorKind::kInternal, "cannot write " + path + ": " + std::strerror(error));
}

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status LineError(const std::string& source, size_t line, const std::string& problem) {
  return Status::Error(ErrorKind::kInvalidInput,
                       source + ":" + std::to_string(line) + ": " + problem);
}

}  // namespace

Journal::Journal(std::string path, int fd, bool dry_run)
    : path_(std::move(path)), fd_(fd), dry_run_(dry_run) {
  struct stat st {};
  sync_ = fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

namespace {

// "-": a descriptor of its own for stdout. A path: a new 0600 file made
// next to it (mkostemp: created exclusively, never through a symlink) and
// renamed over it at once, then appended to; whatever was at the path (a
// symlink, a hard link to another file) is replaced, never written. -1 with
// errno set on failure.
int OpenJournalFile(const std::string& path) {
  if (path == "-") return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string temp =
      dir + "." + (slash == std::string::npos ? path : path.substr(slash + 1)) + ".XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  if (fchmod(fd, 0600) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    close(fd);
    unlink(temp.c_str());
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

Status Journal::Open(const std::string& path, const RunReport& run,
                     const std::vector<std::string>& selected, std::unique_ptr<Journal>* out) {
  int fd = OpenJournalFile(path);
  if (fd < 0) return WriteError(path == "-" ? "stdout" : path, errno);
  RunReport header = run;
  header.hosts.clear();
  header.not_started.clear();
  header.no_report.clear();
  out->reset(new Journal(path, fd, run.dry_run));
  return (*out)->Append(kMagic + std::string("1,\"run\":") + RenderJsonLine(header) +
                        ",\"selected\":" + Dump(Json(selected)) + "}");
}

long long Journal::ElapsedMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start_)
      .count();
}

Status Journal::Append(const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return WriteError(path_, n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  if (sync_ && fsync(fd_) != 0) return WriteError(path_, errno);
  return Status::Ok();
}

Status Journal::Started(const std::string& name) {
  return Append("{\"event\":\"started\",\"host\":" + Dump(Json(name)) +
                ",\"t_ms\":" + std::to_string(ElapsedMs()) + "}");
}

Status Journal::Finished(const HostReport& host) {
  return Append("{\"event\":\"finished\",\"t_ms\":" + std::to_string(ElapsedMs()) +
                ",\"host\":" + RenderHostJsonLine(host, dry_run_) + "}");
}

Status Journal::Ended(bool interrupted, const std::string& stopped) {
  return Append("{\"event\":\"ended\",\"t_ms\":" + std::to_string(ElapsedMs()) +
                ",\"interrupted\":" + (interrupted ? "true" : "false") +
                (stopped.empty() ? "" : ",\"stopped\":" + Dump(Json(stopped))) + "}");
}

bool LooksLikeJournal(const std::string& text) { return text.rfind(kMagic, 0) == 0; }

Status ReadJournal(const std::string& text, const std::string& source, RunReport* report) {
  std::vector<std::string> lines = SplitLines(text);
  // A last line without its '\n' was cut off by a kill mid-write.
  if (!text.empty() && text.back() != '\n' && !lines.empty()) lines.pop_back();
  if (lines.empty() || !LooksLikeJournal(lines[0])) {
    return LineError(source, 1, "not a fleetreap journal");
  }
  std::vector<std::string> selected;
  std::set<std::string> started;
  std::map<std::string, HostReport> finished;
  bool ended = false;
  long long last_ms = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t number = i + 1;
    const std::string where = source + ":" + std::to_string(number);
    Json line;
    try {
      line = Json::parse(lines[i]);
    } catch (const Json::exception& e) {
      return LineError(source, number, "not JSON (" + std::string(e.what()) + ")");
    }
    if (!line.is_object()) return LineError(source, number, "expected an object");
    if (i == 0) {
      auto run = line.find("run");
      auto names = line.find("selected");
      if (run == line.end() || names == line.end() || !names->is_array()) {
        return LineError(source, number, "not a fleetreap journal");
      }
      Status status = ReadReportJson(Dump(*run), where + ": run", report);
      if (!status.ok()) return status;
      for (const Json& name : *names) {
        if (!name.is_string()) return LineError(source, number, "selected: expected strings");
        selected.push_back(name.get<std::string>());
      }
      report->hosts.clear();
      report->not_started.clear();
      report->no_report.clear();
      continue;
    }
    auto t = line.find("t_ms");
    if (t != line.end() && t->is_number_integer()) last_ms = std::max(last_ms, t->get<long long>());
    auto kind = line.find("event");
    const std::string event =
        kind != line.end() && kind->is_string() ? kind->get<std::string>() : "";
    if (event == "started") {
      auto host = line.find("host");
      if (host == line.end() || !host->is_string()) {
        return LineError(source, number, "host: expected a string");
      }
      started.insert(host->get<std::string>());
    } else if (event == "finished") {
      auto host = line.find("host");
      if (host == line.end()) return LineError(source, number, "missing \"host\"");
      HostReport result;
      Status status = ReadHostJson(Dump(*host), where, &result);
      if (!status.ok()) return status;
      if (std::find(selected.begin(), selected.end(), result.name) == selected.end()) {
        return LineError(source, number,
                         "host " + result.name + " is not among the selected hosts");
      }
      finished[result.name] = std::move(result);
    } else if (event == "ended") {
      ended = true;
      auto interrupted = line.find("interrupted");
      report->interrupted =
          interrupted != line.end() && interrupted->is_boolean() && interrupted->get<bool>();
      auto stopped = line.find("stopped");
      if (stopped != line.end() && stopped->is_string()) {
        report->stopped = stopped->get<std::string>();
      }
    }
  }
  for (const std::string& name : selected) {
    auto done = finished.find(name);
    if (done != finished.end()) {
      report->hosts.push_back(std::move(done->second));
    } else if (started.count(name) > 0) {
      report->no_report.push_back({name, kInFlightWhenJournalEnded});
    } else {
      report->not_started.push_back(name);
    }
  }
  if (!ended) report->interrupted = true;
  report->duration = std::chrono::milliseconds(last_ms);
  return Status::Ok();
}

}  // namespace fleetreap
