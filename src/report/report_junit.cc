#include "fleetreap/report/report_junit.h"

#include "fleetreap/base/time_format.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/utf8.h"

namespace fleetreap {
namespace {

std::string Attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + XmlEscape(value) + "\"";
}

// What a host's testcase carries, as CI servers read JUnit (Jenkins, GitLab):
// <failure> an assertion that did not hold (the host was reached and is not
// clean), <error> the check itself could not be made (unreachable, failed,
// never started, no report).
enum class CaseResult { kPassed, kFailure, kError };

CaseResult ResultOf(const HostReport& host, bool dry_run) {
  switch (host.status) {
    case HostStatus::kClean: return CaseResult::kPassed;
    case HostStatus::kDirty:
    case HostStatus::kNotReady: return dry_run ? CaseResult::kPassed : CaseResult::kFailure;
    case HostStatus::kUnreachable:
    case HostStatus::kFailed: return CaseResult::kError;
  }
  return CaseResult::kError;
}

std::string MibText(const std::optional<int64_t>& mib) { return mib ? std::to_string(*mib) : "?"; }

// The details a CI reader needs to act, one fact a line.
std::string FailureDetails(const HostReport& host) {
  std::string text;
  if (!HostMessage(host).empty()) text += HostMessage(host) + "\n";
  if (!host.nvidia_smi_error.empty()) {
    text += "nvidia-smi: " + host.nvidia_smi_error + "\n";
  }
  const std::vector<GpuReading>& gpus =
      host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
  for (const GpuReading& gpu : gpus) {
    if (GpuStateIsClean(gpu.state)) {
      continue;
    }
    text += GpuLabel(gpu) + " " + GpuStateName(gpu.state) + " " + MibText(gpu.used_mib) + "/" +
            MibText(gpu.total_mib) + " MiB";
    if (!gpu.detail.empty()) text += " (" + gpu.detail + ")";
    text += "\n";
  }
  for (const Holder& holder : host.holders) {
    if (holder.fate != HolderFate::kUnkillable) continue;
    text += "pid " + std::to_string(holder.pid) + " (" + holder.comm + ") unkillable, state " +
            std::string(1, holder.state) + "\n";
  }
  if (!host.respawning_parent.empty()) {
    text += "holders respawned by " + host.respawning_parent + "\n";
  }
  if (!host.reset_blocked_by.empty()) {
    text += "GPU reset blocked by " + host.reset_blocked_by + "\n";
  }
  for (const ReadinessFinding& finding : host.readiness) {
    text += std::string(finding.severity == FindingSeverity::kBlock ? "not ready: " : "warning: ") +
            FindingText(finding) + "\n";
  }
  return text;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

namespace {

std::string SuiteName(const RunReport& report) {
  return "fleetreap." + (report.playbook.empty() ? std::string("default") : report.playbook);
}

// Everything before the first <testcase>: the counts need every host.
std::string Header(const RunReport& report, const ReportFold& fold, size_t without_result) {
  int tests = static_cast<int>(fold.hosts() + without_result);
  // ResultOf, counted.
  const int errors = static_cast<int>(without_result) + fold.Count(HostStatus::kUnreachable) +
                     fold.Count(HostStatus::kFailed);
  const int failures =
      report.dry_run ? 0 : fold.Count(HostStatus::kDirty) + fold.Count(HostStatus::kNotReady);
  std::string counts =
      Attr("tests", std::to_string(tests)) + Attr("failures", std::to_string(failures)) +
      Attr("errors", std::to_string(errors)) + Attr("time", FormatSecondsMillis(report.duration));
  auto property = [](const char* name, const std::string& value) {
    return "      <property" + Attr("name", name) + Attr("value", value) + "/>\n";
  };
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites" + Attr("name", "fleetreap") + counts + ">\n";
  out += "  <testsuite" + Attr("name", SuiteName(report)) + counts + Attr("skipped", "0") +
         Attr("timestamp", FormatUtcTimestamp(report.start_time)) + ">\n";
  out += "    <properties>\n";
  out += property("tool_version", report.tool_version);
  if (!report.run_id.empty()) out += property("run_id", report.run_id);
  out += property("dry_run", report.dry_run ? "true" : "false");
  out += property("interrupted", report.interrupted ? "true" : "false");
  if (!report.stopped.empty()) out += property("stopped", report.stopped);
  out += property("exit_code", std::to_string(ExitCodeFor(report, fold)));
  out += "    </properties>\n";
  return out;
}

std::string HostCase(const HostReport& host, const std::string& suite, bool dry_run) {
  HostOutcome outcome = OutcomeOf(host, dry_run);
  std::string line = std::string(OutcomeKindLabel(outcome.kind)) + ": " + outcome.detail;
  std::string out = "    <testcase" + Attr("classname", suite) + Attr("name", host.name) +
                    Attr("time", FormatSecondsMillis(host.duration)) + ">\n";
  const CaseResult result = ResultOf(host, dry_run);
  if (result != CaseResult::kPassed) {
    const char* element = result == CaseResult::kError ? "error" : "failure";
    std::string type = host.error_kind != ErrorKind::kNone ? ErrorKindName(host.error_kind)
                                                           : HostStatusName(host.status);
    out += std::string("      <") + element + Attr("type", type) + Attr("message", line) + ">" +
           XmlEscape(FailureDetails(host)) + "</" + element + ">\n";
  }
  // The restarters and the cause, one a line, for the CI reader.
  for (const HostFinding& finding : host.findings) {
    if (finding.kind == finding_kind::kRestarterAlive || finding.kind == finding_kind::kCause) {
      line += "\n" + HostFindingText(finding);
    }
  }
  out += "      <system-out>" + XmlEscape(line) + "</system-out>\n";
  out += "    </testcase>\n";
  return out;
}

std::string MissingCase(const HostWithoutResult& host, const std::string& suite,
                        const std::string& stopped) {
  std::string out = "    <testcase" + Attr("classname", suite) + Attr("name", host.name) +
                    Attr("time", "0.000") + ">\n";
  out += "      <error" + Attr("type", host.started_never ? "not_started" : "no_report") +
         Attr("message", !host.started_never ? "no report: " + host.why
                         : stopped.empty()   ? "not started: the run was interrupted"
                                             : "not started: " + host.why) +
         "/>\n";
  out += "    </testcase>\n";
  return out;
}

}  // namespace

// XML must be well-formed UTF-8 whatever bytes a process name held: each
// piece is made so on its own (a piece ends on our own markup, never inside
// a host's text).
std::string RenderJunitCase(const HostReport& host, const std::string& playbook, bool dry_run) {
  RunReport named;
  named.playbook = playbook;
  return ReplaceInvalidUtf8(HostCase(host, SuiteName(named), dry_run));
}

void RenderJunitPieces(const RunReport& header, const ReportFold& fold,
                       const JunitCaseSource& cases, const JunitPieceSink& emit) {
  const std::string suite = SuiteName(header);
  const std::vector<HostWithoutResult> without = HostsWithoutResult(header);
  emit(ReplaceInvalidUtf8(Header(header, fold, without.size())));
  cases(emit);
  for (const HostWithoutResult& host : without) {
    emit(ReplaceInvalidUtf8(MissingCase(host, suite, header.stopped)));
  }
  emit("  </testsuite>\n</testsuites>\n");
}

void RenderJunitPieces(const RunReport& report, const JunitPieceSink& emit) {
  RenderJunitPieces(
      report, ReportFold::Of(report),
      [&report](const JunitPieceSink& host) {
        for (const HostReport& each : report.hosts) {
          host(RenderJunitCase(each, report.playbook, report.dry_run));
        }
      },
      emit);
}

std::string RenderJunit(const RunReport& report) {
  std::string out;
  RenderJunitPieces(report, [&out](const std::string& piece) { out += piece; });
  return out;
}

}  // namespace fleetreap
