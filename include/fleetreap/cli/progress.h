// Progress: the FleetObserver that shows a run while it happens. On a
// terminal it keeps one live line redrawn in place (hosts done, elapsed
// time, the slowest host in flight and its step, clean / dirty /
// unreachable / failed so far, in flight / pending) and prints a permanent
// line for each host that is not clean, and for each host key accepted.
// Off a terminal (CI logs) it never redraws: one line per finished host
// ("[3/9] gpu08 dirty 0.8 s: GPU 2 ghost memory (10151 MiB); ghost memory
// needs a GPU reset: ..."), and the accepted keys.
// Not thread-safe: every call comes from the thread that created it (the one
// that calls RunFleet, which makes every observer call and Tick() there).
// The one exception is a log line from another thread (MakeProgressLogSink):
// it is handed over under a lock and printed at the next call.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/runner/fleet_observer.h"

namespace spdlog {
namespace sinks {
class sink;
}  // namespace sinks
}  // namespace spdlog

namespace fleetreap {

struct ProgressStyle {
  /// Redraw a live status line: only when the stream is a terminal.
  bool live = false;
  bool color = false;    // see ShouldUseColor (terminal.h)
  bool dry_run = false;  // hosts are judged as in a dry run
  /// The live line is cut to width - 1 columns so it never wraps; 0: no cut.
  int width = 0;
};

class Progress : public FleetObserver {
 public:
  /// Writes to "out", which must outlive this object. "clock" measures the
  /// elapsed time (tests pass a fake one) and must outlive it too.
  Progress(std::FILE* out, ProgressStyle style, Clock& clock = RealClock());
  /// Prints any log line still handed over from another thread.
  ~Progress() override;
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void RunStarted(int total) override;
  void HostStarted(const Host& host) override;
  void HostStep(const Host& host, const std::string& step) override;
  void HostFinished(const HostReport& report) override;
  /// Clears the live line, so the final table starts on a clean line.
  void RunFinished() override;

  /// Ctrl-C was pressed: no new host starts. Says so (the live line keeps
  /// "interrupted, waiting for N in flight" until the run finishes).
  void Interrupted() override;

  /// Prints "text" (whole lines, '\n'-terminated) above the live line: the
  /// line is cleared, the text printed, the line redrawn. Off a terminal it
  /// just prints "text". For log messages (see MakeProgressLogSink). From
  /// another thread than the one that created this Progress, "text" is kept
  /// (under a lock) and printed at the next call on that thread.
  void PrintAbove(const std::string& text);

  /// Redraws the live line with the current elapsed time. No-op off a
  /// terminal or outside a run.
  void Tick() override;

  /// The live line's text, without control sequences or colour, what
  /// matters first so that an 80-column terminal cuts only the end: hosts
  /// done and the elapsed time, the host in flight the longest with its step
  /// and the step's own time over its limit, the outcomes so far in the
  /// verdict's words (clean, and would clean / dirty / not ready /
  /// unreachable / failed when there are some), what is in flight and
  /// pending, the next longest host:
  ///   "12/64 done 12.3 s | slowest gpu02 term 8 pids 8.2/10.0 s | 10 clean,
  ///   1 dirty | 8 in flight, 44 pending | next gpu07 connect 3.1 s"
  /// After Ctrl-C it starts "interrupted, ".
  std::string StatusLine() const;
  static constexpr size_t kSlowestShown = 2;

 private:
  void PrintPending();
  void Draw();
  void Clear();
  void Count(OutcomeKind kind);  // the counts the status line shows, in the verdict's words
  std::string FinishedLine(const HostReport& report, const HostOutcome& outcome) const;

  std::FILE* out_;
  const ProgressStyle style_;
  Clock& clock_;
  const std::thread::id owner_ = std::this_thread::get_id();

  std::chrono::steady_clock::time_point start_;
  bool running_ = false;
  bool interrupted_ = false;
  bool line_drawn_ = false;
  int total_ = 0;
  int started_ = 0;
  int finished_ = 0;
  int clean_ = 0;
  int would_clean_ = 0;
  int dirty_ = 0;
  int not_ready_ = 0;
  int unreachable_ = 0;
  int failed_ = 0;
  struct InFlight {
    std::string name;
    std::chrono::steady_clock::time_point since;
    std::string step;
    std::chrono::steady_clock::time_point step_since;
  };
  std::vector<InFlight> in_flight_;  // in the order they started

  // Log lines from other threads, waiting for the owner thread.
  std::mutex pending_mu_;
  std::string pending_;
};

/// A spdlog sink that prints every message through progress->PrintAbove, so
/// logs on stderr never land in the middle of the live line. "progress" must
/// outlive every logger the sink is attached to (detach it before destroying
/// the Progress).
std::shared_ptr<spdlog::sinks::sink> MakeProgressLogSink(Progress* progress);

}  // namespace fleetreap
