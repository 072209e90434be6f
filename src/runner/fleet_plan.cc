#include "fleetreap/runner/fleet_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/inventory/inventory.h"
#include "fleetreap/inventory/node_set.h"
#include "fleetreap/inventory/slurm_hosts.h"
#include "fleetreap/runner/inventory_program_runner.h"
#include "fleetreap/transport/local_transport.h"

namespace fleetreap {
namespace {

constexpr size_t kQuoteCap = 120;  // sinfo's stderr line, quoted

Host LocalHost() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') {
    std::snprintf(name, sizeof name, "localhost");
  }
  Host host;
  host.name = name;
  host.address = "localhost";
  host.port = 0;
  host.source = "--local";
  return host;
}

// Loads each playbook file once, however many hosts name it.
class PlaybookCache {
 public:
  Status Get(const std::string& path, std::shared_ptr<const Playbook>* out) {
    auto it = loaded_.find(path);
    if (it == loaded_.end()) {
      auto playbook = std::make_shared<Playbook>();
      Status status = LoadPlaybookFile(path, playbook.get());
      if (!status.ok()) return status;
      it = loaded_.emplace(path, std::move(playbook)).first;
    }
    *out = it->second;
    return Status::Ok();
  }

 private:
  std::map<std::string, std::shared_ptr<const Playbook>> loaded_;
};

// A Slurm partition stands alone; everything else is inventory sources.
Status LoadHosts(const FleetPlanRequest& request, Inventory* inventory, FleetPlanSet* set) {
  for (const std::string& source : request.hosts) {
    if (!IsSlurmHostsSpec(source)) continue;
    if (request.hosts.size() > 1) {
      return Status::Error(ErrorKind::kUsage, "--hosts " + source +
                                                  ": a Slurm partition cannot be combined with "
                                                  "other --hosts sources");
    }
    LocalTransport sinfo_runner;
    return LoadSlurmHosts(source, &sinfo_runner, request.command_timeout, inventory);
  }
  InventoryProgramRunner programs(request.command_timeout);
  return LoadInventorySources(request.hosts, &programs, inventory, &set->warnings, &set->notes);
}

// --hosts, selected with --limit ("hosts" stays empty without --hosts).
Status InventoryHosts(const FleetPlanRequest& request, FleetPlanSet* set,
                      std::vector<Host>* hosts) {
  if (request.hosts.empty()) {
    if (request.limit.empty()) return Status::Ok();
    return Status::Error(ErrorKind::kUsage,
                         "--limit selects from --hosts; --nodes names its hosts itself");
  }
  Inventory inventory;
  Status status = LoadHosts(request, &inventory, set);
  if (!status.ok()) return status;
  std::string note;  // an empty @FILE: no hosts, and not an error
  status = SelectHosts(inventory, request.limit, hosts, &note);
  if (!status.ok()) return status;
  if (!note.empty()) set->warnings.push_back(note);
  return Status::Ok();
}

// --nodes: each node it names that "hosts" does not hold yet, as an
// ungrouped host reached by its name.
Status AddNodes(const std::string& nodes, std::vector<Host>* hosts) {
  std::vector<std::string> names;
  Status status = ExpandNodeSet("--nodes", nodes, &names);
  if (!status.ok()) return status;
  if (names.empty()) {
    return Status::Error(ErrorKind::kUsage, "--nodes \"" + nodes + "\" names no node");
  }
  std::set<std::string> present;
  for (const Host& host : *hosts) present.insert(host.name);
  for (const std::string& name : names) {
    if (!present.insert(name).second) continue;
    Host host;
    host.name = name;
    host.address = name;
    host.groups = {"ungrouped"};
    host.source = "--nodes";
    hosts->push_back(std::move(host));
  }
  return Status::Ok();
}

// --exclude: the hosts it names taken out; an error when that leaves none
// of a selection that had some.
Status ExcludeNodes(const std::string& exclude, std::vector<Host>* hosts) {
  std::vector<std::string> names;
  Status status = ExpandNodeSet("--exclude", exclude, &names);
  if (!status.ok()) return status;
  const std::set<std::string> excluded(names.begin(), names.end());
  const bool had_hosts = !hosts->empty();
  hosts->erase(std::remove_if(hosts->begin(), hosts->end(),
                              [&](const Host& h) { return excluded.count(h.name) > 0; }),
               hosts->end());
  if (had_hosts && hosts->empty()) {
    return Status::Error(ErrorKind::kUsage,
                         "--exclude \"" + exclude + "\" leaves no host selected");
  }
  return Status::Ok();
}

// --hosts with --limit, then --nodes (hosts not already selected), then
// --exclude.
Status SelectedHosts(const FleetPlanRequest& request, FleetPlanSet* set, std::vector<Host>* hosts) {
  Status status = InventoryHosts(request, set, hosts);
  if (status.ok() && !request.nodes.empty()) status = AddNodes(request.nodes, hosts);
  if (status.ok() && !request.exclude.empty()) status = ExcludeNodes(request.exclude, hosts);
  return status;
}

}  // namespace

Status LoadSlurmHosts(const std::string& spec, Transport* runner, std::chrono::milliseconds timeout,
                      Inventory* inventory) {
  std::string partition;
  Status status = SlurmPartition(spec, &partition);
  if (!status.ok()) return status;
  CommandResult result = runner->Run(SinfoCommand(partition), timeout);
  if (result.end == CommandEnd::kExited && result.exit_code == 127) {
    return Status::Error(ErrorKind::kInvalidInput,
                         spec +
                             ": sinfo not found (fleetreap runs it where Slurm's commands "
                             "work)");
  }
  if (!result.Succeeded()) {
    std::vector<std::string> lines = SplitLines(result.err);
    std::string why = result.end == CommandEnd::kExited ? "exit " + std::to_string(result.exit_code)
                                                        : std::string(CommandEndName(result.end));
    return Status::Error(ErrorKind::kInvalidInput,
                         spec + ": sinfo failed (" + why + ")" +
                             (lines.empty() ? "" : ": " + QuoteForMessage(lines[0], kQuoteCap)));
  }
  std::vector<std::string> nodes;
  status = ParseSinfoNodes(spec, result.out, &nodes);
  if (!status.ok()) return status;
  *inventory = SlurmInventory(spec, nodes);
  return Status::Ok();
}

Status BuildFleetPlans(const FleetPlanRequest& request, FleetPlanSet* set) {
  std::vector<Host> hosts;
  if (request.local) {
    hosts.push_back(LocalHost());
  } else {
    Status status = SelectedHosts(request, set, &hosts);
    if (!status.ok()) return status;
  }

  PlaybookCache cache;
  std::shared_ptr<const Playbook> run_playbook;
  if (!request.playbook.empty()) {
    Status status = cache.Get(request.playbook, &run_playbook);
    if (!status.ok()) return status;
    set->playbook_name = run_playbook->name;
  } else {
    set->playbook_name = DefaultPlaybook().name;
  }

  // --playbook wins over the inventory's fleetreap_playbook, as a command
  // line wins over inventory variables everywhere else.
  for (Host& host : hosts) {
    FleetPlan plan;
    if (run_playbook) plan.playbook = run_playbook;
    if (!run_playbook && !host.playbook.empty()) {
      Status status = cache.Get(host.playbook, &plan.playbook);
      if (!status.ok()) return status;
    }
    if (request.become) host.become = true;
    if (!request.playbook.empty()) host.playbook = request.playbook;
    plan.host = std::move(host);
    set->plans.push_back(std::move(plan));
  }
  return Status::Ok();
}

}  // namespace fleetreap
