// The ladder's steps: their names and the default list (playbook.h).
#include <algorithm>

#include "fleetreap/escalation/playbook.h"

namespace fleetreap {
namespace {

constexpr Step kAllSteps[] = {Step::kInspect, Step::kStopUnits, Step::kTerm,   Step::kKill,
                              Step::kRescan,  Step::kCleanShm,  Step::kVerify, Step::kResetGhosts};

}  // namespace

const char* StepName(Step step) {
  switch (step) {
    case Step::kInspect: return "inspect";
    case Step::kStopUnits: return "stop_units";
    case Step::kTerm: return "term";
    case Step::kKill: return "kill";
    case Step::kRescan: return "rescan";
    case Step::kCleanShm: return "clean_shm";
    case Step::kVerify: return "verify";
    case Step::kResetGhosts: return "reset_ghosts";
  }
  return "inspect";
}

bool StepFromName(const std::string& name, Step* step) {
  for (Step candidate : kAllSteps) {
    if (name == StepName(candidate)) {
      *step = candidate;
      return true;
    }
  }
  return false;
}

std::vector<Step> DefaultPlaybookSteps() {
  return {Step::kInspect, Step::kStopUnits, Step::kTerm,  Step::kKill,
          Step::kRescan,  Step::kCleanShm,  Step::kVerify};
}

bool Playbook::Runs(Step step) const {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

}  // namespace fleetreap
