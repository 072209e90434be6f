// ClosestName: the "did you mean" of every parser that refuses a name (a
// playbook setting, a config key, an Ansible variable): the known name
// nearest to a typo by edit distance. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fleetreap {

/// Damerau-Levenshtein distance between "a" and "b" (an adjacent
/// transposition counts one), or "cap" + 1 once it is known to be larger.
size_t EditDistance(const std::string& a, const std::string& b, size_t cap);

/// The name of "known" nearest to "name", at most "max_distance" edits
/// away; "" when none is that near, or when two names are equally near (a
/// guess between them would mislead).
std::string ClosestName(const std::string& name, const std::vector<std::string>& known,
                        size_t max_distance = 2);

}  // namespace fleetreap
