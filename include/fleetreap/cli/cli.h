// Cli: turns argv into Options with Boost.Program_options, and owns the
// --help and --version texts. The exit codes are in base/exit_code.h. Pure
// apart from reading argv and checking that --identity can be read;
// thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/base/status.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/config/config_file.h"

namespace fleetreap {

enum class CliAction { kRun, kMerge, kSweep, kHelp, kVersion, kShowConfig, kUsageError };

struct CliResult {
  CliAction action = CliAction::kRun;
  Options options;
  std::string error;  // one line, for kUsageError
};

/// Parses the command line. Never throws, never exits; unknown or malformed
/// flags, and an --identity file that cannot be read, come back as
/// kUsageError with a one-line message.
CliResult ParseCommandLine(int argc, const char* const* argv);

/// The flags "argv" gives, by long name ("forks", "hosts"), with their values
/// in order (none for a switch); -v is not counted. Empty when argv does not
/// parse (ParseCommandLine says why).
std::map<std::string, std::vector<std::string>> GivenFlags(int argc, const char* const* argv);

/// The full --help text: the flags grouped, laid out for 80 columns, then
/// the exit status, examples and a pointer to the man page.
std::string HelpText();

/// The --version text: "fleetreap VERSION" on the first line, then the
/// commit it was built from ("unknown" from a release tarball) and the
/// versions of the libraries it was built with. In cli_version.cc.
std::string VersionText();

/// `fleetreap merge [output flags] REPORT.json...` (argv[0] is "merge"):
/// kMerge with options.merge_reports, --expect and the output flags set;
/// kHelp for --help; kUsageError without a report or with any other flag.
/// In cli_merge.cc.
CliResult ParseMergeCommandLine(int argc, const char* const* argv);

/// merge's --help text.
std::string MergeHelpText();

/// `fleetreap sweep [--interval DUR] [--rounds N] [run flags]` (argv[0] is
/// "sweep"): the run's flags as ParseCommandLine takes them, plus the
/// sweep's; kSweep with options.dry_run set (a sweep never changes a host),
/// kHelp for --help, kUsageError for a bad flag or a wave flag (a sweep
/// changes nothing, so it has no waves). "defaults" (config_defaults.h)
/// apply under the run's flags as for a run. In cli_sweep.cc.
CliResult ParseSweepCommandLine(int argc, const char* const* argv,
                                const std::vector<Setting>& defaults = {});

/// sweep's --help text.
std::string SweepHelpText();

}  // namespace fleetreap
