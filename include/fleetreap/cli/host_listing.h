// HostListing: what `--list-hosts -v` and `--list-hosts --json` print, so a
// user can check, and diff against `ansible-inventory --list`, exactly how
// each selected host will be reached: address, port, user, key file,
// become and playbook, after the command line's defaults. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/cli/options.h"
#include "fleetreap/inventory/host.h"

namespace fleetreap {

/// "host" as a run with "options" uses it: --user and --identity where the
/// inventory sets none, --become, and --playbook over fleetreap_playbook.
Host EffectiveHost(const Host& host, const Options& options);

/// One line per host, in the order given, under a header line: NAME, ADDRESS,
/// PORT, USER ("-": the local user), BECOME ("sudo" or "-"), KEY ("-": agent
/// and default keys), PLAYBOOK ("-": the built-in default), in aligned
/// columns; "" for no hosts.
std::string FormatHostListVerbose(const std::vector<Host>& hosts);

/// The same as a JSON array of objects, in the order given: name, address,
/// port, user (null: the local user), key_file (null), become, playbook
/// (null: built-in), groups, source. Ends in "\n".
std::string FormatHostListJson(const std::vector<Host>& hosts);

/// Writes a listing to stdout when "path" is "" or "-", else to the file
/// "path" (--list-hosts --json FILE). On failure prints
/// "fleetreap: cannot write FILE: reason" to stderr and returns false.
bool WriteHostListing(const std::string& text, const std::string& path);

}  // namespace fleetreap
