// InventoryProgramRunner: the InventoryProgram that fleetreap passes to the
// inventory loader. It runs an inventory script or ansible-inventory on this
// machine through a LocalTransport (a process group of its own, stopped with
// TERM then KILL past the time bound), with no stdin, stdout kept up to
// 256 MiB (a dynamic inventory of many thousand hosts), and turns a failure
// into one message that names the command and quotes its stderr. Used by one
// thread; not thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/inventory/inventory_program.h"
#include "fleetreap/transport/local_transport.h"

namespace fleetreap {

class InventoryProgramRunner : public InventoryProgram {
 public:
  /// Each program may run for "timeout".
  explicit InventoryProgramRunner(std::chrono::milliseconds timeout);

  /// kInvalidInput, e.g.
  ///   inv/dyn.py --list: exit 1: "Traceback (most recent call last):..."
  ///   inv/dyn.py --list: still running after 60 s, stopped
  Status Run(const std::vector<std::string>& argv, std::string* out) override;
  bool Available(const std::string& command) override;

 private:
  std::chrono::milliseconds timeout_;
  LocalTransport transport_;
};

}  // namespace fleetreap
