// GpuHealth and HostHealth: what a host says about whether its GPUs can run
// the next job, beside whether they are empty (gpu_reading.h): the extra
// --query-gpu fields per GPU (ECC, remapped rows, retired pages, fabric,
// persistence, PCIe link), the Xid events its kernel log still holds, and
// the host-wide facts (NVSwitch present, fabric manager running, the GPUs the
// driver itself lists). The parsers (remote/gpu_health_query.h,
// remote/xid_log.h) fill these values; escalation/readiness.h turns them into
// findings. Every reading is optional: std::nullopt means the driver or the
// host did not say ("[N/A]", "[Not Supported]", a field it does not know),
// which is never a failure. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fleetreap {

/// The readiness fields of one GPU, as nvidia-smi --query-gpu printed them.
struct GpuHealth {
  int index = -1;
  std::string bus_id;                                // as printed ("00000000:3B:00.0")
  std::optional<bool> ecc_enabled;                   // ecc.mode.current
  std::optional<bool> ecc_pending_enabled;           // ecc.mode.pending
  std::optional<int64_t> ecc_uncorrected_volatile;   // since the last driver load
  std::optional<int64_t> ecc_uncorrected_aggregate;  // over the GPU's life
  std::optional<int64_t> remapped_rows_correctable;
  std::optional<int64_t> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;  // a reset completes the remap
  std::optional<bool> remapped_rows_failure;  // a remap failed: the GPU needs service
  std::optional<bool> retired_pages_pending;  // older GPUs: a reset retires them
  std::optional<int64_t> retired_pages_sbe;
  std::optional<int64_t> retired_pages_dbe;
  /// fabric.state ("Completed", "In Progress", "Not Started") and
  /// fabric.status ("Success" or the error the driver names); "" when the GPU
  /// is on no NVLink fabric ("N/A") or the driver does not know the field.
  std::string fabric_state;
  std::string fabric_status;
  std::optional<bool> persistence_mode;
  std::optional<int> pcie_gen_current;
  std::optional<int> pcie_gen_max;
  std::optional<int> pcie_width_current;
  std::optional<int> pcie_width_max;
};

/// Xid events of one code on one GPU found in the kernel log.
struct XidEvent {
  int code = 0;
  /// The bus id as the kernel wrote it ("0000:3b:00", no function), "" when
  /// the line named none.
  std::string bus_id;
  int count = 0;
  /// The first such line's text after the code, control bytes escaped and
  /// capped (it holds a process name, which a user chooses).
  std::string message;
};

/// Whether the kernel log could be read, and what reading it means.
enum class KernelLogState {
  kNotRead,      // not asked for (the playbook's xid check is off)
  kRead,         // read; the events since boot that the log still holds
  kNotReadable,  // the user cannot read it (dmesg_restrict without root)
  kRotated,      // read, but the ring buffer no longer starts at boot: older
                 // events may be lost
};

struct HostHealth {
  std::vector<GpuHealth> gpus;  // by index, as the query printed them
  std::vector<XidEvent> xids;
  KernelLogState kernel_log = KernelLogState::kNotRead;
  /// Xid-looking kernel log lines that did not parse (counted, not trusted).
  int malformed_xid_lines = 0;
  std::optional<bool> nvswitch_present;        // /dev/nvidia-nvswitch* exist
  std::optional<bool> fabric_manager_running;  // nv-fabricmanager runs
  /// Bus ids under /proc/driver/nvidia/gpus/ ("0000:3b:00.0"); nullopt when
  /// not read.
  std::optional<std::vector<std::string>> driver_bus_ids;
};

}  // namespace fleetreap
