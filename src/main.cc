// fleetreap's entry point: reads the defaults (the environment, once, and
// the config files), parses the command line and hands it to its command
// (cli/commands.h), whose exit code is the process's.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/cli/cli.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/config_defaults.h"
#include "fleetreap/cli/wiring.h"

namespace fleetreap {
namespace {

int RunAction(const CliResult& cli, const Environment& env) {
  try {
    if (cli.action == CliAction::kMerge) return MergeCommand(cli.options);
    if (cli.action == CliAction::kSweep) return SweepCommand(cli.options, env);
    return RunCommand(cli.options, env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetreap: internal error: %s\n", e.what());
    return kExitSoftware;
  }
}

int Main(int argc, char** argv) {
  ConfigPlaces places;
  places.env = ProcessEnvironment();
  char cwd[4096] = {};
  if (getcwd(cwd, sizeof cwd - 1) != nullptr) places.cwd = cwd;
  std::vector<Setting> defaults;
  std::vector<std::string> config_notes;
  const Status config = LoadDefaults(places, &defaults, &config_notes);
  const CliResult cli =
      ParseCommandLineWithDefaults(argc, argv, config.ok() ? defaults : std::vector<Setting>());
  const bool runs = cli.action == CliAction::kRun || cli.action == CliAction::kMerge ||
                    cli.action == CliAction::kSweep;
  // A broken default stops a run, not --help, --version or merge.
  if (!config.ok() && cli.action != CliAction::kHelp && cli.action != CliAction::kVersion &&
      cli.action != CliAction::kMerge) {
    std::fprintf(stderr, "fleetreap: %s\n", config.message().c_str());
    return kExitConfig;
  }
  if (!runs) return AnswerCommand(cli, argc, argv, defaults, config_notes);
  return RunAction(cli, places.env);
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) { return fleetreap::Main(argc, argv); }
