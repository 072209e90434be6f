// AnsiblePattern: the pieces of ansible-core 2.14's host pattern language
// that do not need an inventory (inventory/manager.py): how a pattern is
// split into terms, Python's fnmatch as Ansible applies it to names, the
// [subscript] suffix, and which Python regular expressions std::regex reads
// the same way. host_selection.cc combines them over an Inventory. Pure
// functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fleetreap {

/// split_host_pattern: with a "," anywhere, the terms are what lies between
/// commas; without, a pattern that parse_address accepts (an IPv6 literal,
/// "gpu[01:04]", "host:22") is one term, and anything else is split at ":"
/// outside brackets, blanks dropped. Terms are stripped; empty ones dropped.
std::vector<std::string> SplitAnsiblePattern(const std::string& pattern);

/// Python's fnmatch.fnmatchcase(name, glob) with fnmatch.translate's rules:
/// "*", "?", "[seq]", "[!seq]"; an unclosed "[" is literal; no escapes.
/// Compiled once, matched against many names.
class AnsibleGlob {
 public:
  explicit AnsibleGlob(const std::string& glob);
  bool Matches(const std::string& name) const;

 private:
  struct Item {
    enum class Kind { kLiteral, kAny, kStar, kClass };
    explicit Item(Kind k) : kind(k) {}
    Kind kind;
    char literal = 0;
    bool negate = false;
    std::vector<std::pair<unsigned char, unsigned char>> ranges;
  };
  static bool ItemMatches(const Item& item, char c);
  bool MatchFrom(size_t p, const std::string& s, size_t i) const;
  std::vector<Item> items_;
};

/// AnsibleGlob(glob).Matches(name).
bool AnsibleGlobMatch(const std::string& glob, const std::string& name);

/// A pattern's [subscript] suffix as PATTERN_WITH_SUBSCRIPT reads it:
/// "g[0]", "g[-1]", "g[1:3]", "g[2:]", and the removed "g[1-3]" spelling.
struct Subscript {
  bool present = false;
  bool single = false;  // [n]: one index, may be negative
  long start = 0;
  long end = -1;  // [x:] is -1, as in Ansible
};

/// Splits "pattern" into the expression and its subscript; a pattern
/// starting with "~" never has one.
Subscript SplitSubscript(const std::string& pattern, std::string* expression);

/// Ansible's _apply_subscript on "count" items: the positions selected, or
/// false where Python raises IndexError.
bool ApplySubscript(const Subscript& subscript, size_t count, std::vector<size_t>* positions);

/// "" when std::regex (ECMAScript) reads Python regular expression "re" as
/// Python does for host names; otherwise the construct that differs.
std::string PythonRegexDifference(const std::string& re);

}  // namespace fleetreap
