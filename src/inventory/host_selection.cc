#include "fleetreap/inventory/host_selection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "fleetreap/base/closest_name.h"
#include "fleetreap/inventory/ansible_pattern.h"
#include "fleetreap/inventory/host_pattern.h"

namespace fleetreap {
namespace {

Status UsageError(const std::string& term, const std::string& problem) {
  return Status::Error(ErrorKind::kUsage, "--limit \"" + term + "\": " + problem);
}

bool Balanced(const std::string& term) {
  int depth = 0;
  for (char c : term) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) return false;
  }
  return depth == 0;
}

// Splits at commas outside brackets: fleetreap's reading of "gpu[01-04,09]".
std::vector<std::string> SplitOutsideBrackets(const std::string& limit) {
  std::vector<std::string> terms;
  for (const std::string& part : SplitHostList(limit)) {
    size_t b = part.find_first_not_of(" \t");
    if (b != std::string::npos)
      terms.push_back(part.substr(b, part.find_last_not_of(" \t") - b + 1));
  }
  return terms;
}

std::string Names(const Inventory& inventory, const std::vector<size_t>& hosts) {
  std::vector<std::string> names;
  for (size_t i : hosts) names.push_back(inventory.hosts()[i].name);
  return FoldHostNames(names);
}

class Selector {
 public:
  // "comma_list": the pattern has a ",", so Ansible does not split at ":".
  // Each @FILE that names no host is added to "empty_files" (not owned).
  Selector(const Inventory& inventory, bool comma_list, std::vector<std::string>* empty_files)
      : inventory_(inventory), comma_list_(comma_list), empty_files_(empty_files) {}

  // What one term (without "!" or "&") selects, in Ansible's order.
  // "shown" is how the term is quoted in errors; "extend" allows fleetreap's
  // range reading where Ansible selects nothing.
  Status Match(const std::string& term, const std::string& shown, bool extend,
               std::vector<size_t>* out, int file_depth = 0) const {
    out->clear();
    if (term[0] == '@' && extend) return MatchFile(term.substr(1), shown, out, file_depth);
    if (term[0] == '~') return MatchRegex(term.substr(1), shown, out);
    std::string expression;
    const Subscript sub = SplitSubscript(term, &expression);
    std::vector<size_t> found;
    std::string unordered;
    const bool named = Enumerate(expression, &found, sub.present ? &unordered : nullptr);
    if (!unordered.empty()) {
      return UsageError(shown, "Ansible orders the hosts of group \"" + unordered +
                                   "\" differently from run to run, so a subscript on it "
                                   "selects unpredictably; name the hosts instead");
    }
    if (sub.present) {
      std::vector<size_t> positions;
      ApplySubscript(sub, found.size(), &positions);  // IndexError: no position
      std::vector<size_t> picked;
      for (size_t p : positions) picked.push_back(found[p]);
      found = std::move(picked);
    }
    std::vector<size_t> range;
    std::string range_problem;
    const bool ranged = extend && HasHostRange(term) && RangeReading(term, &range, &range_problem);
    if (named) {
      // Ansible has a reading; a different range reading is a guess.
      if (ranged && Sorted(found) != range) {
        return Disagree(shown, sub.present ? expression : "", found, range);
      }
      if (sub.present && found.empty()) {
        return UsageError(shown,
                          "Ansible finds no host at that position of \"" + expression + "\"");
      }
      *out = std::move(found);
      return Status::Ok();
    }
    if (ranged) {
      *out = std::move(range);
      return Status::Ok();
    }
    if (!range_problem.empty()) return UsageError(shown, range_problem);
    std::string hint;
    if (term.find(':') != std::string::npos && term.find('[') == std::string::npos) {
      hint = comma_list_ ? " (with a \",\" in the pattern Ansible does not split at \":\"; "
                           "use one of them)"
                         : " (Ansible reads \"NAME:PORT\" as one name)";
    }
    if (hint.empty() && term.find_first_of("*?[") == std::string::npos) {
      std::vector<std::string> names = inventory_.group_names();
      for (const Host& host : inventory_.hosts()) names.push_back(host.name);
      const std::string best = ClosestName(term, names, 1);
      if (!best.empty()) hint = " (did you mean " + best + "?)";
    }
    return UsageError(shown, "matches no host or group in " + inventory_.path() + hint);
  }

 private:
  static std::vector<size_t> Sorted(std::vector<size_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }

  // "subscripted" is the expression a subscript applies to, "" for a glob.
  Status Disagree(const std::string& shown, const std::string& subscripted,
                  const std::vector<size_t>& ansible, const std::vector<size_t>& range) const {
    std::string reads = subscripted.empty()
                            ? "Ansible reads the brackets as a glob character class"
                            : "Ansible reads this as a subscript of \"" + subscripted + "\"";
    reads +=
        ansible.empty() ? " and selects no host" : " and selects " + Names(inventory_, ansible);
    return UsageError(shown, reads + "; as a host range it is " + Names(inventory_, range) +
                                 ". Refusing to guess: name the hosts, or use ~regex");
  }

  // Ansible's _enumerate_matches: groups whose name matches (in inventory
  // order), then hosts too when no group matched or the pattern has one of
  // ". ? * [". "unordered" (may be null) names a matched group whose host
  // order Ansible does not fix. True when some group or host matched, even
  // an empty group.
  bool Enumerate(const std::string& glob, std::vector<size_t>* out, std::string* unordered) const {
    const bool literal = glob.find_first_of("*?[") == std::string::npos;
    bool any_group = false;
    for (const std::string& group : inventory_.group_names()) {
      if (literal ? group != glob : !AnsibleGlobMatch(glob, group)) continue;
      any_group = true;
      bool ambiguous = false;
      std::vector<size_t> hosts = inventory_.AnsibleGroupHosts(group, &ambiguous);
      if (ambiguous && unordered && unordered->empty()) *unordered = group;
      out->insert(out->end(), hosts.begin(), hosts.end());
    }
    if (any_group && glob.find_first_of(".?*[") == std::string::npos) return true;
    if (literal) {
      int index = inventory_.HostIndex(glob);
      if (index >= 0) out->push_back(static_cast<size_t>(index));
      return any_group || index >= 0;
    }
    const std::vector<Host>& hosts = inventory_.hosts();
    const AnsibleGlob compiled(glob);
    bool any_host = false;
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (compiled.Matches(hosts[i].name)) {
        out->push_back(i);
        any_host = true;
      }
    }
    return any_group || any_host;
  }

  // fleetreap's extension: every name of the range a host or group.
  bool RangeReading(const std::string& term, std::vector<size_t>* out, std::string* problem) const {
    std::vector<std::string> names;
    Status s = ExpandHostPattern(term, &names);
    if (!s.ok()) {
      *problem = s.message();
      return false;
    }
    std::vector<std::string> missing;
    std::vector<char> chosen(inventory_.hosts().size(), 0);
    for (const std::string& name : names) {
      if (const std::vector<size_t>* members = inventory_.GroupMembers(name)) {
        for (size_t i : *members) chosen[i] = 1;
      } else if (inventory_.HostIndex(name) >= 0) {
        chosen[inventory_.HostIndex(name)] = 1;
      } else {
        missing.push_back(name);
      }
    }
    if (!missing.empty()) {
      *problem = "no host or group " + FoldHostNames(missing) + " in " + inventory_.path();
      return false;
    }
    for (size_t i = 0; i < chosen.size(); ++i) {
      if (chosen[i]) out->push_back(i);
    }
    return true;
  }

  Status MatchRegex(const std::string& pattern, const std::string& shown,
                    std::vector<size_t>* out) const {
    std::string difference = PythonRegexDifference(pattern);
    if (!difference.empty()) {
      return UsageError(shown, "\"" + difference +
                                   "\" in a regular expression is Python syntax "
                                   "that fleetreap cannot match the way Ansible does");
    }
    std::regex re;
    try {
      re = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return UsageError(shown, std::string("bad regular expression: ") + e.what());
    }
    auto matches = [&re](const std::string& s) {
      return std::regex_search(s, re, std::regex_constants::match_continuous);
    };
    for (const std::string& group : inventory_.group_names()) {
      if (!matches(group)) continue;
      bool ambiguous = false;
      std::vector<size_t> hosts = inventory_.AnsibleGroupHosts(group, &ambiguous);
      out->insert(out->end(), hosts.begin(), hosts.end());
    }
    const std::vector<Host>& hosts = inventory_.hosts();
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (matches(hosts[i].name)) out->push_back(i);
    }
    if (!out->empty()) return Status::Ok();
    return UsageError(shown, "matches no host or group in " + inventory_.path());
  }

  Status MatchFile(const std::string& path, const std::string& shown, std::vector<size_t>* out,
                   int file_depth) const {
    if (file_depth > 0) return UsageError(shown, "@FILE inside @FILE");
    std::ifstream in(path);
    if (!in) {
      return UsageError(
          shown, std::string("cannot read ") + path + ": " + std::strerror(errno ? errno : EIO));
    }
    std::string line;
    bool any = false;
    for (size_t number = 1; std::getline(in, line); ++number) {
      size_t hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos) continue;
      line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
      std::vector<size_t> found;
      Status s = Match(line, shown + "\" line " + std::to_string(number) + ": \"" + line, true,
                       &found, file_depth + 1);
      if (!s.ok()) return s;
      out->insert(out->end(), found.begin(), found.end());
      any = true;
    }
    // An empty --failed-hosts file means nothing failed: it selects nothing.
    if (!any) empty_files_->push_back(path);
    return Status::Ok();
  }

  const Inventory& inventory_;
  const bool comma_list_;
  std::vector<std::string>* const empty_files_;
};

// The terms of "limit": Ansible's split, unless it cuts a bracket in two
// ("gpu[01-04,09]") and none of the pieces selects anything in Ansible.
Status Terms(const Selector& selector, const std::string& limit, std::vector<std::string>* terms) {
  *terms = SplitAnsiblePattern(limit);
  if (std::all_of(terms->begin(), terms->end(), Balanced)) return Status::Ok();
  std::vector<std::string> ours = SplitOutsideBrackets(limit);
  for (const std::string& piece : *terms) {
    if (std::find(ours.begin(), ours.end(), piece) != ours.end()) continue;
    std::string bare = piece[0] == '!' || piece[0] == '&' ? piece.substr(1) : piece;
    std::vector<size_t> found;
    if (!bare.empty() && selector.Match(bare, piece, false, &found).ok() && !found.empty()) {
      return UsageError(limit,
                        "Ansible splits this pattern at the \",\" inside brackets and "
                        "its piece \"" +
                            piece +
                            "\" selects hosts; write the range "
                            "with \":\" or list the names");
    }
  }
  *terms = std::move(ours);
  return Status::Ok();
}

}  // namespace

Status SelectHostIndices(const Inventory& inventory, const std::string& limit,
                         std::vector<size_t>* indices, std::string* note) {
  const size_t n = inventory.hosts().size();
  std::vector<std::string> empty_files;
  Selector selector(inventory, limit.find(',') != std::string::npos, &empty_files);
  if (note != nullptr) note->clear();
  std::vector<std::string> terms;
  Status s = Terms(selector, limit, &terms);
  if (!s.ok()) return s;
  std::vector<std::string> plain, intersect, exclude;
  for (const std::string& term : terms) {
    if (term[0] == '!' || term[0] == '&') {
      std::string rest = term.substr(1);
      if (rest.empty()) return UsageError(term, "operator without a pattern");
      if (term[0] == '!') {
        exclude.push_back(rest);
      } else {
        intersect.push_back(rest);
      }
    } else {
      plain.push_back(term);
    }
  }
  if (plain.empty()) plain.push_back("all");
  std::vector<char> selected(n, 0);
  for (const std::string& term : plain) {
    int host = inventory.HostIndex(term);  // Ansible: a host name is taken as it is
    if (host >= 0) {
      selected[host] = 1;
      continue;
    }
    std::vector<size_t> found;
    s = selector.Match(term, term, true, &found);
    if (!s.ok()) return s;
    for (size_t i : found) selected[i] = 1;
  }
  for (const std::string& term : intersect) {
    std::vector<size_t> found;
    s = selector.Match(term, "&" + term, true, &found);
    if (!s.ok()) return s;
    std::vector<char> other(n, 0);
    for (size_t i : found) other[i] = 1;
    for (size_t i = 0; i < n; ++i) selected[i] = static_cast<char>(selected[i] && other[i]);
  }
  for (const std::string& term : exclude) {
    std::vector<size_t> found;
    s = selector.Match(term, "!" + term, true, &found);
    if (!s.ok()) return s;
    for (size_t i : found) selected[i] = 0;
  }
  indices->clear();
  for (size_t i = 0; i < n; ++i) {
    if (selected[i]) indices->push_back(i);
  }
  if (indices->empty()) {
    if (limit.empty()) {
      return Status::Error(ErrorKind::kUsage, inventory.path() + " has no hosts");
    }
    if (empty_files.empty()) return UsageError(limit, "selects no hosts");
    if (note != nullptr) {
      *note = "--limit \"" + limit + "\": " + empty_files.front() + " is empty: no hosts selected";
    }
  }
  for (size_t i : *indices) {
    const std::string& problem = inventory.hosts()[i].problem;
    if (!problem.empty()) return Status::Error(ErrorKind::kInvalidInput, problem);
  }
  return Status::Ok();
}

Status SelectHosts(const Inventory& inventory, const std::string& limit, std::vector<Host>* hosts,
                   std::string* note) {
  std::vector<size_t> indices;
  Status s = SelectHostIndices(inventory, limit, &indices, note);
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
