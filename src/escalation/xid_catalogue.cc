#include "fleetreap/escalation/xid_catalogue.h"

namespace fleetreap {

// Sources: "NVIDIA Xid catalog" is NVIDIA, "Analyzing Xid Errors with the Xid
// Catalog" (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html),
// its "Resolution Bucket (Immediate Action)" column; "NVIDIA Xid
// documentation" is NVIDIA, "Xid Errors"
// (https://docs.nvidia.com/deploy/xid-errors/index.html), the Xid's own text.

const std::vector<XidRule>& XidCatalogue() {
  static const std::vector<XidRule> kRules = {
      {13, false, "graphics engine exception (an application fault)",
       "nothing to do for the GPU; check the application",
       "NVIDIA Xid catalog, immediate action RESTART_APP"},
      {31, false, "GPU memory page fault (an application's illegal address)",
       "nothing to do for the GPU; check the application",
       "NVIDIA Xid catalog, immediate action RESTART_APP"},
      {43, false, "GPU stopped processing after an application fault (the GPU stays healthy)",
       "nothing to do for the GPU", "NVIDIA Xid catalog, immediate action RESTART_APP"},
      {45, false, "preemptive cleanup: the driver ended a stopped application's work",
       "nothing to do",
       "NVIDIA Xid documentation (Xid 45: Ctrl-C, a reset or SIGKILL ends an application)"},
      {48, true, "double-bit ECC error", "reset the GPU before the rollout; drain it if it returns",
       "NVIDIA Xid documentation (Xid 48: a GPU reset or node reboot clears it)"},
      {63, true, "a memory row was marked for remapping",
       "reset the GPU before the rollout to apply the remap",
       "NVIDIA Xid documentation (Xid 63: row remapping takes effect at the next GPU reset)"},
      {64, true, "row remapping failed", "drain the node and open a service request",
       "NVIDIA Xid documentation (Xid 64: the remapper could not record the row)"},
      {74, true, "NVLink error",
       "reset the GPU (or reboot) before the rollout; check its NVLink peers",
       "NVIDIA Xid documentation (Xid 74: a GPU reset or node reboot clears it)"},
      {79, true, "the GPU fell off the bus", "drain and reboot",
       "NVIDIA Xid catalog, immediate action RESTART_BM"},
      {94, false, "contained ECC error: the application that met it was stopped",
       "nothing to do for the GPU; the affected application restarts",
       "NVIDIA Xid catalog, immediate action RESTART_APP"},
      {92, false, "high single-bit ECC error rate", "nothing to do now; watch the GPU's ECC counts",
       "NVIDIA Xid documentation (Xid 92: corrected errors over the threshold)"},
      {95, true, "uncontained ECC error", "reset the GPU before the rollout",
       "NVIDIA Xid catalog, immediate action RESET_GPU"},
      {119, true, "the GPU's system processor (GSP) stopped answering",
       "reset the GPU; reboot if it returns", "NVIDIA Xid catalog, immediate action RESET_GPU"},
      {120, true, "GSP error", "reset the GPU; reboot if it returns",
       "NVIDIA Xid catalog, immediate action RESET_GPU"},
      {140, true, "unrecovered ECC error", "reset the GPU before the rollout",
       "NVIDIA Xid catalog, immediate action RESET_GPU"},
      {154, true, "the driver asked for a recovery action",
       "do what gpu_recovery_action says (reset the GPU or reboot)",
       "NVIDIA Xid catalog (Xid 154 reports a change of the GPU recovery action)"},
  };
  return kRules;
}

const XidRule* FindXidRule(int code) {
  for (const XidRule& rule : XidCatalogue()) {
    if (rule.code == code) return &rule;
  }
  return nullptr;
}

}  // namespace fleetreap
