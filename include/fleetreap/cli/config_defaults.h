// ConfigDefaults: the command line under its defaults. The settings of
// config/config_file.h (FLEETREAP_* variables, the config files, Ansible's
// ansible.cfg and ANSIBLE_*) become flags for whatever the command line does
// not set itself, so a flag always wins and every value is checked by the
// one flag parser; and --show-config shows each effective setting with where
// it came from. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/cli/cli.h"
#include "fleetreap/config/config_file.h"

namespace fleetreap {

/// ParseCommandLine over "argv" plus, for each key that argv does not set,
/// the flag of its first Setting in "defaults" (highest precedence first,
/// as LoadDefaults orders them). An error caused by a default names where
/// it came from:
///   --forks: must be 1 to 100000, got 0 (from FLEETREAP_FORKS)
/// `fleetreap merge` takes no defaults.
CliResult ParseCommandLineWithDefaults(int argc, const char* const* argv,
                                       const std::vector<Setting>& defaults);

/// --show-config: one line per key of ConfigKeys(), in aligned columns: the
/// key, its effective value (a list joined with ", "), and where it came
/// from ("command line", the Setting's source, or "default").
std::string FormatShowConfig(int argc, const char* const* argv,
                             const std::vector<Setting>& defaults);

}  // namespace fleetreap
