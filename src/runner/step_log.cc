#include "fleetreap/runner/step_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

constexpr size_t kLoggedBytes = 4096;

// "GPUs 7 clean, 1 busy", by state in first-seen order.
std::string GpuCounts(const std::vector<GpuReading>& gpus) {
  std::vector<std::pair<std::string, int>> counts;
  for (const GpuReading& gpu : gpus) {
    const std::string name = GpuStateName(gpu.state);
    auto it =
        std::find_if(counts.begin(), counts.end(),
                     [&name](const std::pair<std::string, int>& c) { return c.first == name; });
    if (it == counts.end()) {
      counts.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(std::to_string(count) + " " + name);
  return parts.empty() ? "no GPU answered" : "GPUs " + Join(parts, ", ");
}

std::string Signalled(const Action& action, const HostView& view) {
  std::vector<std::string> pids;
  int left = 0;
  for (const Target& target : action.targets) {
    pids.push_back(std::to_string(target.pid));
    for (const TrackedHolder& t : view.holders) {
      if (t.holder.pid == target.pid && t.holder.start_time == target.start_time && t.present) {
        ++left;
      }
    }
  }
  const int total = static_cast<int>(action.targets.size());
  return std::string(action.kind == ActionKind::kKill ? "KILL" : "TERM") + " to pids " +
         Join(pids, ",") + " (" + std::to_string(total) + "), wait up to " +
         FormatSeconds(action.wait) + ": " + std::to_string(total - left) + " exited, " +
         std::to_string(left) + " left";
}

std::string Holders(const HostView& view) {
  int present = 0;
  int never = 0;
  for (const TrackedHolder& t : view.holders) {
    if (!t.present) continue;
    ++present;
    if (NeverSignalled(t.holder.fate)) ++never;
  }
  return std::to_string(present) + (present == 1 ? " holder (" : " holders (") +
         std::to_string(present - never) + " to act on, " + std::to_string(never) + " left alone)";
}

std::string Cut(const std::string& text) { return EscapeControlBytes(text, kLoggedBytes, true); }

// DescribeStep's line without its time and error.
std::string StepBody(const Action& action, const HostView& view) {
  std::vector<std::string> parts;
  bool scanned = false;
  auto describe = [&](const Action& a) {
    switch (a.kind) {
      case ActionKind::kStopUnits: parts.push_back("stop " + Join(a.units, ", ")); break;
      case ActionKind::kTerm:
      case ActionKind::kKill: parts.push_back(Signalled(a, view)); break;
      case ActionKind::kResetGpus: {
        std::vector<std::string> gpus;
        for (int gpu : a.gpus) gpus.push_back(std::to_string(gpu));
        parts.push_back("reset GPUs " + Join(gpus, ","));
        break;
      }
      case ActionKind::kInspect:
      case ActionKind::kRescan:
      case ActionKind::kVerify: scanned = true; break;
      case ActionKind::kCleanShm:
      case ActionKind::kDone:
      case ActionKind::kDidNotConverge: break;
    }
  };
  describe(action);
  for (const Action& fused : action.fused) describe(fused);
  if (scanned) parts.push_back(Holders(view));
  parts.push_back(GpuCounts(view.gpus));
  return StepName(action) + ": " + Join(parts, "; ");
}

}  // namespace

std::string DescribeStep(const Action& action, const HostView& view, std::chrono::milliseconds took,
                         const std::string& error) {
  std::string line = StepBody(action, view) + " (" + FormatSeconds(took) + ")";
  if (!error.empty()) line += ", failed: " + Cut(error);
  return line;
}

std::vector<std::string> StepLines::Add(const Action& action, const HostView& view,
                                        std::chrono::milliseconds took, const std::string& error) {
  std::string body = StepBody(action, view);
  if (action.kind == ActionKind::kRescan && error.empty() && body == last_) {
    ++repeats_;
    repeated_ += took;
    return {};
  }
  std::vector<std::string> lines = Close();
  lines.push_back(DescribeStep(action, view, took, error));
  last_ = error.empty() ? std::move(body) : "";
  return lines;
}

std::vector<std::string> StepLines::Close() {
  if (repeats_ == 0) return {};
  std::string line = "rescan: the same " + std::to_string(repeats_) +
                     (repeats_ == 1 ? " more time (" : " more times (") + FormatSeconds(repeated_) +
                     ")";
  repeats_ = 0;
  repeated_ = std::chrono::milliseconds(0);
  return {line};
}

std::string StepBrief(const Action& action) {
  std::string brief = StepName(action);
  const Action* wave = &action;
  for (const Action& fused : action.fused) {
    if (fused.kind == ActionKind::kTerm || fused.kind == ActionKind::kKill) wave = &fused;
  }
  if (wave->kind == ActionKind::kTerm || wave->kind == ActionKind::kKill) {
    brief += " " + std::to_string(wave->targets.size()) +
             (wave->targets.size() == 1 ? " pid" : " pids") + ", up to " +
             FormatSeconds(wave->wait);
  }
  return brief;
}

void LogStep(const std::string& host, StepLines& lines, const Action& action, const HostView& view,
             std::chrono::milliseconds took, const std::string& error) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  for (const std::string& line : lines.Add(action, view, took, error)) {
    spdlog::info("{}: {}", Cut(host), line);
  }
}

void LogStepsEnd(const std::string& host, StepLines& lines) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  for (const std::string& line : lines.Close()) spdlog::info("{}: {}", Cut(host), line);
}

void LogCommand(const std::string& host, const std::string& name, const std::string& script,
                std::chrono::milliseconds timeout) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  spdlog::debug("{}: run {} (timeout {} ms): {}", Cut(host), name, timeout.count(), Cut(script));
}

void LogReply(const std::string& host, const CommandResult& result) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  const std::string end = result.end == CommandEnd::kExited
                              ? "exit " + std::to_string(result.exit_code)
                              : std::string(CommandEndName(result.end)) + " " + result.error;
  spdlog::debug("{}: reply: {} ({} ms), stdout ({} bytes): {}, stderr ({} bytes): {}", Cut(host),
                end, result.duration.count(), result.out.size(), Cut(result.out), result.err.size(),
                Cut(result.err));
}

}  // namespace fleetreap
