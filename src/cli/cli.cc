#include "fleetreap/cli/cli.h"

#include <boost/program_options.hpp>
#include <map>
#include <sstream>
#include <vector>

#include "cli_flags.h"
#include "cli_output.h"
#include "fleetreap/base/duration.h"
#include "fleetreap/cli/wave_flags.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/transport/private_key_file.h"

namespace po = boost::program_options;

namespace fleetreap {
namespace {

using cli_internal::Describe;
using cli_internal::RawFlags;

// --gpus and --cgroup into "scope" (whose spare_pods the flags set); the
// source is "flags" when any of the three is given.
Status ScopeFromFlags(const std::string& gpus, const std::string& cgroup, Scope* scope) {
  if (!cgroup.empty() && cgroup[0] != '/') {
    return Status::Error(ErrorKind::kUsage,
                         "--cgroup: \"" + cgroup + "\" is not a cgroup path (/...)");
  }
  if (!gpus.empty()) {
    // "minor:LIST": device minors (the N of /dev/nvidiaN), translated to
    // nvidia-smi indexes once the host's scan has read the driver's minors.
    const std::string kMinor = "minor:";
    const bool minors = gpus.compare(0, kMinor.size(), kMinor) == 0;
    std::vector<int> list;
    Status status = ParseGpuList(minors ? gpus.substr(kMinor.size()) : gpus, "--gpus", &list);
    if (!status.ok()) return status;
    scope->gpus = list;
    scope->gpus_are_minors = minors;
  }
  scope->cgroup = cgroup;
  if (scope->gpus || !scope->cgroup.empty() || scope->spare_pods) scope->source = "flags";
  return Status::Ok();
}

// "-qv" is "-q -v": a word of short switches (flags that take no value) is
// split into one word per switch, so that its -v is counted and checked as a
// separate -v is. Other words ("-f8", "--quiet") are left to Program_options.
std::vector<std::string> SplitSwitchClusters(const po::options_description& desc, int argc,
                                             const char* const* argv) {
  std::string switches;
  for (const auto& option : desc.options()) {
    const std::string name =
        option->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (name.size() == 2 && name[0] == '-' && name[1] != '-' &&
        option->semantic()->max_tokens() == 0) {
      switches += name[1];
    }
  }
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' &&
        arg.find_first_not_of(switches, 1) == std::string::npos) {
      for (size_t c = 1; c < arg.size(); ++c) words.push_back(std::string("-") + arg[c]);
    } else {
      words.push_back(arg);
    }
  }
  return words;
}

// Words are matched whole: no unambiguous prefix ("--list" is not
// --list-hosts), so that a flag added later cannot change what a script's
// word means.
constexpr int kParserStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

bool ParseFlagDuration(const std::string& flag, const std::string& text,
                       std::chrono::milliseconds* out, std::string* error) {
  if (ParseDuration(text, out)) return true;
  *error = "--" + flag + ": invalid duration \"" + text + "\" (use e.g. 10s, 500ms, 2m)";
  return false;
}

// The words of the command line stored into "vm" (and through it the
// Options and RawFlags "desc" was made over), -v counted into "o"
// (-vv is -v -v; Program_options has no counting flag). "" or the usage
// error's one line.
std::string StoreFlags(const po::options_description& desc, int argc, const char* const* argv,
                       Options* o, po::variables_map* vm) {
  std::vector<std::string> args;
  for (const std::string& arg : SplitSwitchClusters(desc, argc, argv)) {
    if (arg == "--verbose" || arg == "-v") {
      ++o->verbosity;
    } else {
      args.push_back(FleetreapSpelling(arg));
    }
  }
  try {
    po::parsed_options parsed =
        po::command_line_parser(args).options(desc).style(kParserStyle).run();
    // Without this, Program_options would drop a stray word silently
    // ("--ssh-config my_config" would ignore my_config).
    for (const std::string& word :
         po::collect_unrecognized(parsed.options, po::include_positional)) {
      return "unexpected argument '" + word + "' (every value belongs to a flag)";
    }
    po::store(parsed, *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return e.what();
  }
  return "";
}

// --fanout, --forks and --retries. "" or the usage error's one line.
std::string CheckFanoutFlags(const RawFlags& raw, Options* o) {
  if (raw.fanout != "fibers" && raw.fanout != "threads") {
    return "--fanout: expected fibers or threads, got \"" + raw.fanout + "\"";
  }
  o->fanout_threads = raw.fanout == "threads";
  const int max_forks = o->fanout_threads ? 4096 : 100000;
  if (o->forks < 1 || o->forks > max_forks) {
    return "--forks: must be 1 to " + std::to_string(max_forks) + ", got " +
           std::to_string(o->forks) + (o->fanout_threads ? " (--fanout threads)" : "");
  }
  if (o->retries < 0 || o->retries > 10) {
    return "--retries: must be 0 to 10, got " + std::to_string(o->retries);
  }
  return "";
}

// The durations, the host key policy and the fan-out's flags, checked and
// converted into "o". "" or the usage error's one line.
std::string CheckConnectionFlags(const RawFlags& raw, Options* o) {
  std::string error;
  if (!ParseFlagDuration("connect-timeout", raw.connect_timeout, &o->connect_timeout, &error) ||
      !ParseFlagDuration("command-timeout", raw.command_timeout, &o->command_timeout, &error) ||
      !ParseFlagDuration("host-timeout", raw.host_timeout, &o->host_timeout, &error) ||
      !ParseFlagDuration("deadline", raw.deadline, &o->deadline, &error)) {
    return error;
  }
  if (o->connect_timeout.count() == 0 || o->command_timeout.count() == 0) {
    return "--connect-timeout and --command-timeout must be above zero";
  }
  if (raw.host_key_policy == "strict") {
    o->host_key_policy = HostKeyPolicy::kStrict;
  } else if (raw.host_key_policy == "accept-new") {
    o->host_key_policy = HostKeyPolicy::kAcceptNew;
  } else if (raw.host_key_policy == "off") {
    o->host_key_policy = HostKeyPolicy::kOff;
  } else {
    return "--host-key-policy: expected strict, accept-new or off, got \"" + raw.host_key_policy +
           "\"";
  }
  return CheckFanoutFlags(raw, o);
}

// Which hosts, and the flags that go with them: --local against --hosts,
// --limit, the scope. "" or the usage error's one line.
std::string CheckSelectionFlags(const RawFlags& raw, Options* o) {
  if (o->local && (!o->hosts.empty() || !o->nodes.empty())) {
    return "--local and --hosts or --nodes cannot be used together";
  }
  if (!o->local && o->hosts.empty() && o->nodes.empty()) {
    return "no hosts: give --hosts FILE, --nodes NODESET (or --local for this machine)";
  }
  if (o->local && !o->limit.empty()) return "--limit needs --hosts";
  Status scoped = ScopeFromFlags(raw.gpus, raw.cgroup, &o->scope);
  if (!scoped.ok()) return scoped.message();
  // Checked before any host is contacted: a key that cannot be read is an
  // error even where the inventory's key would be accepted first.
  if (o->identity.empty()) return "";
  std::string unreadable = CheckReadableFile("identity", o->identity);
  if (!unreadable.empty()) return unreadable;
  const std::string mode = PrivateKeyModeProblem(o->identity);
  return mode.empty() ? "" : "--identity " + o->identity + ": " + mode;
}

// Every check of a run's flags, in the order their errors are reported.
std::string CheckRunFlags(const RawFlags& raw, Options* o) {
  std::string error = CheckConnectionFlags(raw, o);
  if (!error.empty()) return error;
  if (o->quiet && o->verbosity > 0) return "--quiet and -v cannot be used together";
  error = CheckReportFlags(*o);
  if (error.empty()) error = CheckWaveFlags(*o);
  if (error.empty()) error = CheckSelectionFlags(raw, o);
  return error;
}

}  // namespace

CliResult ParseCommandLine(int argc, const char* const* argv) {
  if (argc > 1 && std::string(argv[1]) == "merge") {
    return ParseMergeCommandLine(argc - 1, argv + 1);
  }
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    return ParseSweepCommandLine(argc - 1, argv + 1);
  }
  CliResult result;
  RawFlags raw;
  po::options_description desc = Describe(&result.options, &raw);
  po::variables_map vm;
  result.action = CliAction::kUsageError;
  result.error = StoreFlags(desc, argc, argv, &result.options, &vm);
  if (!result.error.empty()) return result;
  if (vm.count("help")) {
    result.action = CliAction::kHelp;
  } else if (vm.count("version")) {
    result.action = CliAction::kVersion;
  } else if (result.options.show_config) {
    result.action = CliAction::kShowConfig;
  } else {
    result.error = CheckRunFlags(raw, &result.options);
    if (result.error.empty()) result.action = CliAction::kRun;
  }
  return result;
}

std::map<std::string, std::vector<std::string>> GivenFlags(int argc, const char* const* argv) {
  std::map<std::string, std::vector<std::string>> given;
  Options options;
  RawFlags raw;
  po::options_description desc = Describe(&options, &raw);
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const bool verbose = arg == "--verbose" || (arg.size() >= 2 && arg[0] == '-' &&
                                                arg.find_first_not_of('v', 1) == std::string::npos);
    if (!verbose) args.push_back(FleetreapSpelling(arg));
  }
  try {
    po::parsed_options parsed =
        po::command_line_parser(args).options(desc).style(kParserStyle).allow_unregistered().run();
    for (const po::option& option : parsed.options) {
      if (option.unregistered || option.string_key.empty()) continue;
      auto& values = given[option.string_key];
      values.insert(values.end(), option.value.begin(), option.value.end());
    }
  } catch (const po::error&) {
    given.clear();
  }
  return given;
}

std::string HelpText() {
  Options options;
  RawFlags raw;
  std::ostringstream text;
  text << "Usage: fleetreap --hosts INVENTORY [options]\n"
          "       fleetreap --local [options]\n"
          "       fleetreap merge [options] REPORT.json...   (fleetreap merge --help)\n"
          "       fleetreap sweep --interval 10m [options]   (fleetreap sweep --help)\n\n"
          "Empties every GPU of every selected host: stops units, signals the\n"
          "processes that hold /dev/nvidia* (TERM, then KILL), re-scans for\n"
          "stragglers, removes /dev/shm leftovers and verifies with nvidia-smi.\n"
          "Protected daemons (nvidia-persistenced, nv-hostengine, ...) are never\n"
          "signalled.\n"
       << Describe(&options, &raw)
       << "\nExit status:\n"
          "  0   every selected host is clean\n"
          "  1   (bit) at least one reached host is not clean\n"
          "  2   (bit) at least one host was unreachable or failed; 3 = both\n"
          "  4   (bit) --max-fail stopped the waves (with bit 2: hosts not started)\n"
          "  64  usage error (flags)\n"
          "  65  invalid inventory or playbook, or a report merge cannot read\n"
          "  70  internal error\n"
          "  78  a config file or ansible.cfg cannot be read\n"
          "  A dry run exits 0 unless a host could not be inspected.\n"
          "\nPlaybooks (default, inspect, reset, vllm) ship in\n"
          "  /usr/share/fleetreap/playbooks (the .deb; PREFIX/share/fleetreap/playbooks\n"
          "  after cmake --install); --playbook NAME.yaml finds them by name.\n"
          "\nExamples:\n"
          "  fleetreap --hosts inventory.yaml --list-hosts\n"
          "  fleetreap --hosts inventory.yaml --limit 'h200:&rack_b1' --dry-run\n"
          "  fleetreap --hosts inventory.yaml --json report.json --failed-hosts failed.txt\n"
          "  fleetreap --hosts inventory.yaml --limit @failed.txt    # re-run those\n"
          "  fleetreap --hosts inventory.yaml --canary 1 --waves 10%,100% --max-fail 2\n"
          "  fleetreap --local --cgroup /system.slice/slurmstepd.scope/job_42\n"
          "  fleetreap merge reports/*.json --junit junit.xml\n"
          "\nSee fleetreap(1) and fleetreap-merge(1) for more (man fleetreap).\n";
  return WithoutTrailingSpaces(text.str());
}

}  // namespace fleetreap
