// ReportJson: the machine-readable run report (--json). One versioned JSON
// document, complete per host, built with nlohmann::json; docs/report.md
// describes it and docs/json-schema.json is its JSON Schema. Pure functions;
// thread-compatible.
#pragma once

#include <functional>
#include <string>

#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

/// The value of the document's "schema_version". Raised only when a field is
/// removed or changes meaning; new fields keep the version.
inline constexpr int kReportSchemaVersion = 2;

/// The whole report as pretty-printed JSON (2-space indent, '\n' at the end).
/// Keys keep a fixed order, so equal reports give byte-equal documents.
/// Unknown memory readings are null, absent errors are null.
std::string RenderJson(const RunReport& report);

/// Takes one piece of a rendered document at a time.
using JsonPieceSink = std::function<void(const std::string& piece)>;

/// RenderJson's text handed to "emit" in order, in pieces: the document
/// before "hosts", then each host's object as it is rendered, then the
/// rest. The whole document is never built or held, so a writer can put a
/// 10,000-host report on disk one host at a time. The pieces joined are
/// RenderJson(report), byte for byte.
void RenderJsonPieces(const RunReport& report, const JsonPieceSink& emit);

/// One host's object as RenderJson's "hosts" holds it: pretty-printed, each
/// line indented by four spaces, no separator and no '\n' at the end. A
/// run that streams its hosts spills these as they end.
std::string RenderHostJsonPiece(const HostReport& host, bool dry_run);

/// Hands the host pieces (RenderHostJsonPiece) of a run to "emit", one
/// call a host, in report order.
using HostJsonSource = std::function<void(const JsonPieceSink& emit)>;

/// RenderJsonPieces of a run whose hosts were folded into "fold" as they
/// ended and whose host objects "hosts" gives: the same document, byte for
/// byte. "header" gives the run's fields and hosts without a result; its
/// hosts are not read.
void RenderJsonPieces(const RunReport& header, const ReportFold& fold, const HostJsonSource& hosts,
                      const JsonPieceSink& emit);

/// The same document on one line, without the '\n' (the journal's run line).
std::string RenderJsonLine(const RunReport& report);

/// One host's object of the document (an element of "hosts"), on one line,
/// without '\n': the journal's record of a finished host.
std::string RenderHostJsonLine(const HostReport& host, bool dry_run);

}  // namespace fleetreap
