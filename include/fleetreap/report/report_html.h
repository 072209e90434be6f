// ReportHtml: the run as one self-contained HTML page (--html FILE), for a
// person reading a fleet of hundreds of hosts: the verdict, the outcome rows
// of the terminal table, the holder funnel (found, TERMed, KILLed, left), a
// hosts x GPUs grid of states before and after grouped by inventory group,
// the slowest hosts' step timelines, and each host's details. Inline CSS and
// a few lines of inline JavaScript (a filter, opening a host's details),
// nothing fetched: a Content-Security-Policy forbids every request. Every
// string from the report is escaped (html_escape.h). A run that streams
// its hosts folds them into a ReportFold and an HtmlFold and spills each
// host's <details> (RenderHostHtmlPiece, html_fold.h). Pure functions;
// thread-compatible.
#pragma once

#include <functional>
#include <string>

#include "fleetreap/report/html_fold.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

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

/// Takes one piece of the page at a time.
using HtmlPieceSink = std::function<void(const std::string& piece)>;
/// Hands the host pieces (RenderHostHtmlPiece) of a run to "emit", one call
/// a host, in report order.
using HostHtmlSource = std::function<void(const HtmlPieceSink& emit)>;

/// RenderHtml of a run whose hosts were folded into "fold" and "html" as
/// they ended and whose <details> "hosts" gives, handed to "emit" in
/// pieces (the page before the hosts, each host, the rest): the same page,
/// byte for byte. "header" gives the run's fields and hosts without a
/// result; its hosts are not read.
void RenderHtmlPieces(const RunReport& header, const ReportFold& fold, const HtmlFold& html,
                      const HostHtmlSource& hosts, const HtmlPieceSink& emit);

}  // namespace fleetreap
