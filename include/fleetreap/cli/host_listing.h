// HostListing: what `--list-hosts`, `--list-hosts -v` and `--list-hosts
// --json` print, so a user can check, and diff against `ansible-inventory
// --list`, exactly how each selected host will be reached: address, port,
// user, the keys SSH offers, become and playbook, after the command line's
// defaults. The connection columns are SshOptionsFor's (wiring.h), the very
// options the transport connects with; become and playbook are the plan's.
// Pure functions apart from WriteHostListing; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/cli/options.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/transport/ssh_transport.h"

namespace fleetreap {

/// One selected host as a run reaches it.
struct ListedHost {
  Host host;                // the plan's: become, playbook, groups, source
  SshTransportOptions ssh;  // SshOptionsFor(host, options): address, port, user, keys
};

/// Each plan's host with SshOptionsFor(host, "options"), in plan order.
std::vector<ListedHost> ListedHostsFor(const FleetPlanSet& set, const Options& options);

/// One line per host, in the order given, under a header line: NAME, ADDRESS,
/// PORT, USER ("-": the local user), BECOME ("sudo" or "-"), KEY (the keys
/// offered in order, comma-separated; "-": agent and default keys only),
/// PLAYBOOK ("-": the built-in default), in aligned columns; "" for no hosts.
std::string FormatHostListVerbose(const std::vector<ListedHost>& hosts);

/// The same as a JSON array of objects, in the order given: name, address,
/// port, user (null: the local user), key_file (the first key offered;
/// null: none), key_files (every key offered, in order), become, playbook
/// (null: built-in), groups, source. Ends in "\n".
std::string FormatHostListJson(const std::vector<ListedHost>& hosts);

/// What --list-hosts prints for "set" under "options": the JSON with
/// --json, the columns with -v, else FormatHostList's lines (name, address,
/// port, user, as SshOptionsFor completes them).
std::string HostListingFor(const FleetPlanSet& set, const Options& options);

/// Writes a listing to stdout when "path" is "" or "-", else to the file
/// "path" (--list-hosts --json FILE). On failure prints
/// "fleetreap: cannot write FILE: reason" to stderr and returns false.
bool WriteHostListing(const std::string& text, const std::string& path);

}  // namespace fleetreap
