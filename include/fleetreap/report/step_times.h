// StepTimes: where a run's time went, step by step (the report's per-host
// "timings": connect, inspect, term with its wait, rescan with its settle,
// verify, ...), for -v: one host's steps on its "finished" line, and the
// run's median and slowest host per step under the table. Pure functions;
// thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// What the host's duration holds besides its timed steps: the settle
/// period before a re-scan (the re-scan is timed after it), a connect
/// retry's backoff, the controller's own time.
inline constexpr char kBetweenSteps[] = "between steps";

/// One host's steps in the order they ran, each with its time, then the
/// time between them when there is some: "connect 0.1 s, inspect 0.3 s,
/// term 10.0 s, rescan+clean_shm+verify 0.4 s, between steps 1.0 s"; a
/// step run several times once, with the total: "rescan 2.0 s (10 runs)".
/// "" when the host has no timings.
std::string DescribeTimings(const HostReport& host);

/// One line per step that some host ran, in the order steps first appear
/// (kBetweenSteps last), each '\n'-terminated and indented, under a heading:
///   where the time went (median / slowest host, per step):
///       connect                   0.1 s / 0.5 s gpu07 (12 hosts)
///       term                      2.5 s / 10.0 s gpu13 (3 hosts)
///       rescan                    0.2 s / 0.2 s gpu05 (2 hosts, 12 runs)
/// A step a host ran several times counts once for it, with the runs'
/// total time; the runs are counted when there are more than hosts. The
/// median of an even count is the lower middle value. "" when no host has
/// timings.
std::string RenderStepTimes(const RunReport& report);

/// RenderStepTimes made one host at a time, in any order: per step, the
/// order it first appears in, every host's time in it and its slowest host
/// (name and place), not the hosts' reports. Thread-compatible.
class StepTimesFold {
 public:
  /// Adds the timings of "host", at place "index" in the report.
  void Add(size_t index, const HostReport& host);
  /// RenderStepTimes of the hosts added, as if they came in index order.
  std::string Render() const;

 private:
  struct Step {
    std::string step;
    std::pair<size_t, size_t> first;                       // host index, place among its steps
    std::map<size_t, std::chrono::milliseconds> per_host;  // by host index: its runs' total
    size_t runs = 0;
    std::map<size_t, std::string> names;  // by host index
  };
  std::vector<Step> steps_;
};

}  // namespace fleetreap
