#include "fleetreap/host_view.h"

#include <algorithm>

namespace fleetreap {

void MergeHolderScan(const std::vector<Holder>& scanned, const ProtectList& protect,
                     int waves, std::vector<TrackedHolder>* holders) {
  for (TrackedHolder& t : *holders) t.present = false;
  for (const Holder& h : scanned) {
    auto it = std::find_if(holders->begin(), holders->end(), [&](const TrackedHolder& t) {
      return t.holder.pid == h.pid && t.holder.start_time == h.start_time;
    });
    if (it != holders->end()) {
      HolderFate fate = it->holder.fate;
      std::string by = it->holder.protected_by;
      int round = it->holder.round;
      it->holder = h;
      it->holder.fate = fate == HolderFate::kGone ? HolderFate::kObserved : fate;
      it->holder.protected_by = by;
      it->holder.round = round;
      it->present = true;
      continue;
    }
    TrackedHolder t;
    t.holder = h;
    t.holder.round = waves + 1;
    // A scan may already know (a PID this /proc does not show).
    t.holder.protected_by = h.protected_by.empty() ? protect.Reason(h) : h.protected_by;
    t.holder.fate = t.holder.protected_by.empty() ? HolderFate::kObserved
                                                  : HolderFate::kProtected;
    holders->push_back(t);
  }
  for (TrackedHolder& t : *holders) {
    if (t.present || t.holder.fate == HolderFate::kProtected) continue;
    t.holder.fate = FateAfterExit(t);
  }
}

bool ReadRowsBesideLostGpus(const std::string& out, std::vector<GpuReading>* gpus) {
  std::string rows;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    LostGpu lost;
    if (!ParseLostGpuLine(line, &lost)) rows += line + "\n";
    start = end + 1;
  }
  GpuQueryResult healthy;
  if (!ParseGpuQuery(rows, "", 0, GpuQueryFields(), &healthy).ok() ||
      healthy.gpus.empty()) {
    return false;
  }
  for (const GpuReading& gpu : healthy.gpus) gpus->push_back(gpu);
  return true;
}

void NumberTheLostGpu(int expected, std::vector<GpuReading>* gpus) {
  GpuReading* lost = nullptr;
  int unnumbered = 0;
  std::vector<bool> seen(expected > 0 ? expected : 0, false);
  for (GpuReading& gpu : *gpus) {
    if (gpu.index < 0 && gpu.state == GpuState::kLost) {
      lost = &gpu;
      ++unnumbered;
    } else if (gpu.index >= 0 && gpu.index < expected) {
      seen[gpu.index] = true;
    }
  }
  if (unnumbered != 1 || std::count(seen.begin(), seen.end(), false) != 1) return;
  lost->index = static_cast<int>(std::find(seen.begin(), seen.end(), false) - seen.begin());
}

std::vector<int> GpusHeldOnlyByProtected(const std::vector<TrackedHolder>& holders,
                                         const std::vector<GpuReading>& gpus) {
  std::vector<int> suspects;
  for (const GpuReading& gpu : gpus) {
    if (gpu.state != GpuState::kBusy || gpu.index < 0) continue;
    bool unprotected = false;
    for (const TrackedHolder& t : holders) {
      bool holds = std::count(t.holder.gpus.begin(), t.holder.gpus.end(), gpu.index) > 0;
      if (t.present && holds && t.holder.fate != HolderFate::kProtected) unprotected = true;
    }
    if (!unprotected) suspects.push_back(gpu.index);
  }
  return suspects;
}

void MarkGhostsWithoutApps(const std::vector<int>& suspects,
                           const std::vector<ComputeApp>& apps,
                           std::vector<GpuReading>* gpus) {
  for (GpuReading& gpu : *gpus) {
    if (std::find(suspects.begin(), suspects.end(), gpu.index) == suspects.end()) continue;
    bool used = false;
    for (const ComputeApp& app : apps) {
      used = used || (!gpu.uuid.empty() && app.gpu_uuid == gpu.uuid) ||
             (!gpu.bus_id.empty() &&
              NormalizeBusId(app.gpu_bus_id) == NormalizeBusId(gpu.bus_id));
    }
    if (used) continue;
    gpu.state = GpuState::kGhost;
    gpu.detail = std::to_string(gpu.used_mib.value_or(0)) +
                 " MiB used by no process (protected daemons hold the device): "
                 "needs a GPU reset or a reboot";
  }
}

}  // namespace fleetreap
