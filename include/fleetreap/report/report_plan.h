// ReportPlan: what a dry run would do, host by host, on the terminal: each
// holder's PID, name, GPUs, user and owner (unit, container, pod, Slurm job)
// and what it would get (TERM, KILL, or why it is left alone), the units
// that would be stopped and the /dev/shm entries that would be removed,
// under one total. Hosts whose plans have the same shape are folded into
// one block ("gpu[01-04]") whatever their PIDs. Pure function of the
// report; thread-compatible.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// The plan of a dry run, '\n'-terminated lines, "" when "report" is not a
/// dry run or no host would have anything done or left alone. One total
/// first, then each distinct plan once with the hosts that have it: hosts
/// fold on what would be done (verdict, names, GPUs, user, owner, units,
/// how many /dev/shm entries), not on PIDs, so a fleet's hosts that run the
/// same job fold whatever their PIDs; counts in a folded block are per
/// host ("each"):
///   plan: would signal 16 processes on 2 hosts, remove 2 /dev/shm entries, stop 1 unit
///   gpu[01-02] (2 hosts, each): would signal 8, stop 1 unit, remove 1 /dev/shm entry
///       TERM  x8 VLLM::Worker_TP[0-7] GPUs 0-7 root unit vllm.service
///       leave x1 nvidia-persistenced  GPUs 0-7 root unit nvidia-persistenced.service  protected:
///       ... stop   vllm.service remove 1 /dev/shm entry
/// A holder is named by argv[0] when the kernel's 15-character comm is a
/// prefix of it; holders that differ only in PID and a name's trailing
/// number share a row ("x8", names folded as host names are). With
/// "verbose" (-v) each host's PIDs by verdict and /dev/shm entries follow
/// its block ("      gpu01: TERM 182-189; leave 179; remove /dev/shm/x").
/// A host with only holders left alone says "nothing to signal". Remote
/// text (names, users, paths) is made one printable line. Lines fit
/// "width" columns (0: kDefaultTableWidth): a row whose owner does not fit
/// after its other columns has it on the next line, 8 in; other long lines
/// wrap after their spaces.
std::string RenderPlan(const RunReport& report, bool verbose = false, int width = 0);

/// RenderPlan made one host at a time, in any order: each distinct plan's
/// text, its hosts' names and -v details, and the totals; not the hosts'
/// reports. Thread-compatible.
class PlanFold {
 public:
  /// Adds the plan of "host", at place "index" in the report.
  void Add(size_t index, const HostReport& host);
  /// RenderPlan of a dry run of the hosts added, as if they came in index
  /// order.
  std::string Render(bool verbose = false, int width = 0) const;

  /// A line of a plan's block, below its headline: a holder row (its
  /// padded columns, then its owner, which Render moves to the next line
  /// where it does not fit), or a "stop UNIT" / "remove N" line.
  struct Line {
    std::string columns;
    std::string owner;
    bool row = false;
  };

 private:
  struct PlanHost {
    size_t index = 0;
    std::string name;
    std::string detail;  // -v: PIDs by verdict, /dev/shm names
  };
  struct Plan {
    std::string headline;
    std::vector<Line> lines;
    size_t first = 0;
    std::vector<PlanHost> hosts;
  };
  std::vector<Plan> plans_;
  std::map<std::string, size_t> by_shape_;  // a plan's headline and lines -> its place
  size_t signals_ = 0;
  size_t signalled_hosts_ = 0;
  size_t units_ = 0;
  size_t shm_ = 0;
};

}  // namespace fleetreap
