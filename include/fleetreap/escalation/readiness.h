// Readiness: whether an empty host can take the next job, decided from its
// health readings (model/gpu_health.h) under the playbook's "ready:" checks
// and thresholds (ReadyPolicy), as named findings with the next step
// (model/readiness.h). Which Xids are fatal and which informational follows
// NVIDIA's Xid catalogue (XidCatalogue(), each entry naming its source;
// docs/readiness.md). Pure: no clock, no I/O; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/escalation/xid_catalogue.h"
#include "fleetreap/model/gpu_health.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/readiness.h"

namespace fleetreap {

/// What a check's findings do: nothing (not checked), a warning, or block.
enum class CheckMode { kOff, kWarn, kBlock };

/// The playbook's "ready:" section. Defaults are those of docs/readiness.md.
struct ReadyPolicy {
  CheckMode ecc = CheckMode::kBlock;
  CheckMode remapped_rows = CheckMode::kBlock;
  CheckMode retired_pages = CheckMode::kBlock;
  CheckMode fabric = CheckMode::kBlock;  // fabric state and the fabric manager
  CheckMode persistence = CheckMode::kWarn;
  CheckMode pcie_link = CheckMode::kBlock;
  CheckMode xid = CheckMode::kBlock;
  CheckMode gpu_count = CheckMode::kBlock;  // the driver's GPUs against nvidia-smi's

  /// Uncorrected ECC errors since the driver loaded that a GPU may have.
  int64_t ecc_volatile_max = 0;
  /// Over the GPU's life; nullopt: not checked (a reset does not clear it).
  std::optional<int64_t> ecc_aggregate_max;
  /// Retired pages (single- plus double-bit) a GPU may have.
  int64_t retired_pages_max = 60;
  /// Also compare the PCIe generation (an idle GPU lowers it to save power,
  /// so only the width is compared by default).
  bool pcie_gen = false;
  /// Xid codes that block (fatal) and that only warn (informational); a
  /// code in neither takes xid_unlisted.
  std::vector<int> xid_fatal;
  std::vector<int> xid_informational;
  CheckMode xid_unlisted = CheckMode::kWarn;

  /// The catalogue's fatal and informational codes.
  ReadyPolicy();
  /// True when every check is off ("ready: off").
  bool AllOff() const;
};

/// The findings for one host: "health" as read, "gpus" the classified
/// readings of the same scan (for the GPU indexes of Xid lines and the
/// driver's GPU list). Findings come per GPU in index order, then the
/// host-wide ones; each check off in "policy" gives none, and a reading the
/// driver did not give is skipped, never a finding. A GPU of "gpus" whose
/// driver asks for a recovery action (DriverAsksForRecovery) is a blocking
/// "recovery_action" finding whatever "policy" says (the caller runs none
/// when every check is off), its next step the action's.
std::vector<ReadinessFinding> DecideReadiness(const HostHealth& health,
                                              const std::vector<GpuReading>& gpus,
                                              const ReadyPolicy& policy);

/// True when "gpus" read empty (HostGpusEmpty at "threshold_mib") but for
/// GPUs only missing from nvidia-smi (kMissing) while a blocking gpu_count
/// finding of "findings" names them (the driver lists them): the readiness
/// reports those, with their next step, so the host is not ready rather
/// than dirty. False without such a finding, or when no GPU is missing.
bool HostGpusEmptyButForNamedMissing(const std::vector<GpuReading>& gpus, int64_t threshold_mib,
                                     const std::vector<ReadinessFinding>& findings);

}  // namespace fleetreap
