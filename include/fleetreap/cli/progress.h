// Progress: the FleetObserver that shows a run while it happens. On a
// terminal it keeps one live line redrawn in place (hosts done / in flight /
// pending, clean / dirty / unreachable / failed so far, elapsed time) and
// prints a permanent line for each host that is not clean. Off a terminal
// (CI logs) it never redraws: one line per finished host, nothing else.
// Thread-safe: every observer call and Tick() may come from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fleetreap/runner/fleet_observer.h"
#include "fleetreap/cli/options.h"

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
  /// How often a refresh thread redraws the live line and checks the stop
  /// flag (see WatchStopFlag); zero: no thread, only events do (tests).
  std::chrono::milliseconds tick{0};
};

/// The style for showing progress on "stream" (stderr, normally): live when
/// it is a terminal, cut to its width, a 250 ms refresh either way, coloured as
/// ShouldUseColor decides with --color, judged as a dry run with --dry-run.
/// (--quiet means no Progress at all; that is the caller's choice.)
ProgressStyle ProgressStyleFor(const Options& options, std::FILE* stream);

class Progress : public FleetObserver {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// Writes to "out", which must outlive this object. "clock" measures the
  /// elapsed time (tests pass a fake one).
  Progress(std::FILE* out, ProgressStyle style,
           Clock clock = std::chrono::steady_clock::now);
  /// Stops the refresh thread, if one runs.
  ~Progress() override;
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void RunStarted(int total) override;
  void HostStarted(const Host& host) override;
  void HostFinished(const HostReport& report) override;
  /// Clears the live line, so the final table starts on a clean line.
  void RunFinished() override;

  /// Ctrl-C was pressed: no new host starts. Says so (the live line keeps
  /// "interrupted, waiting for N in flight" until the run finishes).
  void Interrupted();

  /// Watches "*stop" (the flag a SIGINT handler sets; it must outlive this
  /// object): once it is true, the next event or refresh prints the
  /// Interrupted() notice. A signal handler cannot take locks; this is how
  /// Ctrl-C reaches the screen.
  void WatchStopFlag(const std::atomic<bool>* stop);

  /// Prints "text" (whole lines, '\n'-terminated) above the live line: the
  /// line is cleared, the text printed, the line redrawn. Off a terminal it
  /// just prints "text". For log messages (see MakeProgressLogSink).
  void PrintAbove(const std::string& text);

  /// Redraws the live line with the current elapsed time. No-op off a
  /// terminal or outside a run.
  void Tick();

  /// The live line's text, without control sequences or colour:
  /// "12/64 done, 8 in flight, 44 pending | 10 clean, 1 dirty, 1 unreachable,
  /// 0 failed | 12.3 s".
  std::string StatusLine() const;

 private:
  std::string StatusLineLocked() const;
  void InterruptedLocked();
  void CheckStopLocked();
  void DrawLocked();
  void ClearLocked();
  void StopTicker();

  std::FILE* out_;
  const ProgressStyle style_;
  const Clock clock_;

  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
  bool running_ = false;
  bool interrupted_ = false;
  bool line_drawn_ = false;
  const std::atomic<bool>* stop_flag_ = nullptr;
  int total_ = 0;
  int started_ = 0;
  int finished_ = 0;
  int clean_ = 0;
  int dirty_ = 0;
  int unreachable_ = 0;
  int failed_ = 0;

  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread ticker_;
};

/// A spdlog sink that prints every message through progress->PrintAbove, so
/// logs on stderr never land in the middle of the live line. "progress" must
/// outlive every logger the sink is attached to (detach it before destroying
/// the Progress).
std::shared_ptr<spdlog::sinks::sink> MakeProgressLogSink(Progress* progress);

}  // namespace fleetreap
