// ReportPlan: what a dry run would do, host by host, on the terminal: each
// holder's PID, name, GPUs, user and owner (unit, container, pod, Slurm job)
// and what it would get (TERM, KILL, or why it is left alone), the units
// that would be stopped and the /dev/shm entries that would be removed.
// Hosts whose plans read the same are folded into one block
// ("gpu[01-04]"). Pure function of the report; thread-compatible.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// The plan of a dry run, '\n'-terminated lines, "" when "report" is not a
/// dry run or no host would have anything done or left alone:
///   gpu[01-02]: would signal 2, stop 1 unit, remove 1 /dev/shm entry
///     TERM   pid 6000  python3          GPU 0      svc-infer  unit vllm.service
///     leave  pid 900   nvidia-persiste  -          nvidia-persistenced  protected:
///     nvidia-persistenced stop   vllm.service remove /dev/shm/nccl-xyz
/// Remote text (names, users, paths) is made one printable line.
std::string RenderPlan(const RunReport& report);

/// RenderPlan made one host at a time, in any order: each distinct plan's
/// text and its hosts' names, not their reports. Thread-compatible.
class PlanFold {
 public:
  /// Adds the plan of "host", at place "index" in the report.
  void Add(size_t index, const HostReport& host);
  /// RenderPlan of a dry run of the hosts added, as if they came in index
  /// order.
  std::string Render() const;

 private:
  struct Plan {
    std::string text;
    size_t first = 0;
    std::vector<std::pair<size_t, std::string>> hosts;  // index, name
  };
  std::vector<Plan> plans_;
  std::map<std::string, size_t> by_text_;
};

}  // namespace fleetreap
