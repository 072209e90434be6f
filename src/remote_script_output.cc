// The parsers of remote_script_output.h: what the scripts print, as data.
#include "fleetreap/remote_script_output.h"

#include <climits>
#include <cstdint>

#include <sstream>
#include <utility>

namespace fleetreap {

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool ParseInt(const std::string& text, int* out) {
  if (text.empty() || text.size() > 11) return false;
  size_t start = text[0] == '-' ? 1 : 0;
  if (start == text.size()) return false;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  long long value = std::stoll(text);  // at most 11 characters: no overflow
  if (value < INT_MIN || value > INT_MAX) return false;
  *out = static_cast<int>(value);
  return true;
}

bool ParseTicks(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::stoull(text);
  return true;
}

// Splits "verb rest" at the first space.
void Split(const std::string& line, std::string* verb, std::string* rest) {
  size_t space = line.find(' ');
  *verb = line.substr(0, space);
  *rest = space == std::string::npos ? "" : line.substr(space + 1);
}

Status Bad(const std::string& what, const std::string& line) {
  return Status::Error(ErrorKind::kParse, what + ": unexpected line \"" +
                                              line.substr(0, 80) + "\"");
}

Status Truncated(const std::string& what) {
  return Status::Error(ErrorKind::kParse,
                       what + ": output is truncated (no @@end line)");
}

std::string TrimSection(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  if (!text.empty()) text += '\n';
  return text;
}

}  // namespace

Status ParseScanOutput(const std::string& out, ScanOutput* scan) {
  ScanOutput parsed;
  std::string section;
  bool ended = false;
  bool saw_session = false;
  bool saw_rc = false;
  for (const std::string& line : Lines(out)) {
    if (ended) break;
    if (line.rfind("@@", 0) == 0) {
      if (line.rfind("@@nvsmi-rc ", 0) == 0) {
        if (!ParseInt(line.substr(11), &parsed.nvidia_smi_exit)) {
          return Bad("scan", line);
        }
        saw_rc = true;
        section = "";
        continue;
      }
      section = line.substr(2);
      if (section == "end") ended = true;
      continue;
    }
    if (section == "session") {
      std::istringstream in(line);
      std::string word;
      bool first = true;
      while (in >> word) {
        int pid = 0;
        if (!ParseInt(word, &pid)) return Bad("scan", line);
        if (first) {
          parsed.shell_pid = pid;
          saw_session = true;
        } else {
          parsed.ancestors.push_back(pid);
        }
        first = false;
      }
    } else if (section == "units") {
      if (!line.empty()) parsed.active_units.push_back(line);
    } else if (section == "nvsmi-err") {
      parsed.nvidia_smi_err += line + "\n";
    } else if (section == "nvsmi-out") {
      parsed.nvidia_smi_out += line + "\n";
    } else if (section == "holders") {
      parsed.holder_scan += line + "\n";
    } else if (section == "children") {
      // "PARENT PID START COMM", COMM last since it may hold spaces.
      ChildProcess child;
      std::string parent, rest, pid, start;
      Split(line, &parent, &rest);
      Split(rest, &pid, &rest);
      Split(rest, &start, &child.comm);
      if (!ParseInt(parent, &child.parent) || !ParseInt(pid, &child.pid) ||
          !ParseTicks(start, &child.start_time) || child.comm.empty() || child.pid < 0) {
        return Bad("scan", line);
      }
      (child.pid == 0 ? parsed.parents : parsed.children).push_back(child);
    }
  }
  if (!ended) return Truncated("scan");
  if (!saw_session || !saw_rc) {
    return Status::Error(ErrorKind::kParse, "scan: a section is missing");
  }
  parsed.nvidia_smi_err = TrimSection(parsed.nvidia_smi_err);
  parsed.nvidia_smi_out = TrimSection(parsed.nvidia_smi_out);
  *scan = std::move(parsed);
  return Status::Ok();
}

Status ParsePerGpuQueryOutput(const std::string& out,
                              std::vector<PerGpuQuery>* queries) {
  std::vector<PerGpuQuery> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *queries = std::move(parsed);
      return Status::Ok();
    }
    if (line.rfind("@@gpu ", 0) == 0) {
      std::string index, code;
      Split(line.substr(6), &index, &code);
      PerGpuQuery query;
      if (!ParseInt(index, &query.index) || !ParseInt(code, &query.exit_code)) {
        return Bad("per-GPU query", line);
      }
      parsed.push_back(query);
      continue;
    }
    if (parsed.empty()) return Bad("per-GPU query", line);
    parsed.back().out += line + "\n";
  }
  return Truncated("per-GPU query");
}

Status ParseStopUnitsOutput(const std::string& out,
                            const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops) {
  std::vector<UnitStop> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *stops = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, rest, code, index_text;
    Split(line, &verb, &rest);
    Split(rest, &code, &index_text);
    UnitStop stop;
    int index = -1;
    if (verb != "stop" || !ParseInt(code, &stop.exit_code) ||
        !ParseInt(index_text, &index) || index < 0 ||
        index >= static_cast<int>(units.size())) {
      return Bad("stop units", line);
    }
    stop.unit = units[index];
    parsed.push_back(stop);
  }
  return Truncated("stop units");
}

Status ParseSignalOutput(const std::string& out, SignalOutput* result) {
  SignalOutput parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *result = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, rest, pid_text, state;
    Split(line, &verb, &rest);
    if (verb == "now") {
      if (!ParseTicks(rest, &parsed.now)) return Bad("signal", line);
      continue;
    }
    Split(rest, &pid_text, &state);
    int pid = 0;
    if (!ParseInt(pid_text, &pid)) return Bad("signal", line);
    if (verb == "sent") {
      parsed.sent.push_back(pid);
    } else if (verb == "gone") {
      parsed.gone.push_back(pid);
    } else if (verb == "failed") {
      parsed.failed.push_back(pid);
    } else if (verb == "left" && state.size() == 1) {
      parsed.left.emplace_back(pid, state[0]);
    } else {
      return Bad("signal", line);
    }
  }
  return Truncated("signal");
}

Status ParseShmOutput(const std::string& out, ShmOutput* result) {
  ShmOutput parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *result = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, name;
    Split(line, &verb, &name);
    if (name.empty()) return Bad("shm", line);
    if (verb == "removed" || verb == "would") {
      parsed.removed.push_back(name);
    } else if (verb == "inuse") {
      parsed.in_use.push_back(name);
    } else if (verb == "failed") {
      parsed.failed.push_back(name);
    } else {
      return Bad("shm", line);
    }
  }
  return Truncated("shm");
}

Status ParseGpuResetOutput(const std::string& out,
                           std::vector<GpuReset>* resets) {
  std::vector<GpuReset> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *resets = std::move(parsed);
      return Status::Ok();
    }
    if (line.rfind("| ", 0) == 0 || line == "|") {
      if (parsed.empty()) return Bad("gpu reset", line);
      std::string text = line.size() > 2 ? line.substr(2) : "";
      if (text.empty()) continue;
      std::string& message = parsed.back().message;
      if (!message.empty()) message += "; ";
      message += text;
      continue;
    }
    std::string verb, rest, gpu, code;
    Split(line, &verb, &rest);
    Split(rest, &gpu, &code);
    GpuReset reset;
    if (verb != "reset" || !ParseInt(gpu, &reset.gpu) ||
        !ParseInt(code, &reset.exit_code)) {
      return Bad("gpu reset", line);
    }
    parsed.push_back(reset);
  }
  return Truncated("gpu reset");
}

}  // namespace fleetreap
