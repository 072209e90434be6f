// The HTML page's hosts x GPUs grid and step timelines (report_html_parts.h).
#include <algorithm>
#include <map>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/html_escape.h"
#include "fleetreap/report/step_times.h"
#include "report_html_parts.h"

namespace fleetreap {
namespace html {
namespace {

constexpr size_t kSlowestHosts = 20;  // timelines drawn in the slow tail
constexpr int kTailWidthPx = 600;     // the slowest host's bar
constexpr int kHostWidthPx = 300;     // a host's own bar in its details

std::string GroupOf(const HostReport& host) {
  for (const std::string& group : host.groups) {
    if (group != "all" && group != "ungrouped") return group;
  }
  return "ungrouped";
}

std::string Label(const GpuReading& gpu) {
  return gpu.index >= 0 ? std::to_string(gpu.index) : gpu.bus_id;
}

// What a grid row shows; hosts of a group with the same key share a row.
std::string RowKey(const HostOutcome& outcome, const HostReport& host) {
  std::string key =
      std::string(OutcomeKindLabel(outcome.kind)) + "|" + OutcomeShape(outcome.phrase);
  for (const auto* gpus : {&host.gpus_before, &host.gpus_after}) {
    key += '|';
    for (const GpuReading& gpu : *gpus) key += Label(gpu) + "=" + GpuStateName(gpu.state) + ",";
  }
  return key;
}

struct Row {
  OutcomeKind kind = OutcomeKind::kClean;
  std::string group;          // the hosts' first inventory group
  size_t group_order = 0;     // that group's place in the report
  std::vector<size_t> hosts;  // indexes into report.hosts
};

std::string Cells(const std::vector<GpuReading>& gpus, const char* when, bool memory,
                  const std::string& empty) {
  if (gpus.empty()) return "<span class=\"none\">" + empty + "</span>";
  std::string out;
  for (const GpuReading& gpu : gpus) {
    std::string title = "GPU " + Label(gpu) + " " + when + ": " + GpuStateName(gpu.state);
    if (memory && gpu.used_mib) title += ", " + std::to_string(*gpu.used_mib) + " MiB";
    out += "<i class=\"s-" + CssWord(GpuStateName(gpu.state)) + "\" title=\"" + HtmlEscape(title) +
           "\"></i>";
  }
  return out;
}

void AppendRow(const RunReport& report, const Row& row, std::string* out) {
  const HostReport& first = report.hosts[row.hosts.front()];
  const bool folded = row.hosts.size() > 1;
  std::vector<std::string> names;
  for (size_t i : row.hosts) names.push_back(report.hosts[i].name);
  std::string query;
  for (const std::string& name : names) query += name + " ";
  const std::string label = OutcomeKindLabel(row.kind);
  // A folded row's hosts share the detail's shape; it is told when they share the words too.
  std::string detail = OutcomeOf(first, report.dry_run).detail;
  for (size_t i : row.hosts) {
    if (OutcomeOf(report.hosts[i], report.dry_run).detail != detail) detail.clear();
  }
  if (folded) {
    detail = std::to_string(row.hosts.size()) + " hosts" + (detail.empty() ? "" : ": " + detail);
  }
  *out += "<tr class=\"o-" + CssWord(label) + "\" data-q=\"" + HtmlEscape(query + label) +
          "\"><th><a href=\"#h" + std::to_string(row.hosts.front()) + "\">" +
          HtmlEscape(FoldHostNames(names)) + "</a></th><td class=\"k\">" + label +
          "</td><td class=\"grp\">" + HtmlEscape(row.group) + "</td><td class=\"g\">" +
          Cells(first.gpus_before, "before", !folded, "not read") + "</td><td class=\"g\">" +
          Cells(first.gpus_after, "after", !folded, report.dry_run ? "dry run" : "not read") +
          "</td><td>" + HtmlEscape(detail) + "</td></tr>\n";
}

// The class of a step's colour: a fused step ("rescan+clean_shm+verify")
// takes its first step's.
std::string StepClass(const std::string& step) {
  if (step == kBetweenSteps) return "st-other";
  return "st-" + CssWord(step.substr(0, step.find('+')));
}

// The time a host's bar covers: its duration, or its steps' sum where
// that is longer.
std::chrono::milliseconds Span(const HostReport& host) {
  std::chrono::milliseconds steps{0};
  for (const StepTiming& timing : host.timings) steps += timing.duration;
  return std::max(host.duration, steps);
}

void AppendBar(const HostReport& host, std::chrono::milliseconds scale, int width_px,
               std::string* out) {
  // Rounded to the nearest pixel; a step that took any time gets at least one.
  auto px = [scale, width_px](std::chrono::milliseconds d) {
    if (d.count() <= 0 || scale.count() <= 0) return 0;
    const long long n = (d.count() * width_px + scale.count() / 2) / scale.count();
    return static_cast<int>(std::max(n, 1LL));
  };
  std::chrono::milliseconds steps{0};
  std::string segments;
  for (const StepTiming& timing : host.timings) {
    steps += timing.duration;
    segments += "<span class=\"" + StepClass(timing.step) +
                "\" style=\"width:" + std::to_string(px(timing.duration)) + "px\" title=\"" +
                HtmlEscape(timing.step + " " + FormatSeconds(timing.duration)) + "\"></span>";
  }
  if (host.duration > steps) {
    segments +=
        "<span class=\"st-other\" style=\"width:" + std::to_string(px(host.duration - steps)) +
        "px\" title=\"between steps " + FormatSeconds(host.duration - steps) + "\"></span>";
  }
  *out += "<span class=\"tl\" style=\"width:" + std::to_string(px(Span(host))) + "px\">" +
          segments + "</span>";
}

}  // namespace

std::string CssWord(const std::string& word) {
  std::string out;
  for (char c : word) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') out += c;
  }
  return out.empty() ? "x" : out;
}

void AppendGrid(const RunReport& report, std::string* out) {
  // One table, problems first (by outcome), then by inventory group in the
  // report's order; hosts of an outcome and group with the same GPUs share a row.
  std::map<std::string, size_t> group_order;
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of_key;
  for (size_t i = 0; i < report.hosts.size(); ++i) {
    const HostReport& host = report.hosts[i];
    const HostOutcome outcome = OutcomeOf(host, report.dry_run);
    const std::string group = GroupOf(host);
    const size_t order = group_order.try_emplace(group, group_order.size()).first->second;
    auto [it, added] = row_of_key.try_emplace(group + "\n" + RowKey(outcome, host), rows.size());
    if (added) rows.push_back(Row{outcome.kind, group, order, {}});
    rows[it->second].hosts.push_back(i);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (OutcomeRank(a.kind) != OutcomeRank(b.kind)) {
      return OutcomeRank(a.kind) < OutcomeRank(b.kind);
    }
    return a.group_order < b.group_order;
  });
  *out += "<h2>GPUs before and after</h2>\n<p class=\"legend\">";
  // Plain words; clean and protected-only share a hue (both are clean),
  // the latter marked by its border.
  const std::pair<GpuState, const char*> legend[] = {
      {GpuState::kClean, "clean"},
      {GpuState::kProtectedOnly, "clean, daemons only"},
      {GpuState::kBusy, "busy"},
      {GpuState::kGhost, "ghost memory"},
      {GpuState::kLost, "lost"},
      {GpuState::kMissing, "missing"},
      {GpuState::kRecovery, "needs recovery"},
      {GpuState::kUnknown, "unknown"},
      {GpuState::kOutOfScope, "out of scope"}};
  for (const auto& [state, words] : legend) {
    *out += "<i class=\"s-" + CssWord(GpuStateName(state)) + "\"></i>" + words;
  }
  *out +=
      "</p>\n<table class=\"grid\">\n"
      "<tr><th>hosts</th><th>outcome</th><th>group</th><th>before</th><th>after</th>"
      "<th></th></tr>\n";
  for (const Row& row : rows) AppendRow(report, row, out);
  *out += "</table>\n";
}

void AppendTimelines(const RunReport& report, std::string* out) {
  if (report.hosts.empty()) return;
  std::vector<size_t> order(report.hosts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&report](size_t a, size_t b) {
    return report.hosts[a].duration > report.hosts[b].duration;
  });
  if (order.size() > kSlowestHosts) order.resize(kSlowestHosts);
  std::chrono::milliseconds longest{0};
  for (size_t i : order) longest = std::max(longest, Span(report.hosts[i]));
  *out += "<h2>The slowest hosts</h2>\n<table class=\"tail\" id=\"tail\">\n";
  for (size_t i : order) {
    const HostReport& host = report.hosts[i];
    *out += "<tr><th><a href=\"#h" + std::to_string(i) + "\">" + HtmlEscape(host.name) +
            "</a></th><td>" + FormatSeconds(host.duration) + "</td><td>";
    AppendBar(host, longest, kTailWidthPx, out);
    *out += "</td></tr>\n";
  }
  *out += "</table>\n";

  struct StepTotal {
    int hosts = 0;
    std::chrono::milliseconds total{0};
    std::chrono::milliseconds longest{0};
  };
  std::vector<std::string> steps;
  std::map<std::string, StepTotal> totals;
  for (const HostReport& host : report.hosts) {
    for (const StepTiming& timing : host.timings) {
      if (!totals.count(timing.step)) steps.push_back(timing.step);
      StepTotal& total = totals[timing.step];
      ++total.hosts;
      total.total += timing.duration;
      total.longest = std::max(total.longest, timing.duration);
    }
  }
  if (steps.empty()) return;
  // The bars' grey, named in this legend too: settle waits, retries' backoff.
  StepTotal between;
  for (const HostReport& host : report.hosts) {
    std::chrono::milliseconds timed{0};
    for (const StepTiming& timing : host.timings) timed += timing.duration;
    if (host.duration <= timed) continue;
    ++between.hosts;
    between.total += host.duration - timed;
    between.longest = std::max(between.longest, host.duration - timed);
  }
  if (between.hosts > 0) {
    steps.push_back(kBetweenSteps);
    totals[kBetweenSteps] = between;
  }
  *out +=
      "<table class=\"outcomes\" id=\"steps\"><tr><th>step</th><th>runs</th><th>total</th>"
      "<th>longest</th></tr>\n";
  for (const std::string& step : steps) {
    const StepTotal& total = totals[step];
    *out += "<tr><td><i class=\"" + StepClass(step) +
            "\" style=\"display:inline-block;width:9px;height:11px\"></i> " + HtmlEscape(step) +
            "</td><td>" + std::to_string(total.hosts) + "</td><td>" + FormatSeconds(total.total) +
            "</td><td>" + FormatSeconds(total.longest) + "</td></tr>\n";
  }
  *out += "</table>\n";
}

void AppendTimeline(const HostReport& host, std::string* out) {
  AppendBar(host, Span(host), kHostWidthPx, out);
  std::string text;
  for (const StepTiming& timing : host.timings) {
    text += (text.empty() ? " " : ", ") + timing.step + " " + FormatSeconds(timing.duration);
  }
  *out += HtmlEscape(text);
}

}  // namespace html
}  // namespace fleetreap
