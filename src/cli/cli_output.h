// CliOutput: the report flags that a run and `fleetreap merge` share
// (--json, --junit, --summary-md, --failed-hosts, --drain-reasons, --color)
// and their checks. Part of the Cli module (cli.h), internal to src/; pure;
// thread-compatible.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "fleetreap/cli/options.h"

namespace fleetreap {

/// Adds the report flags through "add" (an options group's add_options()),
/// writing into "o".
void AddReportFlags(boost::program_options::options_description_easy_init add, Options* o);

/// "" when the report flags of "o" are consistent; else one line:
/// "--color: expected auto, always or never, got \"pink\"", "only one of
/// --json, --junit, --summary-md, --failed-hosts, --drain-reasons can be '-'".
std::string CheckReportFlags(const Options& o);

}  // namespace fleetreap
