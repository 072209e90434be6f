// ReportPlan: what a dry run would do, host by host, on the terminal: each
// holder's PID, name, GPUs, user and owner (unit, container, pod, Slurm job)
// and what it would get (TERM, KILL, or why it is left alone), the units
// that would be stopped and the /dev/shm entries that would be removed.
// Hosts whose plans read the same are folded into one block
// ("gpu[01-04]"). Pure function of the report; thread-compatible.
#pragma once

#include <string>

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

}  // namespace fleetreap
