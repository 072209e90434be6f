#include "fleetreap/report/report_markdown.h"

#include <algorithm>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/utf8.h"

namespace fleetreap {
namespace {

bool NeedsAttention(OutcomeKind kind) {
  return kind == OutcomeKind::kDirty || kind == OutcomeKind::kNotReady ||
         kind == OutcomeKind::kFailed || kind == OutcomeKind::kUnreachable;
}

std::string ErrorText(const HostReport& host) {
  std::string text = HostMessage(host);
  if (!host.nvidia_smi_error.empty()) {
    if (!text.empty()) text += "; ";
    text += "nvidia-smi: " + host.nvidia_smi_error;
  }
  for (const ReadinessFinding& finding : host.readiness) {
    if (finding.severity != FindingSeverity::kBlock) continue;
    if (!text.empty()) text += "; ";
    text += FindingText(finding);
  }
  const std::string remedy = GhostMemoryRemedy(host);
  if (!remedy.empty()) text += (text.empty() ? "" : "; ") + remedy;
  return text;
}

}  // namespace

std::string MarkdownEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
      case '|':
      case '*':
      case '_':
      case '`':
      case '<':
      case '>':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      default:
        // Control characters (terminal escapes from remote output) go.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string RenderMarkdown(const RunReport& report) {
  return RenderMarkdown(report, ReportFold::Of(report));
}

std::string RenderMarkdown(const RunReport& report, const ReportFold& fold) {
  TableStyle plain;
  std::string verdict = RenderVerdict(report, fold, plain);
  std::string word = verdict.substr(0, verdict.find(':'));
  std::string rest = verdict.substr(verdict.find(':') + 2);

  std::string out = "## fleetreap: " + word + "\n\n";
  out += "**" + MarkdownEscape(rest) + "**\n\n";
  out += "Playbook `" + (report.playbook.empty() ? std::string("default") : report.playbook) + "`" +
         (report.dry_run ? " (dry run)" : "") + ", fleetreap " +
         MarkdownEscape(report.tool_version) + ", started " +
         FormatUtcTimestamp(report.start_time) +
         (report.run_id.empty() ? std::string() : ", run `" + report.run_id + "`") + ".\n\n";

  std::vector<OutcomeGroup> groups = fold.Groups(report);
  if (!groups.empty()) {
    out += "| Hosts | Count | Outcome | Details |\n";
    out += "|---|---:|---|---|\n";
    for (const OutcomeGroup& group : groups) {
      out += "| `" + FoldHostNames(group.names) + "` | " + std::to_string(group.names.size()) +
             " | " + OutcomeKindLabel(group.kind) + " | " + MarkdownEscape(group.detail) + " |\n";
    }
    out += "\n";
  }

  std::string attention;
  for (const HostReport& host : report.hosts) {
    HostOutcome outcome = OutcomeOf(host, report.dry_run);
    if (!NeedsAttention(outcome.kind)) continue;
    std::string details = MarkdownEscape(outcome.detail);
    for (const std::string& line : GpuAttentionLines(host))
      details += "<br>" + MarkdownEscape(line);
    attention += "| `" + host.name + "` | " + MarkdownEscape(host.address) + " | " +
                 OutcomeKindLabel(outcome.kind) + " | " + details + " | " +
                 MarkdownEscape(ErrorText(host)) + " |\n";
  }
  if (!attention.empty()) {
    out += "### Needs attention\n\n";
    out += "| Host | Address | Outcome | Details | Error |\n";
    out += "|---|---|---|---|---|\n";
    out += attention + "\n";
  }
  const std::vector<std::string> causes = fold.causes().Lines();
  if (!causes.empty()) out += "### Why the GPUs were held\n\n";
  for (const std::string& line : causes) out += "- " + MarkdownEscape(line) + "\n";
  const std::vector<std::string> restarters = fold.causes().RestarterLines();
  if (!restarters.empty()) out += (causes.empty() ? "" : "\n") + std::string("### Restarters\n\n");
  for (const std::string& line : restarters) out += "- " + MarkdownEscape(line) + "\n";
  return ReplaceInvalidUtf8(out);  // whatever bytes a process name held
}

}  // namespace fleetreap
