// FailedHosts: the retry list (--failed-hosts FILE), Ansible's .retry file
// for fleetreap: every selected host that is not known to be clean, so that
// `--limit @FILE` re-runs just those. Pure function; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// Names of hosts that are dirty, unreachable or failed, in report order,
/// then the hosts never started. Dirty hosts of a dry run are included: they
/// are the ones a real run has work on.
std::vector<std::string> FailedHostNames(const RunReport& report);

/// FailedHostNames one per line, each ending with '\n'; "" when every host is
/// clean (the file is still written, so a stale list never lingers).
std::string RenderFailedHosts(const RunReport& report);

}  // namespace fleetreap
