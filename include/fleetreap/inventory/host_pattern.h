// Host patterns: the compact spellings of many host names that inventories
// and the command line use, in both directions. Expansion understands
// Ansible's ranges (`gpu[01:64]`, `gpu[1:64:2]`, `rack[a:f]-node[1:4]`) and
// ClusterShell's range sets (`gpu[01-64]`, `gpu[01-04,09]`, `gpu[1-9/2]`);
// several bracket groups in one name give every combination. Folding is the
// inverse, as ClusterShell's NodeSet prints it: `gpu[01-12,14],login1`.
// Zero padding is kept both ways: `gpu[01:03]` is gpu01, gpu02, gpu03.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/host_name_fold.h"  // FoldHostNames, the inverse of ExpandHostPattern
#include "fleetreap/base/status.h"

namespace fleetreap {

/// The most names one pattern may expand to; larger patterns are an error
/// rather than an allocation that takes the machine down. A fleet is
/// thousands of hosts; 100,000 leaves room and keeps a typo such as
/// gpu[1:999999] an error, not seconds of work.
inline constexpr size_t kMaxExpandedHosts = 100000;

/// True when "pattern" contains a bracket, i.e. may denote more than one name.
bool HasHostRange(const std::string& pattern);

/// Appends every name that "pattern" denotes to "names", in range order
/// (the leftmost bracket varies slowest). A pattern without brackets yields
/// itself. A range keeps the zero padding of its start: `[08:10]` gives 08,
/// 09, 10, and `[8:10]` gives 8, 9, 10.
/// On a malformed pattern returns kInvalidInput with a message that quotes the
/// pattern and says what is wrong, e.g.
///   host range "gpu[09:01]": start 09 is after end 01
/// and leaves "names" unchanged.
Status ExpandHostPattern(const std::string& pattern, std::vector<std::string>* names);

/// Splits "text" at commas that are not inside brackets:
/// "gpu[01-04,09],login1" -> {"gpu[01-04,09]", "login1"}. Empty parts are
/// kept, so callers can reject them.
std::vector<std::string> SplitHostList(const std::string& text);

}  // namespace fleetreap
