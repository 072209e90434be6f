// CauseFold: the fleet's hosts grouped by why their GPUs were held (their
// cause finding, model/host_finding.h), folded one host at a time, on the
// finding's values, never on its words: "gpu[01-62]: 62 hosts, each: 8
// holders outlived the stop of unit vllm.service (KillMode=process), still
// in its cgroup: set KillMode=control-group (or mixed) in the unit".
// Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {

class CauseFold {
 public:
  /// Folds in "host" at place "index" of the report (each index at most
  /// once); a host without a cause finding is left out.
  void Add(size_t index, const HostReport& host);

  /// One line per cause, the most hosts first: the hosts' names folded,
  /// ": ", then, when more than one, "62 hosts, each: " and CauseSummary
  /// with the holders per host when every host had as many, else "3 hosts:"
  /// and CauseSummary with the hosts' holders in all (an exact count, never
  /// a range of different hosts' counts). Empty when no host had a cause.
  std::vector<std::string> Lines() const;

  /// "HOST: restarter alive: ..." (HostFindingText) for each restarter a
  /// folded host reported, in report order.
  std::vector<std::string> RestarterLines() const;

 private:
  struct Group {
    HostFinding cause;  // the first member's
    int64_t fewest = 0;
    int64_t most = 0;
    int64_t total = 0;
    std::map<size_t, std::string> names;  // by index
  };
  std::vector<Group> groups_;
  std::map<std::string, size_t> by_key_;
  std::map<size_t, std::vector<std::string>> restarters_;  // by index
};

}  // namespace fleetreap
