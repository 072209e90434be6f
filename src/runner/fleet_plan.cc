#include "fleetreap/runner/fleet_plan.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>

#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/inventory/inventory.h"
#include "fleetreap/inventory/slurm_hosts.h"
#include "fleetreap/transport/local_transport.h"

namespace fleetreap {
namespace {

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

}  // namespace

Status BuildFleetPlans(const FleetPlanRequest& request, FleetPlanSet* set) {
  std::vector<Host> hosts;
  if (request.local) {
    hosts.push_back(LocalHost());
  } else {
    Inventory inventory;
    LocalTransport sinfo_runner;
    Status status =
        IsSlurmHostsSpec(request.hosts_file)
            ? LoadSlurmHosts(request.hosts_file, &sinfo_runner, request.command_timeout, &inventory)
            : LoadInventory(request.hosts_file, &inventory, &set->warnings, &set->notes);
    if (!status.ok()) return status;
    std::string note;  // an empty @FILE: no hosts, and not an error
    status = SelectHosts(inventory, request.limit, &hosts, &note);
    if (!status.ok()) return status;
    if (!note.empty()) set->warnings.push_back(note);
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
    plan.host = std::move(host);
    set->plans.push_back(std::move(plan));
  }
  return Status::Ok();
}

}  // namespace fleetreap
