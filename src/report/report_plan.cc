#include "fleetreap/report/report_plan.h"

#include <algorithm>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_pattern.h"

namespace fleetreap {
namespace {

constexpr size_t kFieldCap = 64;

std::string Field(const std::string& text) { return EscapeControlBytes(text, kFieldCap, false); }

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string GpuText(const std::vector<int>& gpus) {
  if (gpus.empty()) return "-";
  std::vector<std::string> parts;
  for (int gpu : gpus) parts.push_back(std::to_string(gpu));
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + Join(parts, ",");
}

// What the holder would get, and why it is left alone when it is.
std::pair<std::string, std::string> Verdict(const Holder& holder) {
  switch (holder.fate) {
    case HolderFate::kWouldTerm: return {"TERM", ""};
    case HolderFate::kWouldKill: return {"KILL", ""};
    case HolderFate::kProtected: return {"leave", "protected: " + Field(holder.protected_by)};
    case HolderFate::kOutOfScope: return {"leave", "out of scope: " + Field(holder.out_of_scope)};
    case HolderFate::kObserved: return {"leave", "observed only"};
    default: return {"leave", HolderFateName(holder.fate)};
  }
}

std::string HostPlan(const HostReport& host, std::string* headline) {
  std::vector<std::vector<std::string>> rows;
  int signals = 0;
  for (const Holder& holder : host.holders) {
    auto [what, why] = Verdict(holder);
    if (what != "leave") ++signals;
    std::string owner = DescribeOwner(holder.owner);
    rows.push_back({what, "pid " + std::to_string(holder.pid), Field(holder.comm),
                    GpuText(holder.gpus), Field(holder.user),
                    JoinNonEmpty({Field(owner), why}, "  ")});
  }
  std::vector<size_t> widths(5, 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size() + 1);
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line = "    ";
    for (size_t i = 0; i < widths.size(); ++i) line += Pad(row[i], widths[i]);
    line += row[5];
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  }
  for (const std::string& unit : host.units_would_stop) text += "    stop   " + Field(unit) + "\n";
  for (const std::string& path : host.shm_would_remove) text += "    remove " + Field(path) + "\n";
  std::vector<std::string> parts;
  if (signals > 0) parts.push_back("would signal " + std::to_string(signals));
  if (!host.units_would_stop.empty()) {
    parts.push_back("stop " + std::to_string(host.units_would_stop.size()) +
                    (host.units_would_stop.size() == 1 ? " unit" : " units"));
  }
  if (!host.shm_would_remove.empty()) {
    parts.push_back("remove " + std::to_string(host.shm_would_remove.size()) +
                    (host.shm_would_remove.size() == 1 ? " /dev/shm entry" : " /dev/shm entries"));
  }
  *headline = parts.empty() ? "nothing to do" : Join(parts, ", ");
  return text;
}

}  // namespace

std::string RenderPlan(const RunReport& report) {
  if (!report.dry_run) return "";
  PlanFold fold;
  for (size_t i = 0; i < report.hosts.size(); ++i) fold.Add(i, report.hosts[i]);
  return fold.Render();
}

void PlanFold::Add(size_t index, const HostReport& host) {
  if (host.status == HostStatus::kUnreachable || host.status == HostStatus::kFailed) return;
  std::string headline;
  std::string body = HostPlan(host, &headline);
  if (body.empty()) return;
  std::string text = headline + "\n" + body;
  auto it = by_text_.find(text);
  if (it == by_text_.end()) {
    by_text_.emplace(text, plans_.size());
    plans_.push_back({std::move(text), index, {{index, host.name}}});
    return;
  }
  Plan& plan = plans_[it->second];
  plan.first = std::min(plan.first, index);
  plan.hosts.emplace_back(index, host.name);
}

std::string PlanFold::Render() const {
  std::vector<const Plan*> sorted;
  for (const Plan& plan : plans_) sorted.push_back(&plan);
  std::sort(sorted.begin(), sorted.end(),
            [](const Plan* a, const Plan* b) { return a->first < b->first; });
  std::string out;
  for (const Plan* plan : sorted) {
    std::vector<std::pair<size_t, std::string>> hosts = plan->hosts;
    std::sort(hosts.begin(), hosts.end());
    std::vector<std::string> names;
    for (auto& host : hosts) names.push_back(std::move(host.second));
    out += FoldHostNames(names) + ": " + plan->text;
  }
  return out;
}

}  // namespace fleetreap
