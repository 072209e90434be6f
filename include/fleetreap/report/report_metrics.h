// ReportMetrics: the run as Prometheus text exposition format (--metrics
// FILE), for node_exporter's textfile collector: gauges only, no
// timestamps on samples (the run's time is a metric of its own), base units
// (seconds, bytes), a few samples per host (none per GPU), snake_case label
// values, every outcome of every host present as 0 or 1. docs/metrics.md
// lists the metrics and gives alert rules. A run that streams its hosts
// folds each into a MetricsFold as it ends (a few numbers a host, not its
// report). Pure functions; thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

/// The whole exposition, '\n'-terminated, every family with # HELP and
/// # TYPE lines:
///   fleetreap_run_timestamp_seconds, fleetreap_run_duration_seconds,
///   fleetreap_run_exit_code, fleetreap_run_ready, fleetreap_run_dry_run,
///   fleetreap_hosts{outcome}, fleetreap_host_outcome{host,outcome} (every
///   outcome for each host: 1 for its own, 0 for the others),
///   fleetreap_host_duration_seconds{host}, fleetreap_host_signals{host,signal},
///   fleetreap_host_holders{host,fate}, fleetreap_host_gpus{host,state},
///   fleetreap_host_gpu_memory_used_bytes{host,when="before"|"after"}.
/// Outcomes are snake_case ("would_clean"). Label values are escaped as the
/// format says (\\, \", \n) and made valid UTF-8.
std::string RenderMetrics(const RunReport& report);

/// What the exposition says of each finished host, folded one host at a
/// time (in any order) as the hosts end.
class MetricsFold {
 public:
  /// One host's samples: its outcome, duration, signals, holders by fate,
  /// GPUs by last state, and GPU memory in use (MiB; none when never read).
  struct Host {
    std::string name;
    OutcomeKind outcome = OutcomeKind::kFailed;
    std::chrono::milliseconds duration{0};
    int term_sent = 0;
    int kill_sent = 0;
    int fates[static_cast<int>(HolderFate::kOutOfScope) + 1] = {};
    int states[static_cast<int>(GpuState::kOutOfScope) + 1] = {};
    std::optional<long long> used_mib_before;
    std::optional<long long> used_mib_after;
  };

  /// "dry_run": the run's (a host's outcome depends on it).
  explicit MetricsFold(bool dry_run);

  /// Folds in "host" at place "index" of the report (each index at most once).
  void Add(size_t index, const HostReport& host);

  /// The folded hosts by place.
  const std::map<size_t, Host>& hosts() const { return hosts_; }

 private:
  bool dry_run_;
  std::map<size_t, Host> hosts_;
};

/// Takes one piece of the exposition at a time.
using MetricsPieceSink = std::function<void(const std::string& piece)>;

/// RenderMetrics of a run whose hosts were folded into "fold" and
/// "metrics" as they ended, handed to "emit" in pieces of about 64 KiB (the
/// whole text is never held): the same text, byte for byte. "header" gives
/// the run's fields and hosts without a result; its hosts are not read.
void RenderMetricsPieces(const RunReport& header, const ReportFold& fold,
                         const MetricsFold& metrics, const MetricsPieceSink& emit);

}  // namespace fleetreap
