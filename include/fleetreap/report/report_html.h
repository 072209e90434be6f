// ReportHtml: the run as one self-contained HTML page (--html FILE), for a
// person reading a fleet of hundreds of hosts: the verdict, the outcome rows
// of the terminal table, the holder funnel (found, TERMed, KILLed, left), a
// hosts x GPUs grid of states before and after grouped by inventory group,
// the slowest hosts' step timelines, and each host's details. Inline CSS and
// a few lines of inline JavaScript (a filter, opening a host's details),
// nothing fetched: a Content-Security-Policy forbids every request. Every
// string from the report is escaped (html_escape.h). Pure function;
// thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// The whole page, '\n'-terminated. Grid: hosts go under their first
/// inventory group ("ungrouped" without one); within a group, hosts with
/// the same outcome story (kind and OutcomeShape) and the same GPU states
/// before and after share one row (names folded as gpu[001-160]), problems
/// first; each cell's title names the GPU and its state and, on a row of one
/// host, its memory. Timelines: the 20 slowest hosts, and the time per step.
/// Details: one closed <details id="hN"> per host (N its index in
/// report.hosts), which the grid rows link to.
std::string RenderHtml(const RunReport& report);

}  // namespace fleetreap
