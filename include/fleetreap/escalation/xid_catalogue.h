// XidCatalogue: which NVIDIA Xid events keep a GPU from the next job
// (fatal) and which only say that an application failed (informational),
// with what each means and the next step, following NVIDIA's Xid catalogue
// and Xid documentation; every entry names its source. The playbook's
// "ready:" lists start from it (escalation/readiness.h). Constant data;
// thread-safe.
#pragma once

#include <vector>

namespace fleetreap {

/// One Xid of the built-in catalogue.
struct XidRule {
  int code = 0;
  bool fatal = false;          // blocks the host; else informational (a warning)
  const char* meaning = "";    // "the GPU fell off the bus"
  const char* next_step = "";  // "drain and reboot"
  const char* source = "";     // where the classification comes from
};

/// The Xids fleetreap knows, by code: 48, 63, 64, 74, 79, 95, 119, 120, 140
/// and 154 fatal; 13, 31, 43, 45, 92 and 94 informational.
const std::vector<XidRule>& XidCatalogue();

/// The rule for "code", or nullptr when the catalogue has none.
const XidRule* FindXidRule(int code);

}  // namespace fleetreap
