#include "fleetreap/escalation/host_fold.h"

#include <algorithm>
#include <set>

#include "fleetreap/escalation/gpu_state.h"

namespace fleetreap {
namespace {

void AddSorted(int value, std::vector<int>* values) {
  if (std::find(values->begin(), values->end(), value) != values->end()) return;
  values->push_back(value);
  std::sort(values->begin(), values->end());
}

// The table's processes as compute apps (by the GPU's UUID), so that a
// graphics client holding memory is a holder, never a ghost.
void AddTableApps(const std::vector<TableApp>& table, const std::vector<GpuReading>& gpus,
                  std::vector<ComputeApp>* apps) {
  for (const TableApp& process : table) {
    for (const GpuReading& gpu : gpus) {
      if (gpu.index != process.gpu) continue;
      ComputeApp app;
      app.pid = process.pid;
      app.gpu_uuid = gpu.uuid;
      app.gpu_bus_id = gpu.bus_id;
      app.used_mib = process.used_mib;
      apps->push_back(app);
    }
  }
}

std::string NamespaceError(const HostSnapshot& snapshot) {
  return "nothing signalled or removed: this shell does not see the host's PID "
         "namespace (" +
         (snapshot.pid_namespace.empty() ? std::string("unknown") : snapshot.pid_namespace) +
         "), where nvidia-smi's PIDs live; run fleetreap on the host, or in a "
         "container with the host's PID namespace (hostPID)";
}

// The first error of the nvidia-smi part, with the flags it sets either way.
Status ReadGpuAnswer(const GpuQueryAnswer& query, const FoldContext& context, FoldState* state,
                     ScanFold* fold) {
  if (query.timed_out) {
    state->nvidia_smi_error = "nvidia-smi did not answer within " +
                              std::to_string(context.nvidia_smi_timeout.count() / 1000) + "s";
    return Status::Error(ErrorKind::kCommandTimeout, state->nvidia_smi_error);
  }
  if (!query.tool_message.empty()) state->nvidia_smi_error = query.tool_message;
  fold->nvidia_smi_failed = !query.status.ok() && !query.gpu_lost;
  // No driver (exit 9) or a GPU off the bus (exit 15): nothing is signalled.
  if (!context.inspected && query.stops_ladder) fold->stops_ladder = true;
  if (!query.status.ok() && query.status.kind() != ErrorKind::kCommandFailed) return query.status;
  if (!query.status.ok() && state->nvidia_smi_error.empty()) {
    state->nvidia_smi_error = query.status.message();
  }
  return Status::Ok();
}

// The holder part of a full scan: holders, units and the respawn watch.
void FoldHolders(const HostSnapshot& snapshot, const FoldContext& context,
                 const std::vector<GpuReading>& gpus, std::vector<ComputeApp>* apps,
                 FoldState* state, HostView* view, ScanFold* fold) {
  std::vector<Holder> scanned = snapshot.holders;
  // /dev/nvidiaN is the device minor, not always nvidia-smi's index.
  MapHolderGpusToIndexes(snapshot.minors, gpus, &scanned);
  AddTableApps(snapshot.table_apps, gpus, apps);
  ChargeComputeApps(*apps, snapshot.app_processes, gpus, &scanned);
  for (Holder& h : scanned) {
    // The unit's name is believed when the holder lies in its own cgroup.
    auto unit = snapshot.units.find(h.owner.unit);
    if (unit != snapshot.units.end() && unit->second.restart != "no" &&
        (unit->second.control_group.empty() ||
         CgroupIsUnder(h.owner.cgroup, unit->second.control_group))) {
      h.owner.unit_restart = unit->second.restart;
    }
  }
  MergeHolderScan(scanned, state->protect, state->scope, context.waves, &view->holders);
  if (!context.inspected) {
    view->active_units =
        UnitsSafeToStop(snapshot.active_units, snapshot.units, snapshot.self_cgroup, view->holders,
                        state->scope, &fold->units_skipped);
  }
  view->newcomers = FindNewcomers(snapshot.children, view->holders);
  view->control_only_left_out = snapshot.control_only_left_out;
  view->holder_walk_failed = snapshot.holder_walk_failed;
  for (int pid : snapshot.children_unlisted) {
    if (std::find(view->children_unlisted.begin(), view->children_unlisted.end(), pid) ==
        view->children_unlisted.end()) {
      view->children_unlisted.push_back(pid);
    }
  }
  if (!snapshot.parents.empty()) view->parents = snapshot.parents;
  view->restarters.clear();
  for (const ChildProcess& parent : snapshot.parents) {
    auto described = snapshot.parent_processes.find(parent.parent);
    if (described != snapshot.parent_processes.end()) {
      view->restarters.push_back(described->second);
    }
  }
  for (const auto& [name, props] : snapshot.units) view->units[name] = props;
}

}  // namespace

std::vector<int> GpusToQueryOneByOne(const HostSnapshot& snapshot, const FoldContext& context,
                                     const FoldState& state) {
  const GpuQueryAnswer& query = snapshot.gpu_query;
  if (!snapshot.sees_host_pid_namespace || query.timed_out || !query.only_lost_gpus) return {};
  int count = context.expected_gpus > 0 ? context.expected_gpus
                                        : std::max(state.device_gpus, snapshot.device_gpus);
  std::vector<int> indexes;
  for (int i = 0; i < count; ++i) indexes.push_back(i);
  return indexes;
}

ScanFold FoldSnapshot(const HostSnapshot& snapshot, const FoldContext& context, FoldState* state,
                      HostView* view) {
  ScanFold fold;
  const bool holders = snapshot.holders_scanned;
  state->protect.SetSession(snapshot.shell_pid,
                            {snapshot.ancestors.begin(), snapshot.ancestors.end()});
  if (holders) {
    state->protect.SetPidFiles(snapshot.pid_files);
    if (!snapshot.sees_host_pid_namespace) {
      fold.stops_ladder = true;
      fold.status = Status::Error(ErrorKind::kCommandFailed, NamespaceError(snapshot));
      return fold;
    }
    state->device_gpus = std::max(state->device_gpus, snapshot.device_gpus);
    state->driver_gpus = std::max(state->driver_gpus, static_cast<int>(snapshot.minors.size()));
  }
  fold.status = ReadGpuAnswer(snapshot.gpu_query, context, state, &fold);
  if (!fold.status.ok()) return fold;
  std::vector<GpuReading> gpus = snapshot.gpu_query.gpus;
  std::vector<ComputeApp> apps = snapshot.apps;
  if (holders) {
    // SLURM_JOB_GPUS are device minors too; an unknown one fails the host.
    fold.status = TranslateGpuMinors(snapshot.minors, gpus, &state->scope);
    if (!fold.status.ok()) return fold;
    FoldHolders(snapshot, context, gpus, &apps, state, view, &fold);
  }
  std::vector<Holder> current;
  for (const TrackedHolder& t : view->holders) current.push_back(t.holder);
  // Without an inventory count, the driver's own GPU list and the
  // /dev/nvidiaN files held say how many GPUs there are at least: a GPU
  // that fell off the bus, or that nvidia-smi no longer lists, keeps both.
  int expected = context.expected_gpus > 0 ? context.expected_gpus
                                           : std::max(state->device_gpus, state->driver_gpus);
  NumberTheLostGpu(expected, &gpus);
  fold.status = CheckGpuIndexes(gpus, state->scope);  // --gpus 9-12 on 8 GPUs fails
  if (!fold.status.ok()) return fold;
  ClassifyGpus(current, expected, context.threshold_mib, &gpus, context.allowances);
  ApplyScopeToGpus(state->scope, current, &gpus);
  if (holders) {
    // Over the threshold under protected daemons only, and no process has
    // memory there: ghost memory (the compute apps came with this scan).
    std::vector<int> suspects = GpusHeldOnlyByProtected(view->holders, gpus);
    if (!suspects.empty()) MarkGhostsWithoutApps(suspects, apps, &gpus);
  }
  view->gpus = gpus;
  if (snapshot.health_read && !context.ready.AllOff()) {
    view->readiness = DecideReadiness(snapshot.health, gpus, context.ready);
    view->readiness_checked = true;
  }
  view->scoped = !state->scope.empty();
  bool ghost = std::any_of(gpus.begin(), gpus.end(),
                           [](const GpuReading& g) { return g.state == GpuState::kGhost; });
  fold.table_rescan = holders && ghost && !context.table_scan;
  return fold;
}

std::vector<int> SignalParents(const Action& wave, const HostView& view) {
  std::set<int> parents;
  for (const TrackedHolder& t : view.holders) {
    for (const Target& target : wave.targets) {
      if (t.holder.pid == target.pid && t.holder.ppid > 1) parents.insert(t.holder.ppid);
    }
  }
  return {parents.begin(), parents.end()};
}

SignalFold FoldSignal(const Action& wave, const SignalReply& reply, HostView* view,
                      uint64_t scan_start) {
  SignalFold fold;
  const bool kill = wave.kind == ActionKind::kKill;
  const std::vector<int> asked = SignalParents(wave, *view);
  // A holder whose parent died was reparented: nothing of it can restart
  // it, so there is nothing to watch (the re-scan may then be the quick one).
  std::set<int> parents(asked.begin(), asked.end());
  std::set<int> alive(reply.live_parents.begin(), reply.live_parents.end());
  for (TrackedHolder& t : view->holders) {
    if (parents.count(t.holder.ppid) && !alive.count(t.holder.ppid)) t.holder.ppid = 1;
  }
  auto in = [](const std::vector<int>& pids, int pid) {
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
  };
  for (const Target& target : wave.targets) {
    auto it = std::find_if(view->holders.begin(), view->holders.end(), [&](const TrackedHolder& t) {
      return t.holder.pid == target.pid && t.holder.start_time == target.start_time;
    });
    if (it == view->holders.end()) continue;
    if (in(reply.failed, target.pid)) {
      // kill(1) refused (another user's process without --become): never
      // retried, never called unkillable; the host fails at the end.
      it->term_sent = it->kill_sent = true;
      fold.refused.push_back(std::to_string(target.pid) + " (" + it->holder.user + ")");
      continue;
    }
    // Named only by nvidia-smi and holding no device file at the kill: not
    // the process the driver charged, or not one a signal would free.
    const bool young = scan_start > 0 && target.start_time >= scan_start;
    if (!target.needs_fd && !young && in(reply.gone, target.pid)) it->unheld = true;
    if (in(reply.sent, target.pid)) {
      if (it->signalled_at == 0) it->signalled_at = reply.now;
      (kill ? it->kill_sent : it->term_sent) = true;
      ++fold.sent;
    }
    auto left = std::find_if(reply.left.begin(), reply.left.end(),
                             [&](const std::pair<int, char>& l) { return l.first == target.pid; });
    if (left != reply.left.end()) {
      it->holder.state = left->second;
      if (kill) it->holder.fate = HolderFate::kUnkillable;
    } else {
      it->present = false;
      it->holder.fate = FateAfterExit(*it);
    }
  }
  return fold;
}

void ChargeComputeApps(const std::vector<ComputeApp>& apps, const std::map<int, Holder>& described,
                       const std::vector<GpuReading>& gpus, std::vector<Holder>* holders) {
  for (const ComputeApp& app : apps) {
    if (!app.pid || *app.pid <= 0) continue;
    int index = -1;
    for (const GpuReading& gpu : gpus) {
      bool same = !app.gpu_uuid.empty()
                      ? gpu.uuid == app.gpu_uuid
                      : !app.gpu_bus_id.empty() &&
                            NormalizeBusId(gpu.bus_id) == NormalizeBusId(app.gpu_bus_id);
      if (same) index = gpu.index;
    }
    auto holder = std::find_if(holders->begin(), holders->end(),
                               [&](const Holder& h) { return h.pid == *app.pid; });
    if (holder == holders->end()) {
      auto found = described.find(*app.pid);
      Holder h;
      if (found != described.end()) {
        h = found->second;
      } else {
        h.pid = *app.pid;
        h.protected_by = "not in this host's /proc";
      }
      holders->push_back(h);
      holder = holders->end() - 1;
    }
    if (index >= 0) {
      AddSorted(index, &holder->gpus);
      AddSorted(index, &holder->charged_gpus);
    }
  }
  std::sort(holders->begin(), holders->end(),
            [](const Holder& a, const Holder& b) { return a.pid < b.pid; });
}

}  // namespace fleetreap
