// ReportJunit: the run as JUnit XML (--junit), for CI systems that show test
// results. One test case per selected host. Unlike Ansible's junit callback,
// which drops them, unreachable, failed and never-started hosts are failures
// too, so "90% unreachable" can never look like a green run. What counts as a
// failure matches ExitCodeFor: dirty hosts fail, except in a dry run. Pure
// functions; thread-compatible.
#pragma once

#include <functional>
#include <string>

#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

/// The whole document: <testsuites> with one <testsuite> named
/// "fleetreap.<playbook>" and one <testcase classname="fleetreap.<playbook>"
/// name="<host>"> per host, in report order, then never-started hosts. A
/// failing case carries <failure type="<status or error kind>"
/// message="<one line>"> with the details as text; every case has
/// <system-out> with its outcome line.
std::string RenderJunit(const RunReport& report);

/// Takes one piece of a rendered document at a time.
using JunitPieceSink = std::function<void(const std::string& piece)>;

/// RenderJunit's text handed to "emit" in order, one <testcase> a piece
/// (the header, with the counts, first), so the whole document is never
/// held. The pieces joined are RenderJunit(report), byte for byte.
void RenderJunitPieces(const RunReport& report, const JunitPieceSink& emit);

/// One host's <testcase> (its lines, '\n'-terminated, valid UTF-8) as
/// RenderJunit writes it for a run of playbook "playbook" ("" for the
/// default). A run that streams its hosts spills these as they end.
std::string RenderJunitCase(const HostReport& host, const std::string& playbook, bool dry_run);

/// Hands the <testcase>s (RenderJunitCase) of a run's hosts to "emit", one
/// call a host, in report order.
using JunitCaseSource = std::function<void(const JunitPieceSink& emit)>;

/// RenderJunitPieces of a run whose hosts were folded into "fold" as they
/// ended and whose test cases "cases" gives: the same document, byte for
/// byte. "header" gives the run's fields and hosts without a result; its
/// hosts are not read.
void RenderJunitPieces(const RunReport& header, const ReportFold& fold,
                       const JunitCaseSource& cases, const JunitPieceSink& emit);

/// "a &lt; b": text safe inside XML attributes and elements. Characters XML 1.0
/// forbids (control characters other than tab, CR, LF) become '?'.
std::string XmlEscape(const std::string& text);

}  // namespace fleetreap
