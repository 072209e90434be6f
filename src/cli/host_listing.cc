#include "fleetreap/cli/host_listing.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fleetreap/cli/wiring.h"
#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/report/report_files.h"

namespace fleetreap {

namespace {

std::string OrDash(const std::string& s) { return s.empty() ? std::string("-") : s; }

std::string Keys(const SshTransportOptions& ssh) {
  std::string keys;
  for (const std::string& key : ssh.identity_files) keys += (keys.empty() ? "" : ",") + key;
  return keys;
}

}  // namespace

std::vector<ListedHost> ListedHostsFor(const FleetPlanSet& set, const Options& options) {
  std::vector<ListedHost> hosts;
  for (const FleetPlan& plan : set.plans)
    hosts.push_back({plan.host, SshOptionsFor(plan.host, options)});
  return hosts;
}

std::string FormatHostListVerbose(const std::vector<ListedHost>& hosts) {
  if (hosts.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "ADDRESS", "PORT", "USER", "BECOME", "KEY", "PLAYBOOK"}};
  for (const ListedHost& h : hosts) {
    rows.push_back({h.host.name, h.ssh.address, std::to_string(h.ssh.port), OrDash(h.ssh.user),
                    h.host.become ? "sudo" : "-", OrDash(Keys(h.ssh)), OrDash(h.host.playbook)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (c == 2) cell.insert(0, width[c] - cell.size(), ' ');  // ports right-aligned
      line += cell;
      if (c + 1 < row.size()) line += std::string(width[c] - cell.size() + 2, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

std::string FormatHostListJson(const std::vector<ListedHost>& hosts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
  };
  for (const ListedHost& h : hosts) {
    const std::vector<std::string>& keys = h.ssh.identity_files;
    list.push_back({{"name", h.host.name},
                    {"address", h.ssh.address},
                    {"port", h.ssh.port},
                    {"user", or_null(h.ssh.user)},
                    {"key_file", or_null(keys.empty() ? std::string() : keys[0])},
                    {"key_files", keys},
                    {"become", h.host.become},
                    {"playbook", or_null(h.host.playbook)},
                    {"groups", h.host.groups},
                    {"source", h.host.source}});
  }
  return list.dump(2) + "\n";
}

std::string HostListingFor(const FleetPlanSet& set, const Options& options) {
  if (!options.json.empty()) return FormatHostListJson(ListedHostsFor(set, options));
  if (options.verbosity > 0) return FormatHostListVerbose(ListedHostsFor(set, options));
  std::vector<Host> hosts;
  for (const ListedHost& listed : ListedHostsFor(set, options)) {
    Host host = listed.host;
    host.address = listed.ssh.address;
    host.port = listed.ssh.port;
    host.user = listed.ssh.user;
    hosts.push_back(std::move(host));
  }
  return FormatHostList(hosts);
}

bool WriteHostListing(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  // As a report: a new 0600 file renamed into place, never through a link.
  Status status = WriteReportFile(path, text, stdout);
  if (!status.ok()) std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
  return status.ok();
}

}  // namespace fleetreap
