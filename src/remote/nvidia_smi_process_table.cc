// ParseProcessTable: the "Processes:" box of plain `nvidia-smi` to
// TableProcesses.
#include <algorithm>
#include <cctype>

#include "fleetreap/remote/nvidia_smi.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {
namespace {

Status TableError(int line, const std::string& what) {
  return Status::Error(ErrorKind::kParse,
                       "nvidia-smi table line " + std::to_string(line) + ": " + what);
}

// The blank-separated words of "text"; "ends" (if given) gets where each
// word ends.
std::vector<std::string> Words(const std::string& text, std::vector<size_t>* ends = nullptr) {
  std::vector<std::string> words;
  size_t at = 0;
  while (true) {
    at = text.find_first_not_of(" \t", at);
    if (at == std::string::npos) break;
    size_t end = std::min(text.find_first_of(" \t", at), text.size());
    words.push_back(text.substr(at, end - at));
    if (ends != nullptr) ends->push_back(end);
    at = end;
  }
  return words;
}

// The text between the box's two '|', or false when the line is no box row.
bool Inside(const std::string& line, std::string* inside) {
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return false;
  *inside = line.substr(1, line.size() - 2);
  return true;
}

// "+-----...-----+": the box's closing rule.
bool IsRule(const std::string& line, char fill) {
  if (line.size() < 3 || line.front() != (fill == '=' ? '|' : '+') || line.back() != line.front()) {
    return false;
  }
  return std::all_of(line.begin() + 1, line.end() - 1, [fill](char c) { return c == fill; });
}

// "N/A" or a count.
bool ReadId(const std::string& text, std::optional<int>* id) {
  id->reset();
  if (text == "N/A") return true;
  int value = 0;
  if (!ParseDigits(text, 9, &value)) return false;
  *id = value;
  return true;
}

// C, G, C+G, and the MPS flavours (M, M+C...): letters from "CGM", each once,
// joined by '+'.
bool IsProcessType(const std::string& type) {
  std::string seen;
  for (size_t i = 0; i < type.size(); i += 2) {
    char c = type[i];
    if (std::string("CGM").find(c) == std::string::npos || seen.find(c) != std::string::npos) {
      return false;
    }
    seen += c;
    if (i + 1 < type.size() && type[i + 1] != '+') return false;
    if (i + 1 == type.size() - 1) return false;  // a trailing '+'
  }
  return !type.empty();
}

// "96844MiB" or "N/A".
bool ReadMemory(const std::string& text, std::optional<int64_t>* mib) {
  mib->reset();
  if (text == "N/A") return true;
  if (text.size() <= 3 || text.compare(text.size() - 3, 3, "MiB") != 0) return false;
  std::string number = text.substr(0, text.size() - 3);
  int64_t value = 0;
  if (!ParseDigits(number, 15, &value)) return false;
  *mib = value;
  return true;
}

bool ReadRow(const std::string& inside, TableProcess* proc) {
  std::vector<size_t> ends;
  std::vector<std::string> words = Words(inside, &ends);
  // GPU GI CI PID Type [name...] Memory
  if (words.size() < 6) return false;
  if (!IsDigits(words[0], 9) || !ReadId(words[1], &proc->gi) || !ReadId(words[2], &proc->ci) ||
      !IsDigits(words[3], 9) || !IsProcessType(words[4]) ||
      !ReadMemory(words.back(), &proc->used_mib)) {
    return false;
  }
  proc->gpu = std::stoi(words[0]);
  proc->pid = std::stoi(words[3]);
  proc->type = words[4];
  // The name as printed, inner blanks kept: after the type, before the memory.
  size_t start = ends[4];
  size_t end = ends.back() - words.back().size();
  proc->process_name = Trim(inside.substr(start, end - start));
  return true;
}

}  // namespace

Status ParseProcessTable(const std::string& out, std::vector<TableProcess>* procs) {
  procs->clear();
  std::vector<nvsmi::Line> lines = nvsmi::NumberedLines(out);
  size_t at = 0;
  std::string inside;
  while (at < lines.size() && !(Inside(lines[at].text, &inside) &&
                                Words(inside) == std::vector<std::string>{"Processes:"})) {
    ++at;
  }
  if (at == lines.size()) {
    std::string message;
    NvidiaSmiFailure failure = ClassifyNvidiaSmiFailure(out, "", 1, &message);
    if (failure != NvidiaSmiFailure::kOther) return nvsmi::FailedRun(failure, message);
    return Status::Error(ErrorKind::kParse, "nvidia-smi table: no \"Processes:\" section");
  }
  const std::vector<std::vector<std::string>> kHeader = {
      {"GPU", "GI", "CI", "PID", "Type", "Process", "name", "GPU", "Memory"},
      {"ID", "ID", "Usage"},
  };
  for (const std::vector<std::string>& expected : kHeader) {
    ++at;
    if (at == lines.size()) return TableError(lines.back().number, "the processes box ends early");
    if (!Inside(lines[at].text, &inside) || Words(inside) != expected) {
      return TableError(lines[at].number,
                        "expected the processes header, got " + QuoteToolLine(lines[at].text));
    }
  }
  ++at;
  if (at == lines.size() || !IsRule(lines[at].text, '=')) {
    int number = at == lines.size() ? lines.back().number : lines[at].number;
    return TableError(number, "expected the \"|====|\" rule under the processes header");
  }
  std::vector<TableProcess> parsed;
  bool none = false;
  for (++at; at < lines.size(); ++at) {
    const nvsmi::Line& line = lines[at];
    if (IsRule(line.text, '-')) break;
    TableProcess proc;
    if (!Inside(line.text, &inside) || none) {
      return TableError(line.number, "expected a process row, got " + QuoteToolLine(line.text));
    }
    if (Trim(inside) == "No running processes found" && parsed.empty()) {
      none = true;
      continue;
    }
    if (!ReadRow(inside, &proc)) {
      return TableError(line.number, "expected a process row, got " + QuoteToolLine(line.text));
    }
    parsed.push_back(std::move(proc));
  }
  if (at == lines.size()) {
    return TableError(lines.back().number, "the processes box is not closed");
  }
  if (at + 1 < lines.size()) {
    return TableError(lines[at + 1].number, "unexpected text after the processes box: " +
                                                QuoteToolLine(lines[at + 1].text));
  }
  *procs = std::move(parsed);
  return Status::Ok();
}

}  // namespace fleetreap
