// HostCleaner: runs a playbook's escalation on one connected host and returns
// the host's report. It is the runner that does the I/O for the decisions of
// escalation.h. One call per host; uses only the Transport it is given.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/host.h"
#include "fleetreap/playbook.h"
#include "fleetreap/report.h"
#include "fleetreap/transport.h"

namespace fleetreap {

struct HostJob {
  const Host* host = nullptr;          // must outlive the call
  const Playbook* playbook = nullptr;  // must outlive the call
  bool dry_run = false;
  bool become = false;                 // run commands under sudo -n
  std::chrono::milliseconds command_timeout{60000};
  /// Hard end for this host (--host-timeout, --deadline); max() for none.
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  std::vector<std::string> extra_protect;  // --protect
};

/// Runs the escalation on "transport", which is already connected. Fills every
/// field of the report except name, address, port and attempts, which the
/// caller sets. Never throws; transport failures become the report's status.
HostReport CleanHost(Transport& transport, const HostJob& job);

}  // namespace fleetreap
