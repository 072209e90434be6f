// Host selection: Ansible's host pattern language over an Inventory, as
// ansible-core 2.14 evaluates `ansible PATTERN` (inventory/manager.py), and
// the `--list-hosts` listing. Pure functions of their arguments (apart from
// reading @FILE); thread-safe.
//
// A pattern is split into terms as Ansible splits it (at "," when there is
// one, else at ":" outside brackets, an IPv6 literal staying whole):
//   gpu07              a host, or a group (every host in it and below it)
//   all, *             every host
//   rack*, gpu0?       fnmatch over group names, and host names
//   gpus[0], gpus[-1]  Ansible subscripts: positions in the group's host
//   gpus[1:3], gpus[2:]   order as Ansible keeps it
//   ~gpu0[1-4]         Python regular expression, anchored at the start
//   !TERM, &TERM       exclude, intersect
// Plain terms are united first (all hosts when there are none), then "&"
// terms intersect, then "!" terms exclude, whatever their order.
//
// fleetreap's extensions apply only where Ansible selects nothing for a
// term: a host range (`gpu[01:04]`, ClusterShell's `gpu[01-04,09]`) names
// each host or group, and `@FILE` reads one term per line ("#" comments).
// Where Ansible and the range reading would both select hosts, and not the
// same ones (a group "gpu" and hosts gpu01..: `gpu[01:04]`), fleetreap
// refuses and says so. Unlike Ansible, which warns and carries on, a term
// that matches no host and no group is an error: on a fleet that kills
// processes a typo in `!gpu7O` must not silently leave gpu70 selected.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/inventory/inventory.h"

namespace fleetreap {

/// Selects the hosts of "inventory" that "limit" names; an empty limit
/// selects every host. "hosts" gets them in inventory order, each once.
/// Returns kUsage when a term is malformed, names nothing, or @FILE cannot
/// be read, and when the whole limit selects no host; the message quotes
/// the term: `--limit "gpu7O": matches no host or group in inventory/lab.yaml`.
/// An @FILE that names no host (empty, or only comments: a --failed-hosts
/// file of a run where nothing failed) selects nothing without an error; when
/// the whole limit then selects no host, it returns Ok with no hosts and sets
/// "note" (may be null; else "" when there is nothing to say) to
/// `--limit "@failed.txt": failed.txt is empty: no hosts selected`.
/// Returns kInvalidInput with Host::problem when a selected host has one.
Status SelectHosts(const Inventory& inventory, const std::string& limit, std::vector<Host>* hosts,
                   std::string* note = nullptr);

/// As SelectHosts, giving indices into inventory.hosts() (ascending).
Status SelectHostIndices(const Inventory& inventory, const std::string& limit,
                         std::vector<size_t>* indices, std::string* note = nullptr);

/// The `--list-hosts` text: one line per host with name, address, port and
/// user ("-" for the local user) in aligned columns, no header, each line
/// ending in "\n"; "" for no hosts.
std::string FormatHostList(const std::vector<Host>& hosts);

}  // namespace fleetreap
