// NodeSet: ClusterShell's node-set syntax as `clush -w` and `nodeset -e`
// read it (ClusterShell 1.9), for --nodes and --exclude: names and bracketed
// range sets (gpu[01-08,10], gpu[1-9/2], rack[1-2]-node[1-4]), combined left
// to right with "," (union), "!" (difference), "&" (intersection) and "^"
// (symmetric difference), and listed in ClusterShell's order. Pure
// functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// Expands "text" as `nodeset -e` does, into "names" in ClusterShell's
/// order: by the name with each run of digits written "%s", then by each
/// number, shorter before longer (gpu2 before gpu01 before gpu10). Names
/// with several numbers (rack1-node2) are the same as nodeset's, but
/// nodeset lists them in the order of its folded vectors, not by name. kUsage
/// naming "flag" and the problem, e.g.
///   --nodes "gpu[1-": host range "gpu[1-": missing "]"
///   --nodes "@gpus": node groups (@gpus) are not read; name the nodes
Status ExpandNodeSet(const std::string& flag, const std::string& text,
                     std::vector<std::string>* names);

/// Sorts "names" into ClusterShell's order (see ExpandNodeSet).
void SortLikeNodeSet(std::vector<std::string>* names);

}  // namespace fleetreap
