#include "fleetreap/cli/progress.h"

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>

#include <algorithm>

#include "fleetreap/base/text.h"
#include "fleetreap/base/text_wrap.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/terminal.h"

namespace fleetreap {
namespace {

const char* kClearLine = "\r\033[K";

// The terminal's width as a column count; 0 (not known) keeps lines whole.
size_t Columns(int width) { return width > 0 ? static_cast<size_t>(width) : 0; }

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
  const auto now = clock_.Now();
  in_flight_.push_back({host.name, now, "connect", now});
  if (style_.live) Draw();
}

void Progress::HostStep(const Host& host, const std::string& step) {
  for (InFlight& flight : in_flight_) {
    if (flight.name != host.name) continue;
    flight.step = step;
    flight.step_since = clock_.Now();
  }
}

void Progress::Count(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kClean:
    case OutcomeKind::kCleaned: ++clean_; break;
    case OutcomeKind::kWouldClean: ++would_clean_; break;
    case OutcomeKind::kDirty: ++dirty_; break;
    case OutcomeKind::kNotReady: ++not_ready_; break;
    case OutcomeKind::kUnreachable: ++unreachable_; break;
    default: ++failed_; break;
  }
}

// "gpu08 dirty 0.8 s: GPU 2 ghost memory (10151 MiB); <what to do>": the
// time in its own place, one separator style, the host named once.
std::string Progress::FinishedLine(const HostReport& report, const HostOutcome& outcome) const {
  std::string label = OutcomeKindLabel(outcome.kind);
  if (style_.color) label = OutcomeColor(outcome.kind) + label + "\033[0m";
  std::string line =
      report.name + " " + label + " " + FormatSeconds(report.duration) + ": " + outcome.detail;
  std::string reason = HostReason(report, style_.dry_run);
  if (reason.rfind(report.name + ": ", 0) == 0) reason.erase(0, report.name.size() + 2);
  if (!reason.empty()) line += "; " + reason;
  return line;
}

void Progress::HostFinished(const HostReport& report) {
  PrintPending();
  HostOutcome outcome = OutcomeOf(report, style_.dry_run);
  ++finished_;
  in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                  [&report](const InFlight& f) { return f.name == report.name; }),
                   in_flight_.end());
  Count(outcome.kind);
  const std::string line = FinishedLine(report, outcome);
  if (!report.host_key_accepted_into.empty()) {
    // Trust on first use is an event to keep in the log, as ssh's
    // "Permanently added" line.
    if (style_.live) Clear();
    const std::string accepted = report.name + ": accepted new host key " + report.host_key_type +
                                 " " + report.host_key_fingerprint + " into " +
                                 report.host_key_accepted_into;
    std::fputs(WrapLine(accepted, 4, style_.live ? Columns(style_.width) : 0).c_str(), out_);
  }
  if (!style_.live) {
    std::fprintf(out_, "[%d/%d] %s\n", finished_, total_, line.c_str());
    std::fflush(out_);
    return;
  }
  // On a terminal only problems get a permanent line; the rest is the
  // count. It wraps at the terminal's width, its continuation lines
  // indented, as the table's rows do.
  if (outcome.kind != OutcomeKind::kClean && outcome.kind != OutcomeKind::kCleaned) {
    Clear();
    std::fputs(WrapLine(line, 4, Columns(style_.width)).c_str(), out_);
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

namespace {

// "term 8 pids 7.4/10.0 s" from the runner's "term 8 pids, up to 10.0 s"
// and the time the step has run; "connect 3.1 s" for a step without one.
std::string StepProgress(const std::string& step, std::chrono::milliseconds in_step) {
  const std::string marker = ", up to ";
  const size_t at = step.find(marker);
  if (at == std::string::npos) return step + " " + FormatSeconds(in_step);
  std::string limit = step.substr(at + marker.size());
  std::string elapsed = FormatSeconds(in_step);
  if (elapsed.size() > 2 && elapsed.compare(elapsed.size() - 2, 2, " s") == 0) {
    elapsed.erase(elapsed.size() - 2);  // "7.4/10.0 s"
  }
  return step.substr(0, at) + " " + elapsed + "/" + limit;
}

}  // namespace

std::string Progress::StatusLine() const {
  using std::chrono::milliseconds;
  const int in_flight = std::max(0, started_ - finished_);
  const int pending = std::max(0, total_ - std::max(started_, finished_));
  const auto now = clock_.Now();
  auto since = [&now](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<milliseconds>(now - t);
  };
  // What matters first, so that a narrow terminal cuts only the rest: the
  // count, the time, the slowest host and its step; then the outcomes so
  // far (problems only when there are some), what is left, the next host.
  std::string line = interrupted_ ? "interrupted, " : "";
  line += std::to_string(finished_) + "/" + std::to_string(total_) + " done " +
          FormatSeconds(running_ ? since(start_) : milliseconds(0));
  if (!in_flight_.empty()) {
    const InFlight& slowest = in_flight_.front();  // in flight the longest
    line +=
        " | slowest " + slowest.name + " " + StepProgress(slowest.step, since(slowest.step_since));
  }
  line += " | " + std::to_string(clean_) + " clean";
  for (const auto& [count, what] : {std::pair<int, const char*>{would_clean_, " would clean"},
                                    {dirty_, " dirty"},
                                    {not_ready_, " not ready"},
                                    {unreachable_, " unreachable"},
                                    {failed_, " failed"}}) {
    if (count > 0) line += ", " + std::to_string(count) + what;
  }
  line += " | " + std::to_string(in_flight) + " in flight, " + std::to_string(pending) + " pending";
  for (size_t i = 1; i < in_flight_.size() && i < kSlowestShown; ++i) {
    const InFlight& next = in_flight_[i];
    line += " | next " + next.name + " " + StepProgress(next.step, since(next.step_since));
  }
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
