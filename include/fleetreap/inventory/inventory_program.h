// InventoryProgram: the door through which the inventory loader runs the
// programs an inventory source can be, an executable inventory script
// (`SCRIPT --list`, `SCRIPT --host NAME`) and `ansible-inventory` for an
// inventory plugin file. The inventory area runs nothing itself: the runner
// implements this with a local subprocess (runner/inventory_program_runner.h),
// tests with a fake. One object per load; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

class InventoryProgram {
 public:
  virtual ~InventoryProgram() = default;

  /// Runs "argv" (argv[0] a path, or a command looked up in PATH) on this
  /// machine with no stdin, bounded in time, and fills "*out" with its
  /// stdout. kInvalidInput when it cannot start, runs too long or exits
  /// non-zero, naming the command and quoting its stderr, e.g.
  ///   inv/dyn.py --list: exit 1: "Traceback (most recent call last): ..."
  virtual Status Run(const std::vector<std::string>& argv, std::string* out) = 0;

  /// Whether "command" (a name without "/") is on PATH: ansible-inventory
  /// is optional.
  virtual bool Available(const std::string& command) = 0;
};

}  // namespace fleetreap
