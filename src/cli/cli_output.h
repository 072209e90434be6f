// CliOutput: what the command lines of a run and of `fleetreap merge`
// share: the width of --help, the report flags (--json, --junit,
// --summary-md, --failed-hosts, --drain-reasons, --color) and their checks,
// and the check that a flag's file can be read. Part of the Cli module
// (cli.h), internal to src/; pure apart from CheckReadableFile;
// thread-compatible.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "fleetreap/cli/options.h"

namespace fleetreap {

/// Every options group of --help is laid out for this many columns, its
/// flag column at most half of it: po::options_description(title,
/// kHelpWidth, kHelpWidth / 2).
constexpr unsigned kHelpWidth = 80;

/// "text" without the spaces that Program_options leaves at the end of the
/// lines it wraps.
std::string WithoutTrailingSpaces(const std::string& text);

/// Adds the report flags through "add" (an options group's add_options()),
/// writing into "o".
void AddReportFlags(boost::program_options::options_description_easy_init add, Options* o);

/// "" when the report flags of "o" are consistent; else one line:
/// "--color: expected auto, always or never, got \"pink\"", "only one of
/// --json, --junit, --summary-md, --failed-hosts, --drain-reasons can be '-'".
std::string CheckReportFlags(const Options& o);

/// "" when "path" (the value of --"flag") can be opened and read; else one
/// line naming the flag, the file and the system's words:
/// "--identity: cannot read \"/k/id\": No such file or directory"; a
/// directory is "Is a directory". Opens the file and reads nothing.
std::string CheckReadableFile(const std::string& flag, const std::string& path);

/// Ansible's spellings of fleetreap's flags, as Ansible users type them, in
/// fleetreap's: --private-key[=FILE] is --identity[=FILE], -C and --check are
/// --dry-run; any other word is returned as it is.
std::string FleetreapSpelling(const std::string& word);

}  // namespace fleetreap
