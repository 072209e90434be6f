// CommandOutput: the per-command output limits every Transport applies.
#include "fleetreap/transport/command_output.h"

#include <algorithm>

namespace fleetreap {
namespace {

// Appends "length" bytes of "data" to "text", growing its buffer at most to
// "limit": std::string's own growth (reserve too) may double past it.
void Append(std::string* text, const char* data, size_t length, size_t limit) {
  size_t needed = text->size() + length;
  if (needed > text->capacity()) {
    std::string grown;
    grown.reserve(std::min(limit, std::max(needed, 2 * text->capacity())));
    grown.append(*text);
    text->swap(grown);
  }
  text->append(data, length);
}

}  // namespace

std::string ByteCount(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

OutputCollector::OutputCollector(CommandResult* result, OutputLimits limits)
    : result_(result), limits_(limits) {}

bool OutputCollector::Add(bool is_stderr, const char* data, size_t length) {
  if (Exceeded()) return false;
  std::string* text = is_stderr ? &result_->err : &result_->out;
  size_t limit = is_stderr ? limits_.err : limits_.out;
  size_t room = limit > text->size() ? limit - text->size() : 0;
  size_t keep = std::min(length, room);
  if (keep > 0) Append(text, data, keep, limit);
  if (keep == length) return true;
  if (is_stderr) {
    result_->err_truncated = true;
  } else {
    result_->out_truncated = true;
  }
  exceeded_ = std::string(is_stderr ? "stderr" : "stdout") + " exceeded " + ByteCount(limit);
  return false;
}

void OutputCollector::Finish(std::chrono::milliseconds duration) const {
  result_->end = CommandEnd::kOutputLimit;
  result_->exit_code = -1;
  result_->error = exceeded_ + ", stopped reading";
  result_->duration = duration;
}

}  // namespace fleetreap
