#include "fleetreap/model/gpu_health.h"

namespace fleetreap {

const char* KernelLogStateName(KernelLogState state) {
  switch (state) {
    case KernelLogState::kNotRead: return "not_read";
    case KernelLogState::kRead: return "read";
    case KernelLogState::kNotReadable: return "not_readable";
    case KernelLogState::kRotated: return "rotated";
  }
  return "not_read";
}

}  // namespace fleetreap
