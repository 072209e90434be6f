#include "fleetreap/cli/host_listing.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fleetreap {

Host EffectiveHost(const Host& host, const Options& options) {
  Host h = host;
  if (h.user.empty()) h.user = options.user;
  if (h.identity_file.empty()) h.identity_file = options.identity;
  if (options.become) h.become = true;
  if (!options.playbook.empty()) h.playbook = options.playbook;
  return h;
}

std::string FormatHostListVerbose(const std::vector<Host>& hosts) {
  if (hosts.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "ADDRESS", "PORT", "USER", "BECOME", "KEY", "PLAYBOOK"}};
  for (const Host& h : hosts) {
    auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    rows.push_back({h.name, h.address, std::to_string(h.port), or_dash(h.user),
                    h.become ? "sudo" : "-", or_dash(h.identity_file), or_dash(h.playbook)});
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

std::string FormatHostListJson(const std::vector<Host>& hosts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
  };
  for (const Host& h : hosts) {
    list.push_back({{"name", h.name},
                    {"address", h.address},
                    {"port", h.port},
                    {"user", or_null(h.user)},
                    {"key_file", or_null(h.identity_file)},
                    {"become", h.become},
                    {"playbook", or_null(h.playbook)},
                    {"groups", h.groups},
                    {"source", h.source}});
  }
  return list.dump(2) + "\n";
}

bool WriteHostListing(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "fleetreap: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno ? errno : EIO));
    return false;
  }
  return true;
}

}  // namespace fleetreap
