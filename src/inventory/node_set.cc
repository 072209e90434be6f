#include "fleetreap/inventory/node_set.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "fleetreap/inventory/host_pattern.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace {

// A name as ClusterShell's NodeSet keys it: the name with each run of
// digits as "%s", and the runs themselves.
struct NodeKey {
  std::string pattern;
  std::vector<std::string> numbers;
};

NodeKey KeyOf(const std::string& name) {
  NodeKey key;
  for (size_t i = 0; i < name.size();) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      size_t j = i;
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
      key.numbers.push_back(name.substr(i, j - i));
      key.pattern += "%s";
      i = j;
    } else {
      key.pattern += name[i++];
    }
  }
  return key;
}

bool Before(const NodeKey& a, const NodeKey& b) {
  if (a.pattern != b.pattern) return a.pattern < b.pattern;
  for (size_t i = 0; i < a.numbers.size() && i < b.numbers.size(); ++i) {
    const std::string& x = a.numbers[i];
    const std::string& y = b.numbers[i];
    if (x.size() != y.size()) return x.size() < y.size();
    if (x != y) return x < y;
  }
  return a.numbers.size() < b.numbers.size();
}

bool Digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// ClusterShell's RangeSet syntax inside one pair of brackets: "1-4,09,1-9/2"
// (numbers only; a padded bound needs a bound of the same width). "" when
// it is valid, else the problem.
std::string RangeSetProblem(const std::string& set) {
  if (set.empty()) return "an empty range \"[]\"";
  size_t begin = 0;
  while (begin <= set.size()) {
    size_t comma = set.find(',', begin);
    if (comma == std::string::npos) comma = set.size();
    std::string part = set.substr(begin, comma - begin);
    begin = comma + 1;
    std::string step = "1";
    const size_t slash = part.find('/');
    if (slash != std::string::npos) {
      step = part.substr(slash + 1);
      part.resize(slash);
    }
    const size_t dash = part.find('-');
    const std::string lo = part.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    if (!Digits(lo) || !Digits(hi) || !Digits(step)) {
      return "\"" + part + "\" is not a range of numbers (ClusterShell: gpu[01-08,10])";
    }
    const bool padded = (lo.size() > 1 && lo[0] == '0') || (hi.size() > 1 && hi[0] == '0');
    if (padded && lo.size() != hi.size()) {
      return "\"" + part + "\": padding length mismatch";
    }
    if (std::stoull(step) == 0 || lo.size() > 18 || hi.size() > 18 ||
        std::stoull(lo) > std::stoull(hi)) {
      return "\"" + part + "\": invalid values in range";
    }
  }
  return "";
}

// Every bracket group of "term" valid for ClusterShell; "" or the problem.
std::string TermProblem(const std::string& term) {
  size_t open = term.find('[');
  while (open != std::string::npos) {
    const size_t close = term.find(']', open);
    if (close == std::string::npos) return "missing bracket in \"" + term + "\"";
    std::string problem = RangeSetProblem(term.substr(open + 1, close - open - 1));
    if (!problem.empty()) return "bad range in \"" + term + "\": " + problem;
    open = term.find('[', close);
  }
  if (term.find(']') != std::string::npos && term.find('[') == std::string::npos) {
    return "missing bracket in \"" + term + "\"";
  }
  return "";
}

}  // namespace

void SortLikeNodeSet(std::vector<std::string>* names) {
  std::vector<std::pair<NodeKey, std::string>> keyed;
  keyed.reserve(names->size());
  for (std::string& name : *names) keyed.emplace_back(KeyOf(name), std::move(name));
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return Before(a.first, b.first); });
  names->clear();
  for (auto& entry : keyed) names->push_back(std::move(entry.second));
}

Status ExpandNodeSet(const std::string& flag, const std::string& text,
                     std::vector<std::string>* names) {
  const std::string where = flag + " \"" + text + "\": ";
  std::set<std::string> result;
  char op = ',';
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : '\0';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    const bool is_op = depth == 0 && (c == ',' || c == '!' || c == '&' || c == '^');
    if (!is_op && c != '\0') continue;
    const std::string term = text.substr(begin, i - begin);
    if (term.empty()) {
      return Status::Error(ErrorKind::kUsage, where + "an empty node name");
    }
    if (term[0] == '@') {
      return Status::Error(ErrorKind::kUsage,
                           where + "node groups (" + term + ") are not read; name the nodes");
    }
    const std::string problem = TermProblem(term);
    if (!problem.empty()) return Status::Error(ErrorKind::kUsage, where + problem);
    std::vector<std::string> expanded;
    Status s = ExpandHostPattern(term, &expanded);
    if (!s.ok()) return Status::Error(ErrorKind::kUsage, where + s.message());
    for (const std::string& name : expanded) {
      std::string problem = inventory_internal::CheckHostName(name);
      if (!problem.empty()) return Status::Error(ErrorKind::kUsage, where + problem);
    }
    const std::set<std::string> terms(expanded.begin(), expanded.end());
    std::set<std::string> next;
    if (op == ',') {
      next = result;
      next.insert(terms.begin(), terms.end());
    } else if (op == '!') {
      std::set_difference(result.begin(), result.end(), terms.begin(), terms.end(),
                          std::inserter(next, next.end()));
    } else if (op == '&') {
      std::set_intersection(result.begin(), result.end(), terms.begin(), terms.end(),
                            std::inserter(next, next.end()));
    } else {
      std::set_symmetric_difference(result.begin(), result.end(), terms.begin(), terms.end(),
                                    std::inserter(next, next.end()));
    }
    if (next.size() > kMaxExpandedHosts) {
      return Status::Error(ErrorKind::kUsage,
                           where + "more than " + std::to_string(kMaxExpandedHosts) + " nodes");
    }
    result = std::move(next);
    op = c;
    begin = i + 1;
  }
  names->assign(result.begin(), result.end());
  SortLikeNodeSet(names);
  return Status::Ok();
}

}  // namespace fleetreap
