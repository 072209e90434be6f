// AnsibleAddress: how ansible-core 2.14 reads a host key in an inventory
// ("gpu[01:08]:2222", "[fe80::1]:22") and which strings it takes for one
// host address: ansible.parsing.utils.addresses.parse_address and the
// inventory plugins' expand_hostname_range, rule for rule, so that an INI or
// YAML inventory yields exactly the hosts Ansible sees. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// parse_address(text, allow_ranges=True): splits an optional ":port" (or
/// "[host]:port") off and checks that the rest is an IPv4 address, an IPv6
/// address or a host name, any of them with [x:y] ranges. Returns false where
/// Ansible raises; "*port" is -1 when no port was given.
bool ParseAnsibleAddress(const std::string& text, std::string* host, int* port);

/// Expands Ansible's host ranges in "pattern" as expand_hostname_range does:
/// [begin:end] or [begin:end:step], numbers or letters (a-z, A-Z), the
/// leftmost bracket slowest; a zero-padded begin needs an end of the same
/// width. A range whose begin is past its end, or with a negative step, is
/// an error here; Ansible silently reads no host from it.
/// Appends to "names"; on error returns kInvalidInput
///   host range "gpu[01-04]": Ansible reads only [begin:end] or
///   [begin:end:step] ranges (a ClusterShell range: write gpu[01:04])
Status ExpandAnsibleHostRange(const std::string& pattern, std::vector<std::string>* names);

/// What Ansible's inventory plugins do with one host key: the address part
/// split from its port (see ParseAnsibleAddress; a key that does not parse
/// is taken whole, with no port), then its ranges expanded. "*port" is -1
/// when there is none.
Status ExpandAnsibleHostKey(const std::string& key, std::vector<std::string>* names, int* port);

}  // namespace fleetreap
