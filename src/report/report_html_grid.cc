// The HTML page's hosts x GPUs grid and step timelines (report_html_parts.h).
#include <algorithm>
#include <map>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/html_escape.h"
#include "fleetreap/report/html_fold.h"
#include "fleetreap/report/step_times.h"
#include "report_html_parts.h"

namespace fleetreap {
namespace html {
namespace {

constexpr int kTailWidthPx = 600;  // the slowest host's bar
constexpr int kHostWidthPx = 300;  // a host's own bar in its details

std::string Cells(const std::vector<GpuReading>& gpus, const char* when, bool memory,
                  const std::string& empty) {
  if (gpus.empty()) return "<span class=\"none\">" + empty + "</span>";
  std::string out;
  for (const GpuReading& gpu : gpus) {
    std::string title = "GPU " + GridLabel(gpu) + " " + when + ": " + GpuStateName(gpu.state);
    if (memory && gpu.used_mib) title += ", " + std::to_string(*gpu.used_mib) + " MiB";
    out += "<i class=\"s-" + CssWord(GpuStateName(gpu.state)) + "\" title=\"" + HtmlEscape(title) +
           "\"></i>";
  }
  return out;
}

void AppendRow(const HtmlFold& fold, const HtmlFold::Row& row, std::string* out) {
  const bool folded = row.hosts.size() > 1;
  std::vector<std::string> names;
  std::string query;
  for (const auto& [index, name] : row.hosts) {
    names.push_back(name);
    query += name + " ";
  }
  const std::string label = OutcomeKindLabel(row.kind);
  // A folded row's hosts share the detail's shape; it is told when they share the words too.
  std::string detail = row.details_differ ? "" : row.detail;
  if (folded) {
    detail = std::to_string(row.hosts.size()) + " hosts" + (detail.empty() ? "" : ": " + detail);
  }
  *out += "<tr class=\"o-" + CssWord(label) + "\" data-q=\"" + HtmlEscape(query + label) +
          "\"><th><a href=\"#h" + std::to_string(fold.Place(row.hosts.begin()->first)) + "\">" +
          HtmlEscape(FoldHostNames(names)) + "</a></th><td class=\"k\">" + label +
          "</td><td class=\"grp\">" + HtmlEscape(row.group) + "</td><td class=\"g\">" +
          Cells(row.before, "before", !folded, "not read") + "</td><td class=\"g\">" +
          Cells(row.after, "after", !folded, fold.dry_run() ? "dry run" : "not read") +
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
std::chrono::milliseconds Span(std::chrono::milliseconds duration,
                               const std::vector<StepTiming>& timings) {
  std::chrono::milliseconds steps{0};
  for (const StepTiming& timing : timings) steps += timing.duration;
  return std::max(duration, steps);
}

void AppendBar(std::chrono::milliseconds duration, const std::vector<StepTiming>& timings,
               std::chrono::milliseconds scale, int width_px, std::string* out) {
  // Rounded to the nearest pixel; a step that took any time gets at least one.
  auto px = [scale, width_px](std::chrono::milliseconds d) {
    if (d.count() <= 0 || scale.count() <= 0) return 0;
    const long long n = (d.count() * width_px + scale.count() / 2) / scale.count();
    return static_cast<int>(std::max(n, 1LL));
  };
  std::chrono::milliseconds steps{0};
  std::string segments;
  for (const StepTiming& timing : timings) {
    steps += timing.duration;
    segments += "<span class=\"" + StepClass(timing.step) +
                "\" style=\"width:" + std::to_string(px(timing.duration)) + "px\" title=\"" +
                HtmlEscape(timing.step + " " + FormatSeconds(timing.duration)) + "\"></span>";
  }
  if (duration > steps) {
    segments += "<span class=\"st-other\" style=\"width:" + std::to_string(px(duration - steps)) +
                "px\" title=\"between steps " + FormatSeconds(duration - steps) + "\"></span>";
  }
  *out += "<span class=\"tl\" style=\"width:" + std::to_string(px(Span(duration, timings))) +
          "px\">" + segments + "</span>";
}

}  // namespace

std::string GridLabel(const GpuReading& gpu) {
  return gpu.index >= 0 ? std::to_string(gpu.index) : gpu.bus_id;
}

std::string CssWord(const std::string& word) {
  std::string out;
  for (char c : word) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') out += c;
  }
  return out.empty() ? "x" : out;
}

void AppendGrid(const HtmlFold& fold, std::string* out) {
  // One table, problems first (by outcome), then by inventory group in the
  // report's order; hosts of an outcome and group with the same GPUs share a row.
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
  for (const HtmlFold::Row* row : fold.Rows()) AppendRow(fold, *row, out);
  *out += "</table>\n";
}

void AppendTimelines(const HtmlFold& fold, std::string* out) {
  if (fold.hosts() == 0) return;
  std::chrono::milliseconds longest{0};
  for (const HtmlFold::TailHost& host : fold.slowest()) {
    longest = std::max(longest, Span(host.duration, host.timings));
  }
  *out += "<h2>The slowest hosts</h2>\n<table class=\"tail\" id=\"tail\">\n";
  for (const HtmlFold::TailHost& host : fold.slowest()) {
    *out += "<tr><th><a href=\"#h" + std::to_string(fold.Place(host.index)) + "\">" +
            HtmlEscape(host.name) + "</a></th><td>" + FormatSeconds(host.duration) + "</td><td>";
    AppendBar(host.duration, host.timings, longest, kTailWidthPx, out);
    *out += "</td></tr>\n";
  }
  *out += "</table>\n";
  const std::vector<std::pair<std::string, HtmlFold::StepTotal>> steps = fold.Steps();
  if (steps.empty()) return;
  // The bars' grey (kBetweenSteps), named in this legend too: settle waits, retries' backoff.
  *out +=
      "<table class=\"outcomes\" id=\"steps\"><tr><th>step</th><th>runs</th><th>total</th>"
      "<th>longest</th></tr>\n";
  for (const auto& [step, total] : steps) {
    *out += "<tr><td><i class=\"" + StepClass(step) +
            "\" style=\"display:inline-block;width:9px;height:11px\"></i> " + HtmlEscape(step) +
            "</td><td>" + std::to_string(total.hosts) + "</td><td>" + FormatSeconds(total.total) +
            "</td><td>" + FormatSeconds(total.longest) + "</td></tr>\n";
  }
  *out += "</table>\n";
}

void AppendTimeline(const HostReport& host, std::string* out) {
  AppendBar(host.duration, host.timings, Span(host.duration, host.timings), kHostWidthPx, out);
  std::string text;
  for (const StepTiming& timing : host.timings) {
    text += (text.empty() ? " " : ", ") + timing.step + " " + FormatSeconds(timing.duration);
  }
  *out += HtmlEscape(text);
}

}  // namespace html
}  // namespace fleetreap
