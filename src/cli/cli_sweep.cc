// The command line of `fleetreap sweep`: the run's own flags, plus
// --interval and --rounds. Part of the Cli module (cli.h); pure apart from
// what ParseCommandLine reads; thread-compatible.
#include <sstream>

#include "cli_output.h"
#include "fleetreap/base/duration.h"
#include "fleetreap/base/text.h"
#include "fleetreap/cli/cli.h"
#include "fleetreap/cli/config_defaults.h"
#include "fleetreap/cli/wave_flags.h"

namespace fleetreap {
namespace {

// Takes "--NAME VALUE" or "--NAME=VALUE" at "*i"; true when it was "name".
bool TakeValue(const std::vector<std::string>& args, size_t* i, const std::string& name,
               std::string* value, bool* missing) {
  const std::string& arg = args[*i];
  const std::string flag = "--" + name;
  if (arg.rfind(flag + "=", 0) == 0) {
    *value = arg.substr(flag.size() + 1);
    return true;
  }
  if (arg != flag) return false;
  if (*i + 1 >= args.size()) {
    *missing = true;
    return true;
  }
  *value = args[++*i];
  return true;
}

// A sweep's command line taken apart: its own flags' values, and the rest
// for the run's parser (with a leading program name).
struct SweepWords {
  std::string interval = "10m";
  std::string rounds = "0";
  std::vector<std::string> rest = {"fleetreap"};
};

// Takes --interval and --rounds out of the words. False, with "result" said
// (help, or the usage error), when there is nothing more to parse.
bool SplitSweepWords(int argc, const char* const* argv, SweepWords* words, CliResult* result) {
  std::vector<std::string> args = {"fleetreap"};
  for (size_t i = 1; i < static_cast<size_t>(argc); ++i) args.emplace_back(argv[i]);
  for (size_t i = 1; i < args.size(); ++i) {
    bool missing = false;
    if (TakeValue(args, &i, "interval", &words->interval, &missing) ||
        TakeValue(args, &i, "rounds", &words->rounds, &missing)) {
      if (missing) {
        result->error = "sweep: " + args[i] + " needs a value";
        return false;
      }
      continue;
    }
    if (args[i] == "--help" || args[i] == "-h") {
      result->action = CliAction::kHelp;
      return false;
    }
    words->rest.push_back(args[i]);
  }
  return true;
}

// --interval and --rounds into "o", and the run flags a sweep refuses. ""
// or the usage error's one line.
std::string CheckSweepFlags(const SweepWords& words, Options* o) {
  if (!ParseDuration(words.interval, &o->sweep_interval) || o->sweep_interval.count() < 1000) {
    return "sweep: --interval: \"" + words.interval + "\" is not a duration of 1s or more";
  }
  if (!ParseDigits(words.rounds, 6, &o->sweep_rounds)) {
    return "sweep: --rounds: \"" + words.rounds + "\" is not a count (0: until SIGTERM)";
  }
  if (WantsWaves(*o)) {
    return "sweep: changes nothing, so it runs no waves (--canary, --waves, --wave-by, "
           "--max-fail)";
  }
  return "";
}

}  // namespace

CliResult ParseSweepCommandLine(int argc, const char* const* argv,
                                const std::vector<Setting>& defaults) {
  CliResult result;
  result.action = CliAction::kUsageError;
  SweepWords words;
  if (!SplitSweepWords(argc, argv, &words, &result)) return result;
  std::vector<const char*> rest;
  for (const std::string& word : words.rest) rest.push_back(word.c_str());
  CliResult run =
      ParseCommandLineWithDefaults(static_cast<int>(rest.size()), rest.data(), defaults);
  if (run.action == CliAction::kUsageError) {
    run.error = "sweep: " + run.error;
    return run;
  }
  if (run.action != CliAction::kRun) {
    result.error = "sweep: --list-hosts, --show-config and --version are not sweep flags";
    return result;
  }
  result.error = CheckSweepFlags(words, &run.options);
  if (!result.error.empty()) return result;
  run.options.dry_run = true;
  run.action = CliAction::kSweep;
  return run;
}

std::string SweepHelpText() {
  std::ostringstream text;
  text << "Usage: fleetreap sweep [--interval DUR] [--rounds N] --hosts INV [options]\n"
          "       fleetreap sweep [--interval DUR] [--rounds N] --local [options]\n\n"
          "Inspects the selected hosts every DUR and rewrites the reports each round\n"
          "(--metrics, --json, --junit, --summary-md, --failed-hosts, --drain-reasons):\n"
          "GPU memory held with no owner, /dev/shm leftovers, GPUs not ready. It never\n"
          "changes a host: every playbook is cut to the steps that read (inspect, the\n"
          "/dev/shm listing) and the run is a dry run. One line per round on stderr;\n"
          "SIGTERM or SIGINT ends it after the round in progress, its reports written.\n\n"
          "Sweep options:\n"
          "  --interval DUR   from one round's start to the next (default 10m, >= 1s)\n"
          "  --rounds N       stop after N rounds (default 0: until SIGTERM or SIGINT)\n\n"
          "Every run option of fleetreap --help applies, except the wave flags.\n"
          "\nExit status: 0 once it ends on a signal or after --rounds (findings are in\n"
          "the reports, not the status), 64 usage error, 65 invalid inventory or\n"
          "playbook, 70 a report that could not be written.\n"
          "\nExample:\n"
          "  fleetreap sweep --interval 10m --hosts inventory.yaml \\\n"
          "    --metrics /var/lib/node_exporter/textfile/fleetreap.prom\n"
          "\nSee SWEEP in fleetreap(1) for more (man fleetreap).\n";
  return WithoutTrailingSpaces(text.str());
}

}  // namespace fleetreap
