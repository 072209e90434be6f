// FoldHostNames: host names folded into ClusterShell's range notation for
// display (gpu[01-12,14]); inventory/host_pattern.h expands such a pattern
// back. Pure function; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {

/// Folds names into ClusterShell range notation for display: duplicates are
/// dropped, numbers that differ only in one numeric field are folded into a
/// range set (`gpu01`..`gpu12`, `gpu14` -> `gpu[01-12,14]`), and folding is
/// repeated field by field, so `rack1-node[1-4]` and `rack2-node[1-4]` become
/// `rack[1-2]-node[1-4]`. Groups are joined with "," in natural name order.
/// ExpandHostPattern (inventory/host_pattern.h) on each comma-separated group
/// gives the names back.
std::string FoldHostNames(const std::vector<std::string>& names);

}  // namespace fleetreap
