// ReportMarkdown: the run as GitHub-flavoured Markdown (--summary-md), meant
// for a CI job's summary page ($GITHUB_STEP_SUMMARY and friends): the verdict,
// the folded outcome table, and one row per host that needs attention with
// the reason. Pure functions; thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// The whole summary, ending with '\n'. Hosts are folded as in the terminal
/// table; the "Needs attention" section lists every host that is not clean
/// (one row each, never folded), and is left out when there is none.
std::string RenderMarkdown(const RunReport& report);

/// "a \| b": text that cannot break a Markdown table cell or start markup;
/// line breaks become spaces and other control characters '?'.
std::string MarkdownEscape(const std::string& text);

}  // namespace fleetreap
