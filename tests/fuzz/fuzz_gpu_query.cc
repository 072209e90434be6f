// Fuzzes ParseGpuQuery (and through it the CSV reader, the failure classifier
// and the lost-GPU line parser), then classifies what it returned.
#include <cstddef>
#include <cstdint>

#include "fleetreap/escalation/gpu_state.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fuzz_input.h"

namespace fleetreap {
namespace {

const std::vector<std::string>& FieldsFor(const std::string& err) {
  static const std::vector<std::vector<std::string>> kFields = {
      GpuQueryFields(),
      {"memory.used", "name", "index", "memory.total"},
      {"gpu_name", "driver_version", "memory.total", "memory.used"},
      {"uuid", "memory.used"},
  };
  return kFields[err.size() % kFields.size()];
}

}  // namespace
}  // namespace fleetreap

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  GpuQueryResult result;
  Status status =
      ParseGpuQuery(input.out, input.err, input.exit_code, FieldsFor(input.err), &result);
  for (const GpuReading& gpu : result.gpus) {
    FuzzCheck(gpu.state == GpuState::kUnknown || gpu.state == GpuState::kLost);
    FuzzCheck(!gpu.used_mib || *gpu.used_mib >= 0);
    FuzzCheck(status.ok() || gpu.state == GpuState::kLost);
    FuzzCheck(input.exit_code == 0 || status.ok() || gpu.state == GpuState::kLost);
  }
  FuzzCheck(status.ok() || status.kind() == ErrorKind::kParse ||
            status.kind() == ErrorKind::kCommandFailed);
  // A failing exit is read only when lost GPUs explain it.
  FuzzCheck(input.exit_code == 0 || !status.ok() || result.failure == NvidiaSmiFailure::kGpuLost);
  if (status.ok() && result.failure != NvidiaSmiFailure::kNone) {
    FuzzCheck(result.failure == NvidiaSmiFailure::kGpuLost);
  }
  ClassifyGpus({}, static_cast<int>(input.err.size() % 9), 5, &result.gpus);
  HostGpusClean(result.gpus);
  LostGpu lost;
  ParseLostGpuLine(input.out, &lost);
  NormalizeBusId(input.err);
  return 0;
}
