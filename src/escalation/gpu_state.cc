#include "fleetreap/escalation/gpu_state.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

namespace fleetreap {
namespace {

// "nvidia-persistenced (1234), nv-hostengine (99)" for the detail text.
std::string Names(const std::vector<const Holder*>& holders) {
  std::string names;
  for (const Holder* holder : holders) {
    if (!names.empty()) names += ", ";
    names += (holder->comm.empty() ? std::string("?") : holder->comm) + " (" +
             std::to_string(holder->pid) + ")";
  }
  return names;
}

// The allowance of a protected holder: its entry's in "allowances" (the
// entry is protected_by up to a " (" qualifier: "nvidia-cuda-mps-server",
// "nvidia-persistenced (pid file)"), else 0.
int64_t AllowanceOf(const Holder& holder, const std::map<std::string, int64_t>& allowances) {
  std::string entry = holder.protected_by.substr(0, holder.protected_by.find(" ("));
  auto found = allowances.find(entry);
  return found == allowances.end() ? 0 : found->second;
}

void Classify(const std::vector<Holder>& holders, int64_t threshold_mib,
              const std::map<std::string, int64_t>& allowances, GpuReading* gpu) {
  if (gpu->state == GpuState::kLost || gpu->state == GpuState::kMissing) return;
  std::vector<const Holder*> others, protected_holders;
  for (const Holder& holder : holders) {
    if (gpu->index < 0 || !HolderStillPresent(holder)) continue;
    if (std::find(holder.gpus.begin(), holder.gpus.end(), gpu->index) == holder.gpus.end()) {
      continue;
    }
    (holder.fate == HolderFate::kProtected ? protected_holders : others).push_back(&holder);
  }
  const bool over = gpu->used_mib && *gpu->used_mib > threshold_mib;
  const std::string used = gpu->used_mib ? std::to_string(*gpu->used_mib) + " MiB" : "";
  const std::string recovery =
      DriverAsksForRecovery(*gpu) ? "driver asks for recovery: " + gpu->recovery_action : "";
  if (!others.empty()) {
    gpu->state = GpuState::kBusy;
    gpu->detail = "held by " + Names(others) + (recovery.empty() ? "" : "; " + recovery);
  } else if (!recovery.empty()) {
    gpu->state = GpuState::kRecovery;
    gpu->detail = recovery + (used.empty() ? "" : " (" + used + " used)");
  } else if (!gpu->used_mib) {
    gpu->state = GpuState::kUnknown;
    if (gpu->detail.empty()) gpu->detail = "memory.used unknown";
  } else if (over && !protected_holders.empty()) {
    int64_t allowance = 0;
    std::set<std::string> entries;
    for (const Holder* holder : protected_holders) {
      std::string entry = holder->protected_by.substr(0, holder->protected_by.find(" ("));
      if (entries.insert(entry).second) allowance += AllowanceOf(*holder, allowances);
    }
    if (allowance > 0 && *gpu->used_mib <= threshold_mib + allowance) {
      gpu->state = GpuState::kProtectedOnly;
      gpu->detail = "held by protected " + Names(protected_holders) + ": " + used +
                    ", within the daemons' allowance of " + std::to_string(allowance) + " MiB";
    } else {
      gpu->state = GpuState::kBusy;
      gpu->detail =
          used + " used, held only by protected " + Names(protected_holders) +
          (allowance > 0 ? " (over their allowance of " + std::to_string(allowance) + " MiB)" : "");
    }
  } else if (over) {
    gpu->state = GpuState::kGhost;
    gpu->detail = used + " used with no holder: needs a GPU reset or a reboot";
  } else if (!protected_holders.empty()) {
    gpu->state = GpuState::kProtectedOnly;
    gpu->detail = "held by protected " + Names(protected_holders);
  } else {
    gpu->state = GpuState::kClean;
    gpu->detail.clear();
  }
}

}  // namespace

void MapHolderGpusToIndexes(const std::map<std::string, int>& minor_by_bus_id,
                            const std::vector<GpuReading>& gpus, std::vector<Holder>* holders) {
  std::map<std::string, int> index_by_bus_id;
  for (const GpuReading& gpu : gpus) {
    if (gpu.index >= 0 && !gpu.bus_id.empty()) {
      index_by_bus_id[NormalizeBusId(gpu.bus_id)] = gpu.index;
    }
  }
  std::map<int, int> index_by_minor;
  for (const auto& [bus_id, minor] : minor_by_bus_id) {
    auto index = index_by_bus_id.find(NormalizeBusId(bus_id));
    if (index != index_by_bus_id.end()) index_by_minor[minor] = index->second;
  }
  for (Holder& holder : *holders) {
    for (int& gpu : holder.gpus) {
      auto index = index_by_minor.find(gpu);
      if (index != index_by_minor.end()) gpu = index->second;
    }
    std::sort(holder.gpus.begin(), holder.gpus.end());
    holder.gpus.erase(std::unique(holder.gpus.begin(), holder.gpus.end()), holder.gpus.end());
  }
}

bool HolderStillPresent(const Holder& holder) {
  return holder.fate != HolderFate::kTerminated && holder.fate != HolderFate::kKilled &&
         holder.fate != HolderFate::kGone;
}

void ClassifyGpus(const std::vector<Holder>& holders, int expected_gpus, int64_t threshold_mib,
                  std::vector<GpuReading>* gpus, const std::map<std::string, int64_t>& allowances) {
  for (GpuReading& gpu : *gpus) Classify(holders, threshold_mib, allowances, &gpu);
  if (expected_gpus > 0) {
    std::set<int> present;
    size_t unindexed_lost = 0;
    for (const GpuReading& gpu : *gpus) {
      if (gpu.index >= 0) present.insert(gpu.index);
      if (gpu.index < 0 && gpu.state == GpuState::kLost) ++unindexed_lost;
    }
    for (int index = 0; index < expected_gpus; ++index) {
      if (present.count(index) != 0) continue;
      if (unindexed_lost > 0) {  // a lost GPU nvidia-smi could not number
        --unindexed_lost;
        continue;
      }
      GpuReading missing;
      missing.index = index;
      missing.state = GpuState::kMissing;
      missing.detail = "expected " + std::to_string(expected_gpus) +
                       " GPUs; nvidia-smi did not report index " + std::to_string(index);
      gpus->push_back(std::move(missing));
    }
  }
  std::stable_sort(gpus->begin(), gpus->end(), [](const GpuReading& a, const GpuReading& b) {
    return static_cast<unsigned>(a.index) < static_cast<unsigned>(b.index);
  });
}

}  // namespace fleetreap
