// ReportMetrics: the run as Prometheus text exposition format (--metrics
// FILE), for node_exporter's textfile collector: gauges only, no
// timestamps on samples (the run's time is a metric of its own), base units
// (seconds, bytes), a few samples per host (none per GPU), snake_case label
// values, every outcome of every host present as 0 or 1. docs/metrics.md
// lists the metrics and gives alert rules. Pure function; thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/report.h"

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

}  // namespace fleetreap
