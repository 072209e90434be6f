#include "fleetreap/report/failed_hosts.h"

namespace fleetreap {

std::vector<std::string> FailedHostNames(const RunReport& report) {
  std::vector<std::string> names;
  for (const HostReport& host : report.hosts) {
    if (host.status != HostStatus::kClean) names.push_back(host.name);
  }
  for (const HostWithoutResult& host : HostsWithoutResult(report)) names.push_back(host.name);
  return names;
}

std::string RenderFailedHosts(const RunReport& report) {
  std::string out;
  for (const std::string& name : FailedHostNames(report)) out += name + "\n";
  return out;
}

}  // namespace fleetreap
