#include "fleetreap/gpu_state.h"

namespace fleetreap {

bool HolderStillPresent(const Holder& holder) {
  return holder.fate != HolderFate::kTerminated &&
         holder.fate != HolderFate::kKilled && holder.fate != HolderFate::kGone;
}

void ClassifyGpus(const std::vector<Holder>&, int, int64_t,
                  std::vector<GpuReading>*) {}

bool HostGpusClean(const std::vector<GpuReading>&) { return false; }

}  // namespace fleetreap
