// ReportMarkdown: the run as GitHub-flavoured Markdown (--summary-md), meant
// for a CI job's summary page ($GITHUB_STEP_SUMMARY and friends): the verdict,
// the folded outcome table, and one row per host that needs attention with
// the reason. Pure functions; thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

/// The whole summary, ending with '\n'. Hosts are folded as in the terminal
/// table; the "Needs attention" section lists every host that is not clean
/// (one row each, never folded), and is left out when there is none. Its
/// Error column holds the host's error message, nvidia-smi's error, the
/// blocking readiness findings and the GhostMemoryRemedy, joined by "; ".
std::string RenderMarkdown(const RunReport& report);

/// RenderMarkdown of a run whose hosts were folded into "fold" as they
/// ended (the same text): "report" gives the run's fields, the hosts
/// without a result and, in its hosts, at least those that are not clean
/// (ReportFold::WithHostsNotClean), the only ones the summary lists.
std::string RenderMarkdown(const RunReport& report, const ReportFold& fold);

/// "a \| b": text that cannot break a Markdown table cell or start markup;
/// line breaks become spaces and other control characters '?'.
std::string MarkdownEscape(const std::string& text);

}  // namespace fleetreap
