// AnswerCommand (commands.h): the actions that run nothing: --help (the
// run's, merge's or sweep's), --version, --show-config and a usage error.
#include <cstdio>
#include <string>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/config_defaults.h"

namespace fleetreap {
namespace {

std::string HelpFor(int argc, const char* const* argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "merge") return MergeHelpText();
  if (command == "sweep") return SweepHelpText();
  return HelpText();
}

}  // namespace

int AnswerCommand(const CliResult& cli, int argc, const char* const* argv,
                  const std::vector<Setting>& defaults,
                  const std::vector<std::string>& config_notes) {
  switch (cli.action) {
    case CliAction::kHelp: std::fputs(HelpFor(argc, argv).c_str(), stdout); return kExitClean;
    case CliAction::kVersion: std::fputs(VersionText().c_str(), stdout); return kExitClean;
    case CliAction::kShowConfig:
      for (const std::string& note : config_notes) {
        std::fprintf(stderr, "fleetreap: %s\n", note.c_str());
      }
      std::fputs(FormatShowConfig(argc, argv, defaults).c_str(), stdout);
      return kExitClean;
    case CliAction::kUsageError:
    case CliAction::kRun:
    case CliAction::kMerge:
    case CliAction::kSweep: break;
  }
  std::fprintf(stderr, "fleetreap: %s\nTry 'fleetreap --help' for more information.\n",
               cli.error.c_str());
  return kExitUsage;
}

}  // namespace fleetreap
