#include "fleetreap/report/html_fold.h"

#include <algorithm>
#include <tuple>

#include "fleetreap/report/step_times.h"
#include "report_html_parts.h"

namespace fleetreap {
namespace {

std::string GroupOf(const HostReport& host) {
  for (const std::string& group : host.groups) {
    if (group != "all" && group != "ungrouped") return group;
  }
  return "ungrouped";
}

// What a grid row shows; hosts of a group with the same key share a row.
std::string RowKey(const HostOutcome& outcome, const HostReport& host) {
  std::string key =
      std::string(OutcomeKindLabel(outcome.kind)) + "|" + OutcomeShape(outcome.phrase);
  for (const auto* gpus : {&host.gpus_before, &host.gpus_after}) {
    key += '|';
    for (const GpuReading& gpu : *gpus) {
      key += html::GridLabel(gpu) + "=" + GpuStateName(gpu.state) + ",";
    }
  }
  return key;
}

void CountHolders(const HostReport& host, HtmlFold::Funnel* funnel) {
  funnel->terms += host.term_sent;
  funnel->kills += host.kill_sent;
  for (const Holder& holder : host.holders) {
    switch (holder.fate) {
      case HolderFate::kProtected:
      case HolderFate::kOutOfScope: ++funnel->spared; continue;
      case HolderFate::kTerminated:
      case HolderFate::kKilled: ++funnel->exited; break;
      case HolderFate::kGone: ++funnel->gone; break;
      case HolderFate::kUnkillable:
      case HolderFate::kObserved:
      case HolderFate::kWouldTerm:
      case HolderFate::kWouldKill: ++funnel->left; break;
    }
    ++funnel->found;
  }
}

void AddTo(HtmlFold::StepTotal* total, std::chrono::milliseconds duration) {
  ++total->hosts;
  total->total += duration;
  total->longest = std::max(total->longest, duration);
}

}  // namespace

HtmlFold::HtmlFold(bool dry_run) : dry_run_(dry_run) {}

void HtmlFold::Add(size_t index, const HostReport& host) {
  places_.insert(std::lower_bound(places_.begin(), places_.end(), index), index);
  CountHolders(host, &funnel_);
  AddRow(index, host, OutcomeOf(host, dry_run_));
  AddTimings(index, host);
}

void HtmlFold::AddRow(size_t index, const HostReport& host, const HostOutcome& outcome) {
  const std::string group = GroupOf(host);
  auto [first, added_group] = group_first_.try_emplace(group, index);
  if (!added_group) first->second = std::min(first->second, index);
  auto [it, added] = rows_.try_emplace(group + "\n" + RowKey(outcome, host));
  Row& row = it->second;
  if (added) {
    row.kind = outcome.kind;
    row.group = group;
    row.detail = outcome.detail;
  } else if (outcome.detail != row.detail) {
    row.details_differ = true;
  }
  if (added || index < row.hosts.begin()->first) {
    row.before = host.gpus_before;
    row.after = host.gpus_after;
  }
  row.hosts.emplace(index, host.name);
}

void HtmlFold::AddTimings(size_t index, const HostReport& host) {
  std::chrono::milliseconds timed{0};
  for (size_t i = 0; i < host.timings.size(); ++i) {
    const StepTiming& timing = host.timings[i];
    auto [it, added] = steps_.try_emplace(timing.step);
    if (added || std::make_pair(index, i) < it->second.first) it->second.first = {index, i};
    AddTo(&it->second.second, timing.duration);
    timed += timing.duration;
  }
  if (host.duration > timed) AddTo(&between_, host.duration - timed);
  // Slowest first; among equals, report order, as a stable sort would leave them.
  TailHost tail{index, host.name, host.duration, host.timings};
  auto slower = [](const TailHost& a, const TailHost& b) {
    return std::make_tuple(-a.duration.count(), a.index) <
           std::make_tuple(-b.duration.count(), b.index);
  };
  auto at = std::lower_bound(slowest_.begin(), slowest_.end(), tail, slower);
  if (at - slowest_.begin() >= static_cast<std::ptrdiff_t>(kSlowestHosts)) return;
  slowest_.insert(at, std::move(tail));
  if (slowest_.size() > kSlowestHosts) slowest_.pop_back();
}

size_t HtmlFold::Place(size_t index) const {
  return static_cast<size_t>(std::lower_bound(places_.begin(), places_.end(), index) -
                             places_.begin());
}

std::vector<const HtmlFold::Row*> HtmlFold::Rows() const {
  std::vector<const Row*> rows;
  for (const auto& [key, row] : rows_) rows.push_back(&row);
  auto order = [this](const Row* row) {
    return std::make_tuple(OutcomeRank(row->kind), group_first_.at(row->group),
                           row->hosts.begin()->first);
  };
  std::sort(rows.begin(), rows.end(),
            [&order](const Row* a, const Row* b) { return order(a) < order(b); });
  return rows;
}

std::vector<std::pair<std::string, HtmlFold::StepTotal>> HtmlFold::Steps() const {
  std::vector<std::pair<std::pair<size_t, size_t>, std::string>> order;
  for (const auto& [step, seen] : steps_) order.emplace_back(seen.first, step);
  std::sort(order.begin(), order.end());
  std::vector<std::pair<std::string, StepTotal>> out;
  for (const auto& [first, step] : order) out.emplace_back(step, steps_.at(step).second);
  if (!out.empty() && between_.hosts > 0) out.emplace_back(kBetweenSteps, between_);
  return out;
}

}  // namespace fleetreap
