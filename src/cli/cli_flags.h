// The command line's flag tables: each section of --help ("Selection",
// "Connection", ...) as a Boost.Program_options description bound to the
// Options it fills, and the flags whose text is checked after parsing
// (RawFlags). Private to src/cli/ (cli.cc parses, prints --help). Each call
// builds new descriptions; thread-compatible.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "fleetreap/cli/options.h"

namespace fleetreap {
namespace cli_internal {

/// Flags kept as text by the tables and read into Options by cli.cc's checks.
struct RawFlags {
  std::string connect_timeout = "10s";
  std::string command_timeout = "60s";
  std::string host_timeout = "0";
  std::string deadline = "0";
  std::string host_key_policy = "strict";
  std::string fanout = "fibers";
  std::string gpus;    // --gpus LIST
  std::string cgroup;  // --cgroup PATH
};

/// Every section of --help, in its order, bound to "o" and "raw".
boost::program_options::options_description Describe(Options* o, RawFlags* raw);

}  // namespace cli_internal
}  // namespace fleetreap
