#include "fleetreap/fuser_output.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "fleetreap/text.h"

namespace fleetreap {
namespace {

constexpr size_t kMaxQuoted = 40;

std::string Quote(const std::string& value) {
  return QuoteForMessage(value, kMaxQuoted);
}
constexpr char kMissingPrefix[] = "Specified filename ";
constexpr char kMissingSuffix[] = " does not exist.";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::stringstream in(text);
  std::string token;
  while (in >> token) tokens.push_back(token);
  return tokens;
}

bool IsAccessLetters(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::string("cefFrmM.").find(c) != std::string::npos;
  });
}

// "1234" or "1234m": a PID and the access letters fuser put after it.
Status ParseToken(const std::string& token, const std::string& file,
                  std::vector<FuserEntry>* entries) {
  size_t digits = 0;
  while (digits < token.size() && std::isdigit(static_cast<unsigned char>(token[digits]))) {
    ++digits;
  }
  std::string access = token.substr(digits);
  if (digits == 0 || digits > 9 || !IsAccessLetters(access) || std::stol(token) <= 0) {
    return Status::Error(ErrorKind::kParse, "fuser output: expected a PID, got " + Quote(token));
  }
  entries->push_back({std::stoi(token.substr(0, digits)), access, file});
  return Status::Ok();
}

// "/dev/nvidia0:" or "/dev/nvidia0: 1234m 5678": the file and what follows.
bool SplitFileLine(const std::string& line, std::string* file, std::string* rest) {
  if (line.empty() || line[0] != '/') return false;
  for (size_t at = line.find(':'); at != std::string::npos; at = line.find(':', at + 1)) {
    if (at + 1 == line.size() || line[at + 1] == ' ' || line[at + 1] == '\t') {
      *file = line.substr(0, at);
      *rest = line.substr(at + 1);
      return true;
    }
  }
  return false;
}

// Sorts a stderr (or merged) line that is not a file line; false if it is
// neither a known message nor a file line.
bool TakeMessage(const std::string& line, FuserResult* result) {
  const size_t prefix = sizeof(kMissingPrefix) - 1, suffix = sizeof(kMissingSuffix) - 1;
  if (line.size() > prefix + suffix && line.compare(0, prefix, kMissingPrefix) == 0 &&
      line.compare(line.size() - suffix, suffix, kMissingSuffix) == 0) {
    result->missing_files.push_back(line.substr(prefix, line.size() - prefix - suffix));
    return true;
  }
  if (line.compare(0, 7, "Cannot ") == 0 || line.compare(0, 6, "fuser:") == 0) {
    result->warnings.push_back(line);
    return true;
  }
  return false;
}

}  // namespace

Status ParseFuserOutput(const std::string& out, const std::string& err,
                        int exit_code, FuserResult* result) {
  *result = FuserResult();
  if (exit_code != 0 && exit_code != 1) {
    std::vector<std::string> lines = Lines(err);
    return Status::Error(ErrorKind::kCommandFailed,
                         "fuser exited with status " + std::to_string(exit_code) +
                             (lines.empty() ? "" : ": " + lines[0]));
  }
  FuserResult parsed;
  std::vector<std::vector<std::string>> access_groups;  // per file, from stderr
  for (const std::string& line : Lines(err)) {
    std::string file, rest;
    if (TakeMessage(line, &parsed)) continue;
    if (SplitFileLine(line, &file, &rest) && IsAccessLetters(Trim(rest).substr(0, 1))) {
      parsed.files.push_back(file);
      access_groups.push_back(Tokens(rest));
      continue;
    }
    parsed.warnings.push_back(line);
  }
  // Stdout: PIDs, or with merged stderr whole "file: pids" lines.
  std::string file = parsed.files.size() == 1 ? parsed.files[0] : "";
  for (const std::string& line : Lines(out)) {
    std::string text = line, named, rest;
    if (TakeMessage(line, &parsed)) continue;
    if (SplitFileLine(line, &named, &rest)) {
      parsed.files.push_back(named);
      file = named;
      text = rest;
    }
    for (const std::string& token : Tokens(text)) {
      Status status = ParseToken(token, file, &parsed.entries);
      if (!status.ok()) return status;
    }
  }
  if (parsed.files.size() == 1 && access_groups.size() == 1 &&
      access_groups[0].size() == parsed.entries.size()) {
    for (size_t i = 0; i < parsed.entries.size(); ++i) {
      parsed.entries[i].access = access_groups[0][i];
    }
  }
  for (const FuserEntry& entry : parsed.entries) parsed.pids.push_back(entry.pid);
  std::sort(parsed.pids.begin(), parsed.pids.end());
  parsed.pids.erase(std::unique(parsed.pids.begin(), parsed.pids.end()), parsed.pids.end());
  *result = std::move(parsed);
  return Status::Ok();
}

}  // namespace fleetreap
