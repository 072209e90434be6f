#include "fleetreap/escalation/readiness.h"

#include <algorithm>
#include <cctype>

#include "fleetreap/model/pci_bus_id.h"

namespace fleetreap {
namespace {

bool Has(const std::vector<int>& list, int value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Count(int64_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

class Findings {
 public:
  void Add(CheckMode mode, const char* check, const std::string& reason, int gpu,
           const std::string& detail, const std::string& next_step) {
    if (mode == CheckMode::kOff) return;
    ReadinessFinding finding;
    finding.check = check;
    finding.reason = reason;
    finding.gpu = gpu;
    finding.detail = detail;
    finding.next_step = next_step;
    finding.severity = mode == CheckMode::kBlock ? FindingSeverity::kBlock : FindingSeverity::kWarn;
    list_.push_back(std::move(finding));
  }
  void AddForBus(CheckMode mode, const char* check, const std::string& reason,
                 const std::string& bus_id, const std::string& detail,
                 const std::string& next_step) {
    Add(mode, check, reason, -1, detail, next_step);
    if (mode != CheckMode::kOff) list_.back().bus_id = bus_id;
  }
  std::vector<ReadinessFinding> Take() { return std::move(list_); }

 private:
  std::vector<ReadinessFinding> list_;
};

void CheckMemory(const GpuHealth& gpu, const ReadyPolicy& policy, Findings* out) {
  const int at = gpu.index;
  if (gpu.ecc_enabled.value_or(false)) {
    if (gpu.ecc_uncorrected_volatile && *gpu.ecc_uncorrected_volatile > policy.ecc_volatile_max) {
      out->Add(
          policy.ecc, "ecc", "ecc_uncorrected_volatile", at,
          Count(*gpu.ecc_uncorrected_volatile, "uncorrected ECC error", "uncorrected ECC errors") +
              " since the driver loaded",
          "reset the GPU before the rollout; drain it if they return");
    }
    if (policy.ecc_aggregate_max && gpu.ecc_uncorrected_aggregate &&
        *gpu.ecc_uncorrected_aggregate > *policy.ecc_aggregate_max) {
      out->Add(
          policy.ecc, "ecc", "ecc_uncorrected_aggregate", at,
          Count(*gpu.ecc_uncorrected_aggregate, "uncorrected ECC error", "uncorrected ECC errors") +
              " over the GPU's life",
          "drain the node and open a service request");
    }
  }
  if (gpu.ecc_enabled && gpu.ecc_pending_enabled && *gpu.ecc_enabled != *gpu.ecc_pending_enabled) {
    out->Add(
        policy.ecc == CheckMode::kOff ? CheckMode::kOff : CheckMode::kWarn, "ecc",
        "ecc_mode_pending", at,
        std::string("ECC mode change to ") + (*gpu.ecc_pending_enabled ? "on" : "off") + " pending",
        "reset the GPU or reboot to apply it");
  }
  if (gpu.remapped_rows_failure.value_or(false)) {
    out->Add(policy.remapped_rows, "remapped_rows", "remapped_rows_failure", at,
             "row remapping failed", "drain the node and open a service request");
  }
  if (gpu.remapped_rows_pending.value_or(false)) {
    int64_t rows =
        gpu.remapped_rows_correctable.value_or(0) + gpu.remapped_rows_uncorrectable.value_or(0);
    std::string detail = "row remapping pending";
    if (rows > 0) detail += " (" + Count(rows, "row", "rows") + " remapped)";
    out->Add(policy.remapped_rows, "remapped_rows", "remapped_rows_pending", at, detail,
             "reset the GPU before the rollout");
  }
  if (gpu.retired_pages_pending.value_or(false)) {
    out->Add(policy.retired_pages, "retired_pages", "retired_pages_pending", at,
             "page retirement pending", "reset the GPU (or reboot) before the rollout");
  }
  int64_t retired = gpu.retired_pages_sbe.value_or(0) + gpu.retired_pages_dbe.value_or(0);
  if ((gpu.retired_pages_sbe || gpu.retired_pages_dbe) && retired > policy.retired_pages_max) {
    out->Add(policy.retired_pages, "retired_pages", "retired_pages_over_limit", at,
             Count(retired, "retired page", "retired pages") + " (limit " +
                 std::to_string(policy.retired_pages_max) + ")",
             "drain the node and open a service request");
  }
}

void CheckLinks(const GpuHealth& gpu, const ReadyPolicy& policy, Findings* out) {
  const int at = gpu.index;
  if (!gpu.fabric_state.empty() && gpu.fabric_state != "Completed") {
    out->Add(policy.fabric, "fabric", "fabric_not_registered", at,
             "fabric state " + gpu.fabric_state,
             "start nvidia-fabricmanager and wait for the fabric state Completed");
  } else if (gpu.fabric_state == "Completed" && !gpu.fabric_status.empty() &&
             gpu.fabric_status != "Success") {
    out->Add(policy.fabric, "fabric", "fabric_status", at, "fabric status " + gpu.fabric_status,
             "restart nvidia-fabricmanager; reset the GPU if it persists");
  }
  if (gpu.persistence_mode && !*gpu.persistence_mode) {
    out->Add(policy.persistence, "persistence", "persistence_off", at, "persistence mode off",
             "start nvidia-persistenced");
  }
  if (gpu.pcie_width_current && gpu.pcie_width_max && *gpu.pcie_width_current > 0 &&
      *gpu.pcie_width_current < *gpu.pcie_width_max) {
    out->Add(policy.pcie_link, "pcie_link", "pcie_width_degraded", at,
             "PCIe link x" + std::to_string(*gpu.pcie_width_current) + " of x" +
                 std::to_string(*gpu.pcie_width_max),
             "drain and reseat the GPU or check its slot and riser");
  }
  if (policy.pcie_gen && gpu.pcie_gen_current && gpu.pcie_gen_max && *gpu.pcie_gen_current > 0 &&
      *gpu.pcie_gen_current < *gpu.pcie_gen_max) {
    out->Add(policy.pcie_link, "pcie_link", "pcie_gen_degraded", at,
             "PCIe gen " + std::to_string(*gpu.pcie_gen_current) + " of gen " +
                 std::to_string(*gpu.pcie_gen_max),
             "drain and check the GPU's slot and riser");
  }
}

// The driver's own verdict (gpu_recovery_action): not a playbook check, it
// blocks whenever readiness is read. The next step is the action's.
void CheckRecovery(const std::vector<GpuReading>& gpus, Findings* out) {
  for (const GpuReading& gpu : gpus) {
    if (!DriverAsksForRecovery(gpu) || gpu.index < 0) continue;
    const std::string& action = gpu.recovery_action;
    std::string reason = "recovery_action_";
    for (char c : action) {
      const unsigned char u = static_cast<unsigned char>(c);
      reason += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
    }
    std::string next = "do what the driver asks: " + action;
    if (action == "Reset") next = "reset the GPU before the rollout";
    if (action == "Reboot") next = "drain and reboot";
    if (action == "Drain P2P") next = "stop the GPU's peer-to-peer work, then reset the GPU";
    if (action == "Drain and Reset") next = "drain the node, then reset the GPU";
    out->Add(CheckMode::kBlock, "recovery_action", reason, gpu.index,
             "the driver asks for recovery action " + action, next);
  }
}

CheckMode XidMode(const ReadyPolicy& policy, int code) {
  if (policy.xid == CheckMode::kOff) return CheckMode::kOff;
  if (Has(policy.xid_fatal, code)) return policy.xid;
  if (Has(policy.xid_informational, code)) return CheckMode::kWarn;
  return policy.xid_unlisted == CheckMode::kBlock ? policy.xid : policy.xid_unlisted;
}

void CheckXids(const HostHealth& health, const std::vector<GpuReading>& gpus,
               const ReadyPolicy& policy, Findings* out) {
  if (policy.xid == CheckMode::kOff) return;
  for (const XidEvent& event : health.xids) {
    const XidRule* rule = FindXidRule(event.code);
    std::string meaning = rule ? rule->meaning : "an Xid the catalogue of fleetreap does not name";
    std::string next = rule ? rule->next_step
                            : "look it up in NVIDIA's Xid catalog; drain the node if it is fatal";
    std::string detail = "Xid " + std::to_string(event.code) +
                         (event.count > 1 ? " (" + std::to_string(event.count) + " times)" : "") +
                         " since boot: " + meaning;
    int index = -1;
    for (const GpuReading& gpu : gpus) {
      if (SamePciDevice(event.bus_id, gpu.bus_id)) index = gpu.index;
    }
    std::string reason = "xid_" + std::to_string(event.code);
    if (index >= 0) {
      out->Add(XidMode(policy, event.code), "xid", reason, index, detail, next);
    } else {
      out->AddForBus(XidMode(policy, event.code), "xid", reason, event.bus_id, detail, next);
    }
  }
  CheckMode log_mode = CheckMode::kWarn;
  if (health.kernel_log == KernelLogState::kNotReadable) {
    out->Add(log_mode, "kernel_log", "kernel_log_not_readable", -1,
             "kernel log not readable: Xid events unknown",
             "run fleetreap as root (or with sudo) to read them");
  } else if (health.kernel_log == KernelLogState::kRotated) {
    out->Add(log_mode, "kernel_log", "kernel_log_rotated", -1,
             "kernel log wrapped since boot: older Xid events are lost",
             "check journalctl -k for Xid lines since boot");
  }
  if (health.malformed_xid_lines > 0) {
    out->Add(log_mode, "kernel_log", "kernel_log_malformed", -1,
             Count(health.malformed_xid_lines, "Xid line", "Xid lines") + " not understood",
             "read them with dmesg");
  }
}

void CheckHost(const HostHealth& health, const std::vector<GpuReading>& gpus,
               const ReadyPolicy& policy, Findings* out) {
  if (health.nvswitch_present.value_or(false) && health.fabric_manager_running &&
      !*health.fabric_manager_running) {
    out->Add(policy.fabric, "fabric", "fabric_manager_not_running", -1,
             "fabric manager not running on an NVSwitch system", "start nvidia-fabricmanager");
  }
  if (!health.driver_bus_ids) return;
  for (const std::string& bus : *health.driver_bus_ids) {
    bool listed = false;
    for (const GpuReading& gpu : gpus) {
      if (NormalizeBusId(gpu.bus_id) == NormalizeBusId(bus) && gpu.state != GpuState::kLost) {
        listed = true;
      }
    }
    if (!listed) {
      out->AddForBus(policy.gpu_count, "gpu_count", "gpu_not_answering", bus,
                     "known to the driver but not answering nvidia-smi", "drain and reboot");
    }
  }
}

}  // namespace

ReadyPolicy::ReadyPolicy() {
  for (const XidRule& rule : XidCatalogue()) {
    (rule.fatal ? xid_fatal : xid_informational).push_back(rule.code);
  }
}

bool ReadyPolicy::AllOff() const {
  for (CheckMode mode :
       {ecc, remapped_rows, retired_pages, fabric, persistence, pcie_link, xid, gpu_count}) {
    if (mode != CheckMode::kOff) return false;
  }
  return true;
}

std::vector<ReadinessFinding> DecideReadiness(const HostHealth& health,
                                              const std::vector<GpuReading>& gpus,
                                              const ReadyPolicy& policy) {
  Findings out;
  std::vector<const GpuHealth*> by_index;
  for (const GpuHealth& gpu : health.gpus) by_index.push_back(&gpu);
  std::stable_sort(by_index.begin(), by_index.end(), [](const GpuHealth* a, const GpuHealth* b) {
    return static_cast<unsigned>(a->index) < static_cast<unsigned>(b->index);
  });
  for (const GpuHealth* gpu : by_index) {
    CheckMemory(*gpu, policy, &out);
    CheckLinks(*gpu, policy, &out);
  }
  CheckRecovery(gpus, &out);
  std::vector<ReadinessFinding> per_gpu = out.Take();
  Findings rest;
  CheckXids(health, gpus, policy, &rest);
  CheckHost(health, gpus, policy, &rest);
  std::vector<ReadinessFinding> host = rest.Take();
  // The Xid findings that name a GPU join that GPU's, in index order.
  std::vector<ReadinessFinding> all = std::move(per_gpu);
  for (ReadinessFinding& finding : host) all.push_back(std::move(finding));
  std::stable_sort(all.begin(), all.end(),
                   [](const ReadinessFinding& a, const ReadinessFinding& b) {
                     return static_cast<unsigned>(a.gpu) < static_cast<unsigned>(b.gpu);
                   });
  return all;
}

bool HostGpusEmptyButForNamedMissing(const std::vector<GpuReading>& gpus, int64_t threshold_mib,
                                     const std::vector<ReadinessFinding>& findings) {
  const bool named = std::any_of(findings.begin(), findings.end(), [](const ReadinessFinding& f) {
    return f.check == "gpu_count" && f.severity == FindingSeverity::kBlock;
  });
  std::vector<GpuReading> present;
  for (const GpuReading& gpu : gpus) {
    if (!(named && gpu.state == GpuState::kMissing)) present.push_back(gpu);
  }
  return named && present.size() < gpus.size() && HostGpusEmpty(present, threshold_mib);
}

}  // namespace fleetreap
