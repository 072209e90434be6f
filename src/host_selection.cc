#include "fleetreap/host_selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "fleetreap/host_pattern.h"

namespace fleetreap {
namespace {

// A set of hosts as one flag per inventory index.
using HostSet = std::vector<char>;

Status UsageError(const std::string& term, const std::string& problem) {
  return Status::Error(ErrorKind::kUsage, "--limit \"" + term + "\": " + problem);
}

// Splits at "," and ":" outside brackets; a "~regex" or "@file" term ends
// only at ",", since ":" may be part of it.
std::vector<std::string> SplitTerms(const std::string& limit) {
  std::vector<std::string> terms;
  std::string term;
  int depth = 0;
  auto flush = [&] {
    size_t b = term.find_first_not_of(" \t");
    size_t e = term.find_last_not_of(" \t");
    if (b != std::string::npos) terms.push_back(term.substr(b, e - b + 1));
    term.clear();
  };
  for (char c : limit) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    size_t start = term.find_first_not_of(" \t!&");
    bool raw = start != std::string::npos && (term[start] == '~' || term[start] == '@');
    if (depth == 0 && (c == ',' || (c == ':' && !raw))) {
      flush();
    } else {
      term += c;
    }
  }
  flush();
  return terms;
}

class Selector {
 public:
  explicit Selector(const Inventory& inventory) : inventory_(inventory) {}

  // Adds to "set" what one term (without its "!" or "&") selects.
  // "shown" is how the term is quoted in errors.
  Status Match(const std::string& term, const std::string& shown, HostSet* set,
               int file_depth) const {
    if (term == "all" || term == "*") {
      std::fill(set->begin(), set->end(), 1);
      return Status::Ok();
    }
    if (term[0] == '@') return MatchFile(term.substr(1), shown, set, file_depth);
    if (term[0] == '~') return MatchRegex(term.substr(1), shown, set);
    std::vector<std::string> names;
    Status s = ExpandHostPattern(term, &names);
    if (!s.ok()) return UsageError(shown, s.message());
    std::vector<std::string> missing;
    for (const std::string& name : names) {
      if (!MatchName(name, set)) missing.push_back(name);
    }
    if (missing.empty()) return Status::Ok();
    if (names.size() == 1) {
      return UsageError(shown, "matches no host or group in " + inventory_.path());
    }
    return UsageError(shown, "no host or group " + FoldHostNames(missing) + " in " +
                                 inventory_.path());
  }

 private:
  void AddGroup(const std::string& group, HostSet* set) const {
    for (size_t i : *inventory_.GroupMembers(group)) (*set)[i] = 1;
  }

  bool MatchName(const std::string& name, HostSet* set) const {
    if (name.find_first_of("*?") == std::string::npos) {
      if (inventory_.GroupMembers(name)) {
        AddGroup(name, set);
        return true;
      }
      int index = inventory_.HostIndex(name);
      if (index >= 0) (*set)[index] = 1;
      return index >= 0;
    }
    bool any = false;
    for (const std::string& group : inventory_.group_names()) {
      if (fnmatch(name.c_str(), group.c_str(), 0) == 0) {
        AddGroup(group, set);
        any = true;
      }
    }
    const std::vector<Host>& hosts = inventory_.hosts();
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (fnmatch(name.c_str(), hosts[i].name.c_str(), 0) == 0) {
        (*set)[i] = 1;
        any = true;
      }
    }
    return any;
  }

  Status MatchRegex(const std::string& pattern, const std::string& shown,
                    HostSet* set) const {
    std::regex re;
    try {
      re = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return UsageError(shown, std::string("bad regular expression: ") + e.what());
    }
    auto matches = [&re](const std::string& s) {
      return std::regex_search(s, re, std::regex_constants::match_continuous);
    };
    bool any = false;
    for (const std::string& group : inventory_.group_names()) {
      if (matches(group)) {
        AddGroup(group, set);
        any = true;
      }
    }
    const std::vector<Host>& hosts = inventory_.hosts();
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (matches(hosts[i].name)) {
        (*set)[i] = 1;
        any = true;
      }
    }
    if (any) return Status::Ok();
    return UsageError(shown, "matches no host or group in " + inventory_.path());
  }

  Status MatchFile(const std::string& path, const std::string& shown, HostSet* set,
                   int file_depth) const {
    if (file_depth > 0) return UsageError(shown, "@FILE inside @FILE");
    std::ifstream in(path);
    if (!in) {
      return UsageError(shown, std::string("cannot read ") + path + ": " +
                                   std::strerror(errno ? errno : EIO));
    }
    std::string line;
    bool any = false;
    for (size_t number = 1; std::getline(in, line); ++number) {
      size_t hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos) continue;
      line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
      Status s = Match(line, shown + "\" line " + std::to_string(number) + ": \"" + line,
                       set, file_depth + 1);
      if (!s.ok()) return s;
      any = true;
    }
    if (!any) return UsageError(shown, path + " names no hosts");
    return Status::Ok();
  }

  const Inventory& inventory_;
};

}  // namespace

Status SelectHostIndices(const Inventory& inventory, const std::string& limit,
                         std::vector<size_t>* indices) {
  const size_t n = inventory.hosts().size();
  std::vector<std::string> plain, intersect, exclude;
  for (const std::string& term : SplitTerms(limit)) {
    if (term[0] == '!' || term[0] == '&') {
      std::string rest = term.substr(1);
      if (rest.empty()) return UsageError(term, "operator without a pattern");
      (term[0] == '!' ? exclude : intersect).push_back(rest);
    } else {
      plain.push_back(term);
    }
  }
  if (plain.empty()) plain.push_back("all");
  Selector selector(inventory);
  HostSet selected(n, 0);
  for (const std::string& term : plain) {
    Status s = selector.Match(term, term, &selected, 0);
    if (!s.ok()) return s;
  }
  for (const std::string& term : intersect) {
    HostSet other(n, 0);
    Status s = selector.Match(term, "&" + term, &other, 0);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) selected[i] = selected[i] && other[i];
  }
  for (const std::string& term : exclude) {
    HostSet other(n, 0);
    Status s = selector.Match(term, "!" + term, &other, 0);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) selected[i] = selected[i] && !other[i];
  }
  indices->clear();
  for (size_t i = 0; i < n; ++i) {
    if (selected[i]) indices->push_back(i);
  }
  if (indices->empty()) {
    if (limit.empty()) {
      return Status::Error(ErrorKind::kUsage, inventory.path() + " has no hosts");
    }
    return UsageError(limit, "selects no hosts");
  }
  return Status::Ok();
}

Status SelectHosts(const Inventory& inventory, const std::string& limit,
                   std::vector<Host>* hosts) {
  std::vector<size_t> indices;
  Status s = SelectHostIndices(inventory, limit, &indices);
  if (!s.ok()) return s;
  hosts->clear();
  hosts->reserve(indices.size());
  for (size_t i : indices) hosts->push_back(inventory.hosts()[i]);
  return Status::Ok();
}

std::string FormatHostList(const std::vector<Host>& hosts) {
  size_t name_width = 0, address_width = 0, port_width = 0;
  for (const Host& h : hosts) {
    name_width = std::max(name_width, h.name.size());
    address_width = std::max(address_width, h.address.size());
    port_width = std::max(port_width, std::to_string(h.port).size());
  }
  std::ostringstream out;
  for (const Host& h : hosts) {
    std::string port = std::to_string(h.port);
    out << h.name << std::string(name_width - h.name.size() + 2, ' ') << h.address
        << std::string(address_width - h.address.size() + 2, ' ')
        << std::string(port_width - port.size(), ' ') << port << "  "
        << (h.user.empty() ? "-" : h.user) << "\n";
  }
  return out.str();
}

}  // namespace fleetreap
