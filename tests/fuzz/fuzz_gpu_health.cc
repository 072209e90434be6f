// Fuzzes ParseGpuHealth (the readiness fields of --query-gpu), then decides
// readiness from what it returned.
#include <cstddef>
#include <cstdint>

#include "fleetreap/escalation/readiness.h"
#include "fleetreap/remote/gpu_health_query.h"
#include "fuzz_input.h"

namespace fleetreap {
namespace {

const std::vector<std::string>& FieldsFor(const std::string& err) {
  static const std::vector<std::vector<std::string>> kFields = {
      GpuHealthFields(),
      {"pci.bus_id", "fabric.state", "fabric.status", "remapped_rows.pending"},
      {"index", "memory.used", "ecc.errors.uncorrected.volatile.total", "pcie.link.width.current",
       "pcie.link.width.max"},
  };
  return kFields[err.size() % kFields.size()];
}

}  // namespace
}  // namespace fleetreap

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  HostHealth health;
  Status status = ParseGpuHealth(input.out, FieldsFor(input.err), &health.gpus);
  FuzzCheck(status.ok() || status.kind() == ErrorKind::kParse);
  FuzzCheck(status.ok() || health.gpus.empty());
  for (const GpuHealth& gpu : health.gpus) {
    FuzzCheck(!gpu.ecc_uncorrected_volatile || *gpu.ecc_uncorrected_volatile >= 0);
    FuzzCheck(gpu.fabric_status.find('\n') == std::string::npos);
  }
  for (const ReadinessFinding& finding : DecideReadiness(health, {}, ReadyPolicy())) {
    FuzzCheck(!finding.check.empty() && !finding.next_step.empty());
    FuzzCheck(FindingText(finding).find('\n') == std::string::npos);
  }
  return 0;
}
