// The nvidia-smi commands fleetreap runs and the classification of its
// failures. The CSV parsers live in nvidia_smi_gpu_query.cc and
// nvidia_smi_compute_apps.cc, their shared reader in nvidia_smi_csv.cc.
#include "fleetreap/remote/nvidia_smi.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "fleetreap/base/text.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {
namespace {

constexpr char kLostPrefix[] = "unable to determine the device handle for gpu";

std::string Lower(const std::string& text) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// The failure a whole line of nvidia-smi's own words names, or kNone.
// "strict" (exit 0) accepts only lines that start with the message, so text
// in a CSV cell cannot pass for a failure of the tool.
NvidiaSmiFailure FailureOfLine(const std::string& line, bool strict) {
  // Every message starts with N, F or U: CSV rows are ruled out cheaply.
  if (strict && (line.empty() || std::string("NnFfUu").find(line[0]) == std::string::npos)) {
    return NvidiaSmiFailure::kNone;
  }
  std::string lower = Lower(line);
  auto has = [&](const char* text) {
    size_t at = lower.find(text);
    return at != std::string::npos && (!strict || at == 0);
  };
  if (has("nvidia-smi has failed because it couldn't communicate with the nvidia driver")) {
    return NvidiaSmiFailure::kDriverNotLoaded;
  }
  if (has("failed to initialize nvml: driver/library version mismatch")) {
    return NvidiaSmiFailure::kVersionMismatch;
  }
  if (has("failed to initialize nvml: insufficient permissions")) {
    return NvidiaSmiFailure::kInsufficientPermissions;
  }
  if (has("failed to initialize nvml: unknown error")) {
    return NvidiaSmiFailure::kNvmlUnknownError;
  }
  if (has("no devices were found")) return NvidiaSmiFailure::kNoDevices;
  LostGpu lost;
  if (ParseLostGpuLine(line, &lost)) return NvidiaSmiFailure::kGpuLost;
  if (!strict && (has("gpu is lost") || has("fallen off the bus"))) {
    return NvidiaSmiFailure::kGpuLost;
  }
  return NvidiaSmiFailure::kNone;
}

// nvidia-smi(1), RETURN VALUE: the statuses that name a cause on their own.
NvidiaSmiFailure FailureOfExitCode(int exit_code) {
  switch (exit_code) {
    case 4: return NvidiaSmiFailure::kInsufficientPermissions;
    case 9: return NvidiaSmiFailure::kDriverNotLoaded;
    case 15: return NvidiaSmiFailure::kGpuLost;
    default: return NvidiaSmiFailure::kOther;
  }
}

}  // namespace

const char* NvidiaSmiFailureName(NvidiaSmiFailure failure) {
  switch (failure) {
    case NvidiaSmiFailure::kNone: return "none";
    case NvidiaSmiFailure::kDriverNotLoaded: return "driver_not_loaded";
    case NvidiaSmiFailure::kVersionMismatch: return "version_mismatch";
    case NvidiaSmiFailure::kNoDevices: return "no_devices";
    case NvidiaSmiFailure::kInsufficientPermissions: return "insufficient_permissions";
    case NvidiaSmiFailure::kNvmlUnknownError: return "nvml_unknown_error";
    case NvidiaSmiFailure::kGpuLost: return "gpu_lost";
    case NvidiaSmiFailure::kOther: return "other";
  }
  return "other";
}

bool ParseLostGpuLine(const std::string& line, LostGpu* lost) {
  std::string text = Trim(line);
  if (text.size() < sizeof(kLostPrefix) || (text[0] != 'U' && text[0] != 'u')) return false;
  std::string lower = Lower(text.substr(0, sizeof(kLostPrefix) - 1));
  if (lower != kLostPrefix) return false;
  size_t at = sizeof(kLostPrefix) - 1;
  while (at < text.size() && text[at] == ' ') ++at;
  size_t end = at;
  while (end < text.size() && (IsHex(text[end]) || text[end] == ':' || text[end] == '.')) {
    ++end;
  }
  std::string bus_id = text.substr(at, end - at);
  if (!bus_id.empty() && bus_id.back() == ':') bus_id.pop_back();
  if (!LooksLikeBusId(bus_id)) return false;
  if (lost != nullptr) {
    lost->bus_id = bus_id;
    lost->message = text;
  }
  return true;
}

NvidiaSmiFailure ClassifyNvidiaSmiFailure(const std::string& out, const std::string& err,
                                          int exit_code, std::string* message) {
  const bool strict = exit_code == 0;
  NvidiaSmiFailure failure = NvidiaSmiFailure::kNone;
  // The tool's lines, each kept once: those that name a cause, the rest of
  // stderr (never part of an answer), the rest of stdout.
  std::vector<std::string> named, err_other, out_other;
  std::set<std::string> seen;
  for (const std::string* stream : {&err, &out}) {
    for (const nvsmi::Line& line : nvsmi::NumberedLines(*stream)) {
      NvidiaSmiFailure of_line = FailureOfLine(line.text, strict);
      // The first named cause wins; a lost GPU yields to a host-wide cause.
      if (of_line != NvidiaSmiFailure::kNone &&
          (failure == NvidiaSmiFailure::kNone || failure == NvidiaSmiFailure::kGpuLost)) {
        failure = of_line;
      }
      if (!seen.insert(line.text).second) continue;
      (of_line != NvidiaSmiFailure::kNone ? named
       : stream == &err                   ? err_other
                                          : out_other)
          .push_back(line.text);
    }
  }
  if (!strict && failure == NvidiaSmiFailure::kNone) {
    failure = FailureOfExitCode(exit_code);
  }
  if (message != nullptr) {
    std::vector<std::string> words = named;
    words.insert(words.end(), err_other.begin(), err_other.end());
    // stdout is the answer unless the run failed and nothing named the cause.
    if (!strict && named.empty()) words.insert(words.end(), out_other.begin(), out_other.end());
    message->clear();
    size_t kept = 0;
    for (; kept < words.size(); ++kept) {
      std::string quoted = QuoteToolLine(words[kept]);
      if (kept > 0 && message->size() + quoted.size() + 2 > kMaxToolMessage) break;
      if (!message->empty()) *message += "; ";
      *message += quoted;
    }
    if (kept < words.size()) {
      size_t left = words.size() - kept;
      *message += "; (" + std::to_string(left) + (left == 1 ? " more line)" : " more lines)");
    }
    if (failure != NvidiaSmiFailure::kNone && message->empty()) {
      *message = "nvidia-smi exited with status " + std::to_string(exit_code);
    }
  }
  return failure;
}

std::string EscapeToolLine(const std::string& line) {
  return EscapeControlBytes(line, kMaxToolLine, /*backslashes=*/true);
}

std::string QuoteToolLine(const std::string& line) {
  std::string quoted = "\"";
  for (char c : EscapeToolLine(line)) {
    if (c == '"') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

bool IsUnknownFieldError(const std::string& out, const std::string& err, int exit_code,
                         const std::string& field) {
  if (exit_code == 0 || field.empty()) return false;
  const std::string refusal = "Field \"" + field + "\" is not a valid field to query.";
  for (const std::string* stream : {&out, &err}) {
    for (const nvsmi::Line& line : nvsmi::NumberedLines(*stream)) {
      if (line.text == refusal) return true;
    }
  }
  return false;
}

bool StopsTheLadder(const GpuQueryResult& result, int exit_code) {
  return exit_code == 15 || exit_code == 9 || result.failure == NvidiaSmiFailure::kGpuLost ||
         result.failure == NvidiaSmiFailure::kDriverNotLoaded;
}

const std::vector<std::string>& GpuQueryFields() {
  static const std::vector<std::string> kFields = {
      "index", "uuid", "name", "pci.bus_id", "memory.used", "memory.total", "gpu_recovery_action"};
  return kFields;
}

const std::vector<std::string>& GpuQueryFieldsWithoutRecovery() {
  static const std::vector<std::string> kFields(GpuQueryFields().begin(),
                                                GpuQueryFields().end() - 1);
  return kFields;
}

std::string GpuQueryCommand() {
  return "nvidia-smi --query-gpu=" + Join(GpuQueryFields(), ",") + " --format=csv,nounits";
}

std::string GpuQueryCommandWithoutRecovery() {
  return "nvidia-smi --query-gpu=" + Join(GpuQueryFieldsWithoutRecovery(), ",") +
         " --format=csv,nounits";
}

std::string GpuQueryCommandForGpu(int index, bool with_recovery) {
  return "nvidia-smi -i " + std::to_string(index) + " --query-gpu=" +
         Join(with_recovery ? GpuQueryFields() : GpuQueryFieldsWithoutRecovery(), ",") +
         " --format=csv,nounits";
}

}  // namespace fleetreap
