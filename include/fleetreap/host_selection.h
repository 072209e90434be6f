// Host selection: Ansible's `--limit` pattern language over an Inventory,
// and the `--list-hosts` listing of what it selected. Pure functions of
// their arguments (apart from reading @FILE); thread-safe.
//
// A limit is a list of terms separated by "," or ":" (outside brackets):
//   gpu07              a host, or a group (every host in it and below it)
//   all, *             every host
//   rack*, gpu0?       glob over host and group names
//   gpu[01:08]         a range (Ansible or ClusterShell spelling), each name
//                      a host or a group
//   ~gpu0[1-4]         regular expression over host and group names,
//                      anchored at the start as Ansible's re.match is
//   @FILE              the names in FILE, one term per line ("#" comments),
//                      e.g. the failed-hosts file of an earlier run
//   !TERM              exclude what TERM selects
//   &TERM              keep only hosts that TERM selects too
// As in Ansible, plain terms are united first (all hosts when there are
// none), then "&" terms intersect, then "!" terms exclude, whatever their
// order in the limit: `gpu*:!gpu07:&rack2`.
//
// Unlike Ansible, which warns and carries on, a term that matches no host
// and no group is an error: on a fleet that kills processes a typo in
// `!gpu7O` must not silently leave gpu70 in the selection.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/host.h"
#include "fleetreap/inventory.h"
#include "fleetreap/status.h"

namespace fleetreap {

/// Selects the hosts of "inventory" that "limit" names; an empty limit
/// selects every host. "hosts" gets them in inventory order, each once.
/// Returns kUsage when a term is malformed, names nothing, or @FILE cannot
/// be read, and when the whole limit selects no host; the message quotes
/// the term: `--limit "gpu7O": matches no host or group in inventory/lab.yaml`.
Status SelectHosts(const Inventory& inventory, const std::string& limit,
                   std::vector<Host>* hosts);

/// As SelectHosts, giving indices into inventory.hosts() (ascending).
Status SelectHostIndices(const Inventory& inventory, const std::string& limit,
                         std::vector<size_t>* indices);

/// The `--list-hosts` text: one line per host with name, address, port and
/// user ("-" for the local user) in aligned columns, no header, each line
/// ending in "\n"; "" for no hosts.
std::string FormatHostList(const std::vector<Host>& hosts);

}  // namespace fleetreap
