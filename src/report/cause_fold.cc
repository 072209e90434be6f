#include "fleetreap/report/cause_fold.h"

#include <algorithm>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/report/host_findings.h"

namespace fleetreap {
namespace {

// What hosts must share to share a line: every value CauseSummary says.
std::string KeyOf(const HostFinding& f) {
  std::string key = f.cause + '\x1f' + f.restart + '\x1f' + f.restart_sec + '\x1f' + f.kill_mode;
  for (const std::string& unit : f.units) key += '\x1f' + unit;
  for (const std::string& name : f.names) key += '\x1e' + name;
  for (const Holder& p : f.processes) key += '\x1d' + p.comm;
  return key;
}

}  // namespace

void CauseFold::Add(size_t index, const HostReport& host) {
  for (const HostFinding& finding : host.findings) {
    if (finding.kind == finding_kind::kRestarterAlive) {
      restarters_[index].push_back(host.name + ": " + HostFindingText(finding));
    }
  }
  for (const HostFinding& finding : host.findings) {
    if (finding.kind != finding_kind::kCause) continue;
    const std::string key = KeyOf(finding);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) {
      it = by_key_.emplace(key, groups_.size()).first;
      groups_.push_back({finding, finding.count, finding.count, 0, {}});
    }
    Group& group = groups_[it->second];
    group.fewest = std::min(group.fewest, finding.count);
    group.most = std::max(group.most, finding.count);
    group.total += finding.count;
    group.names[index] = host.name;
    return;
  }
}

std::vector<std::string> CauseFold::RestarterLines() const {
  std::vector<std::string> lines;
  for (const auto& entry : restarters_) {
    lines.insert(lines.end(), entry.second.begin(), entry.second.end());
  }
  return lines;
}

std::vector<std::string> CauseFold::Lines() const {
  std::vector<const Group*> sorted;
  for (const Group& group : groups_) sorted.push_back(&group);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Group* a, const Group* b) {
    return a->names.size() != b->names.size() ? a->names.size() > b->names.size()
                                              : a->names.begin()->first < b->names.begin()->first;
  });
  std::vector<std::string> lines;
  for (const Group* group : sorted) {
    std::vector<std::string> names;
    for (const auto& entry : group->names) names.push_back(entry.second);
    const bool same = group->most == group->fewest;
    const std::string count = std::to_string(same ? group->fewest : group->total);
    std::string hosts;
    if (names.size() > 1)
      hosts = std::to_string(names.size()) + (same ? " hosts, each: " : " hosts: ");
    lines.push_back(FoldHostNames(names) + ": " + hosts + CauseSummary(group->cause, count));
  }
  return lines;
}

}  // namespace fleetreap
