// ReportReader: reads a JSON run report (report_json.h's document, as
// `fleetreap --json` writes it) back into a RunReport, so that reports made
// on many nodes can be joined (report_merge.h). The inverse of RenderJson:
// RenderJson(read(RenderJson(r))) == RenderJson(r). nlohmann::json is used
// inside and its exceptions never leave. Pure functions; thread-compatible.
#pragma once

#include <string>

#include "fleetreap/base/status.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// Parses "text", a JSON report, into "report". "source" (a file name)
/// starts every error message. Fields derived from others (exit_code,
/// summary, a host's outcome, changed and summary, the scope's description)
/// are ignored and recomputed by the renderers. The fields that identify
/// something are required: schema_version, start_time, playbook, dry_run and
/// hosts; a host's name and status; a GPU's index and state; a holder's pid
/// and fate. Every other field may be absent or null (older reports lack
/// newer fields) and then keeps RunReport's default; a present field of the
/// wrong type or an unknown enum value is an error. On failure returns
/// kInvalidInput, e.g.
///   a.json: not JSON (parse error at byte 1)
///   a.json: schema_version 3 is not supported (this fleetreap reads 1 to 2)
///   a.json: hosts[0]: missing "name"
///   a.json: hosts[0].port: expected an integer, got string
///   a.json: hosts[0].status: unknown value "bogus"
/// and "report" is left in an unspecified state.
[[nodiscard]] Status ReadReportJson(const std::string& text, const std::string& source,
                                    RunReport* report);

/// Parses "text", one host object as RenderHostJsonLine writes it (an
/// element of a report's "hosts"), into "host", with the rules and errors of
/// ReadReportJson; "where" names it in errors ("j.journal:3: host.port: ...").
[[nodiscard]] Status ReadHostJson(const std::string& text, const std::string& where,
                                  HostReport* host);

/// Parses "2026-11-30T03:04:05.678Z" (FormatUtcTimestamp's form). False on
/// anything else.
bool ParseUtcTimestamp(const std::string& text, std::chrono::system_clock::time_point* time);

}  // namespace fleetreap
