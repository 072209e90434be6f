// CommandSupport (command_support.h): the logger, the interrupt flag and the
// one-line failures the commands share.
#include "command_support.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/report/redaction.h"
#include "fleetreap/report/terminal.h"
#include "fleetreap/runner/host_cleaner.h"

namespace fleetreap {
namespace {

std::atomic<bool> g_stop_requested{false};

void OnInterrupt(int) { g_stop_requested.store(true); }

}  // namespace

const char kLogPattern[] = "fleetreap: %^%l%$: %v";

void SetUpLogging(const Options& options) {
  // The level's colour follows --color and NO_COLOR as the report's does.
  auto logger = spdlog::stderr_color_mt("fleetreap", ShouldUseColorFor(stderr, options.color)
                                                         ? spdlog::color_mode::always
                                                         : spdlog::color_mode::never);
  logger->set_pattern(kLogPattern);
  spdlog::level::level_enum level = spdlog::level::warn;
  if (options.quiet) level = spdlog::level::err;
  if (options.verbosity == 1) level = spdlog::level::info;
  if (options.verbosity >= 2) level = spdlog::level::debug;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

const std::atomic<bool>* InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  // A hangup (the operator's SSH session or terminal gone) stops the run as
  // Ctrl-C does, instead of ending it in the middle of a ladder; a closed
  // stdout or stderr makes writes fail (EPIPE) instead of ending it.
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal_number, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return &g_stop_requested;
}

int FailUsage(const std::string& message) {
  std::fprintf(stderr, "fleetreap: %s\n", message.c_str());
  return kExitUsage;
}

int ExitCodeForLoadError(const Status& status) {
  std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
  return status.kind() == ErrorKind::kUsage ? kExitUsage : kExitDataErr;
}

HostCleanerFunction CleanerFor(bool redact) {
  return [redact](Transport& transport, const HostJob& job) {
    HostReport host = CleanHost(transport, job);
    if (redact) RedactHostReport(&host);
    return host;
  };
}

}  // namespace fleetreap
