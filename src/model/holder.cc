#include "fleetreap/model/holder.h"

namespace fleetreap {

const char* HolderFateName(HolderFate fate) {
  switch (fate) {
    case HolderFate::kObserved: return "observed";
    case HolderFate::kTerminated: return "terminated";
    case HolderFate::kKilled: return "killed";
    case HolderFate::kGone: return "gone";
    case HolderFate::kProtected: return "protected";
    case HolderFate::kUnkillable: return "unkillable";
    case HolderFate::kWouldTerm: return "would_term";
    case HolderFate::kWouldKill: return "would_kill";
    case HolderFate::kOutOfScope: return "out_of_scope";
  }
  return "observed";
}

bool NeverSignalled(HolderFate fate) {
  return fate == HolderFate::kProtected || fate == HolderFate::kUnkillable ||
         fate == HolderFate::kOutOfScope;
}

}  // namespace fleetreap
