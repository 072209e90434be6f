// CommandSupport: what the commands of commands.h share: the process's
// logger, the SIGINT/SIGTERM/SIGHUP flag, the one-line failures before any host is
// touched, and the host cleaner that redacts. Part of the Commands module,
// internal to src/. SetUpLogging and InstallInterruptHandler change
// process-wide state (call them from one thread); the rest is thread-safe.
#pragma once

#include <atomic>
#include <string>

#include "fleetreap/base/status.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/runner/fleet_runner.h"

namespace fleetreap {

/// spdlog's pattern for every line fleetreap logs: "fleetreap: LEVEL: text".
extern const char kLogPattern[];

/// Makes the default logger: stderr, coloured as --color and NO_COLOR say,
/// at the level --quiet and -v ask for.
void SetUpLogging(const Options& options);

/// Installs the handler of SIGINT, SIGTERM and SIGHUP and returns the flag
/// it sets; SIGPIPE is ignored. The first signal asks the run to start no
/// new host and to stop the hosts in flight at their next step boundary
/// (reported interrupted), then the reports are written; the handler is
/// reset, so a second one ends the process.
const std::atomic<bool>* InstallInterruptHandler();

/// Prints "fleetreap: MESSAGE" on stderr and returns kExitUsage.
int FailUsage(const std::string& message);

/// Prints the status's message on stderr; kExitUsage for a kUsage error,
/// else kExitDataErr (an inventory, playbook or report that cannot be used).
int ExitCodeForLoadError(const Status& status);

/// CleanHost, the host's report redacted (RedactHostReport) when "redact".
HostCleanerFunction CleanerFor(bool redact);

}  // namespace fleetreap
