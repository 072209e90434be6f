#include "fleetreap/cli/progress.h"

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>

#include <algorithm>

#include "fleetreap/base/text.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/terminal.h"

namespace fleetreap {
namespace {

const char* kClearLine = "\r\033[K";

class ProgressLogSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ProgressLogSink(Progress* progress) : progress_(progress) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    progress_->PrintAbove(std::string(formatted.data(), formatted.size()));
  }
  void flush_() override {}

 private:
  Progress* progress_;
};

}  // namespace

Progress::Progress(std::FILE* out, ProgressStyle style, Clock& clock)
    : out_(out), style_(style), clock_(clock) {}

Progress::~Progress() {
  std::lock_guard<std::mutex> lock(pending_mu_);
  if (!pending_.empty()) std::fputs(pending_.c_str(), out_);
  std::fflush(out_);
}

void Progress::RunStarted(int total) {
  PrintPending();
  start_ = clock_.Now();
  running_ = true;
  total_ = total;
  if (style_.live) Draw();
}

void Progress::HostStarted(const Host& host) {
  PrintPending();
  ++started_;
  in_flight_.push_back({host.name, clock_.Now(), "connect"});
  if (style_.live) Draw();
}

void Progress::HostStep(const Host& host, const std::string& step) {
  for (InFlight& flight : in_flight_) {
    if (flight.name == host.name) flight.step = step;
  }
}

void Progress::HostFinished(const HostReport& report) {
  PrintPending();
  HostOutcome outcome = OutcomeOf(report, style_.dry_run);
  ++finished_;
  in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                  [&report](const InFlight& f) { return f.name == report.name; }),
                   in_flight_.end());
  switch (report.status) {
    case HostStatus::kClean: ++clean_; break;
    case HostStatus::kDirty:
    case HostStatus::kNotReady: ++dirty_; break;
    case HostStatus::kUnreachable: ++unreachable_; break;
    case HostStatus::kFailed: ++failed_; break;
  }
  std::string label = OutcomeKindLabel(outcome.kind);
  if (style_.color) label = OutcomeColor(outcome.kind) + label + "\033[0m";
  std::string line = report.name + " " + label + ": " + outcome.detail + " (" +
                     FormatSeconds(report.duration) + ")";
  const std::string reason = HostReason(report, style_.dry_run);
  if (!reason.empty()) line += ": " + reason;
  if (!report.host_key_accepted_into.empty()) {
    // Trust on first use is an event to keep in the log, as ssh's
    // "Permanently added" line.
    if (style_.live) Clear();
    std::fprintf(out_, "%s: accepted new host key %s %s into %s\n", report.name.c_str(),
                 report.host_key_type.c_str(), report.host_key_fingerprint.c_str(),
                 report.host_key_accepted_into.c_str());
  }
  if (!style_.live) {
    std::fprintf(out_, "[%d/%d] %s\n", finished_, total_, line.c_str());
    std::fflush(out_);
    return;
  }
  // On a terminal only problems get a permanent line; the rest is the count.
  if (outcome.kind != OutcomeKind::kClean && outcome.kind != OutcomeKind::kCleaned) {
    Clear();
    std::fprintf(out_, "%s\n", line.c_str());
  }
  Draw();
}

void Progress::RunFinished() {
  PrintPending();
  running_ = false;
  if (style_.live) Clear();
  std::fflush(out_);
}

void Progress::Interrupted() {
  if (interrupted_) return;
  interrupted_ = true;
  int in_flight = std::max(0, started_ - finished_);
  if (style_.live) Clear();
  std::fprintf(out_, "interrupted: starting no new hosts, waiting for %d in flight\n", in_flight);
  if (style_.live && running_) Draw();
  std::fflush(out_);
}

void Progress::PrintAbove(const std::string& text) {
  if (std::this_thread::get_id() != owner_) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending_ += text;
    return;
  }
  PrintPending();
  if (style_.live) Clear();
  std::fputs(text.c_str(), out_);
  if (style_.live && running_) Draw();
  std::fflush(out_);
}

void Progress::PrintPending() {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    text.swap(pending_);
  }
  if (text.empty()) return;
  if (style_.live) Clear();
  std::fputs(text.c_str(), out_);
  if (style_.live && running_) Draw();
  std::fflush(out_);
}

std::shared_ptr<spdlog::sinks::sink> MakeProgressLogSink(Progress* progress) {
  return std::make_shared<ProgressLogSink>(progress);
}

void Progress::Tick() {
  PrintPending();
  if (!running_) return;
  if (style_.live) Draw();
}

std::string Progress::StatusLine() const {
  int in_flight = std::max(0, started_ - finished_);
  int pending = std::max(0, total_ - std::max(started_, finished_));
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      running_ ? clock_.Now() - start_ : std::chrono::milliseconds(0));
  std::string line = std::to_string(finished_) + "/" + std::to_string(total_) + " done, " +
                     std::to_string(in_flight) + " in flight, " + std::to_string(pending) +
                     " pending | " + std::to_string(clean_) + " clean, " + std::to_string(dirty_) +
                     " dirty, " + std::to_string(unreachable_) + " unreachable, " +
                     std::to_string(failed_) + " failed | " + FormatSeconds(elapsed);
  if (interrupted_) line += " | interrupted";
  std::vector<std::string> slowest;
  for (size_t i = 0; i < in_flight_.size() && i < kSlowestShown; ++i) {
    const InFlight& flight = in_flight_[i];
    slowest.push_back(flight.name + " " + flight.step + " (" +
                      FormatSeconds(std::chrono::duration_cast<std::chrono::milliseconds>(
                          clock_.Now() - flight.since)) +
                      ")");
  }
  if (!slowest.empty()) line += " | slowest: " + Join(slowest, ", ");
  return line;
}

void Progress::Draw() {
  std::string line = StatusLine();
  if (style_.width > 1 && static_cast<int>(line.size()) > style_.width - 1) {
    line.resize(static_cast<size_t>(style_.width - 1));
  }
  std::fprintf(out_, "%s%s", kClearLine, line.c_str());
  std::fflush(out_);
  line_drawn_ = true;
}

void Progress::Clear() {
  if (!line_drawn_) return;
  std::fputs(kClearLine, out_);
  line_drawn_ = false;
}

}  // namespace fleetreap
