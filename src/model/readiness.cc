#include "fleetreap/model/readiness.h"

namespace fleetreap {

const char* FindingSeverityName(FindingSeverity severity) {
  return severity == FindingSeverity::kBlock ? "block" : "warn";
}

std::string FindingText(const ReadinessFinding& finding) {
  std::string where;
  if (finding.gpu >= 0) {
    where = "GPU " + std::to_string(finding.gpu) + ": ";
  } else if (!finding.bus_id.empty()) {
    where = "GPU " + finding.bus_id + ": ";
  }
  std::string text = where + finding.detail;
  if (!finding.next_step.empty()) text += ": " + finding.next_step;
  return text;
}

bool AnyBlocking(const std::vector<ReadinessFinding>& findings) {
  for (const ReadinessFinding& finding : findings) {
    if (finding.severity == FindingSeverity::kBlock) return true;
  }
  return false;
}

}  // namespace fleetreap
