// fleetreap's entry point: parses flags and wires the modules together.
#include <cstdio>

#include "fleetreap/cli.h"
#include "fleetreap/version.h"

int main(int argc, char** argv) {
  using namespace fleetreap;  // NOLINT: main only wires
  const CliResult cli = ParseCommandLine(argc, argv);
  switch (cli.action) {
    case CliAction::kHelp:
      std::fputs(HelpText().c_str(), stdout);
      return kExitClean;
    case CliAction::kVersion:
      std::printf("fleetreap %s\n", FLEETREAP_VERSION);
      return kExitClean;
    case CliAction::kUsageError:
      std::fprintf(stderr, "fleetreap: %s\nTry 'fleetreap --help' for more information.\n",
                   cli.error.c_str());
      return kExitUsage;
    case CliAction::kRun:
      break;
  }
  std::fprintf(stderr, "fleetreap: not wired yet\n");
  return kExitSoftware;
}
