// ReportHtmlParts (private to report_html*.cc): the sections of the HTML
// page, each appended to "out" as a pure function of the folded report. Strings
// from the report go through HtmlEscape; class names are built only from
// fleetreap's own words (CssWord). Thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/html_fold.h"
#include "fleetreap/report/report.h"

namespace fleetreap {
namespace html {

/// "word" with every character but a-z, 0-9, '_' and '-' dropped, for class
/// names ("needs_recovery", "stop_units"); "x" when nothing is left.
std::string CssWord(const std::string& word);

/// A GPU in the grid: its index, else its bus id ("3", "0000:B1:00.0").
std::string GridLabel(const GpuReading& gpu);

/// The hosts x GPUs grid, one table by outcome (problems first), then by
/// inventory group (report_html_grid.cc).
void AppendGrid(const HtmlFold& fold, std::string* out);

/// The slowest hosts' step timelines and the time spent per step
/// (report_html_grid.cc).
void AppendTimelines(const HtmlFold& fold, std::string* out);

/// One host's steps as a bar scaled to its own duration.
void AppendTimeline(const HostReport& host, std::string* out);

}  // namespace html
}  // namespace fleetreap
