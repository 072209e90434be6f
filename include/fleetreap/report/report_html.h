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

/// The whole page, '\n'-terminated. Grid rows: one per host that needs
/// attention or was acted on; hosts of one group with the same outcome and
/// the same GPU states before and after fold into one row (names folded as
/// gpu[001-180]); each cell's title gives the GPU, its states and, on
/// unfolded rows, its memory. Hosts are put under their first inventory
/// group ("ungrouped" without one). Details: one closed <details id="hN">
/// per host (N its index in report.hosts) that a grid row links to.
std::string RenderHtml(const RunReport& report);

}  // namespace fleetreap
