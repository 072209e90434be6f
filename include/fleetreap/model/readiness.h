// ReadinessFinding: one named reason a GPU or a host is not ready for the
// next job, with the next step in the words an operator acts on ("GPU 3: 2
// remapped rows pending: reset the GPU before the rollout"). The escalation's
// readiness decision (escalation/readiness.h) makes them; the reports show
// them (status not_ready when a host is empty but a blocking finding holds).
// Plain values; thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {

/// How much a finding weighs: a blocking one makes an empty host not_ready;
/// a warning is reported and changes no status.
enum class FindingSeverity { kBlock, kWarn };
const char* FindingSeverityName(FindingSeverity severity);  // "block", "warn"

struct ReadinessFinding {
  /// The check that found it, snake_case and stable: "ecc", "remapped_rows",
  /// "retired_pages", "fabric", "fabric_manager", "persistence",
  /// "pcie_link", "xid", "gpu_count", "kernel_log", "recovery_action" (the
  /// driver's gpu_recovery_action: always blocks).
  std::string check;
  /// A stable name for the reason within the check, snake_case:
  /// "remapped_rows_pending", "xid_79", "fabric_manager_not_running"...
  std::string reason;
  int gpu = -1;           // the GPU's index; -1 for a host-wide finding
  std::string bus_id;     // as read, when the GPU has no index (an Xid line)
  std::string detail;     // "2 remapped rows pending"
  std::string next_step;  // "reset the GPU before the rollout"
  FindingSeverity severity = FindingSeverity::kBlock;
};

/// "GPU 3: 2 remapped rows pending: reset the GPU before the rollout";
/// "fabric manager not running on an NVSwitch system: start
/// nvidia-fabricmanager" for a host-wide one; "GPU 0000:3b:00: ..." when
/// only the bus id is known.
std::string FindingText(const ReadinessFinding& finding);

/// True when any finding blocks.
bool AnyBlocking(const std::vector<ReadinessFinding>& findings);

}  // namespace fleetreap
