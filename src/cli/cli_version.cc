// The --version text. Part of the Cli module (cli.h); pure; thread-safe.
#include <string>

#include "fleetreap/cli/cli.h"
#include "fleetreap/version.h"

namespace fleetreap {
namespace {

std::string Library(const char* name, const char* version) {
  return std::string(name) + " " + (version[0] != '\0' ? version : "(version unknown)");
}

}  // namespace

std::string VersionText() {
  return std::string("fleetreap ") + FLEETREAP_VERSION + "\n" + "commit " + kGitCommit + "\n" +
         "built with " + Library("libssh", FLEETREAP_LIBSSH_VERSION) + ", " +
         Library("yaml-cpp", FLEETREAP_YAML_CPP_VERSION) + ", " +
         Library("nlohmann/json", FLEETREAP_NLOHMANN_JSON_VERSION) + ",\n" + "           " +
         Library("spdlog", FLEETREAP_SPDLOG_VERSION) + ", " +
         Library("Boost", FLEETREAP_BOOST_VERSION) + "\n";
}

}  // namespace fleetreap
