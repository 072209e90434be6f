#include "fleetreap/report/report_stream.h"

#include <utility>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/report/drain_reason.h"
#include "fleetreap/report/failed_hosts.h"
#include "fleetreap/report/report_html.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "fleetreap/report/report_metrics.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/terminal.h"

namespace fleetreap {

Status ReportStream::Open(const ReportFiles& files, const std::string& playbook, bool dry_run,
                          size_t hosts, std::unique_ptr<ReportStream>* out) {
  std::unique_ptr<ReportStream> stream(new ReportStream(dry_run));
  stream->playbook_ = playbook;
  Status status;
  if (!files.json.empty()) status = HostSpill::Open(files.json, hosts, &stream->json_);
  if (status.ok() && !files.junit.empty()) {
    status = HostSpill::Open(files.junit, hosts, &stream->junit_);
  }
  if (status.ok()) *out = std::move(stream);
  return status;
}

bool ReportStream::NeedsWholeReports(const ReportFiles& files) {
  return !files.metrics.empty() || !files.html.empty();
}

void ReportStream::Add(size_t index, const HostReport& host) {
  fold_.Add(index, host);
  if (json_) json_->Put(index, RenderHostJsonPiece(host, fold_.dry_run()));
  if (junit_) junit_->Put(index, RenderJunitCase(host, playbook_, fold_.dry_run()));
}

Status ReportStream::WriteReports(const RunReport& header, const ReportFiles& files,
                                  std::FILE* stdout_stream) {
  const RunReport not_clean = fold_.WithHostsNotClean(header);
  auto whole = [](const RunReport& report,
                  std::string (*render)(const RunReport&)) -> ReportRenderer {
    return [&report, render](const ReportPieceSink& emit) { emit(render(report)); };
  };
  struct Output {
    const std::string& path;
    HostSpill* spill;  // the pieces it is put together from, if any
    ReportRenderer render;
    unsigned mode = kPrivateReportMode;
  };
  const Output outputs[] = {
      {files.json, json_.get(),
       [&](const ReportPieceSink& emit) {
         RenderJsonPieces(
             header, fold_, [this](const JsonPieceSink& host) { json_->ForEach(host); }, emit);
       }},
      {files.junit, junit_.get(),
       [&](const ReportPieceSink& emit) {
         RenderJunitPieces(
             header, fold_, [this](const JunitPieceSink& host) { junit_->ForEach(host); }, emit);
       }},
      {files.summary_md, nullptr,
       [&](const ReportPieceSink& emit) { emit(RenderMarkdown(not_clean, fold_)); }},
      {files.failed_hosts, nullptr, whole(not_clean, RenderFailedHosts)},
      {files.drain_reasons, nullptr, whole(not_clean, RenderDrainReasons)},
      {files.metrics, nullptr, whole(header, RenderMetrics), kPublicReportMode},
      {files.html, nullptr, whole(header, RenderHtml)},
  };
  Status first;
  for (const Output& output : outputs) {
    if (output.path.empty()) continue;
    // A spill that lost a piece during the run would make a report that
    // lies: the existing file is left as it is.
    Status status = output.spill != nullptr ? output.spill->status() : Status::Ok();
    if (status.ok())
      status = WriteReportPieces(output.path, output.render, stdout_stream, output.mode);
    if (status.ok() && output.spill != nullptr) status = output.spill->status();
    if (!status.ok() && first.ok()) first = status;
  }
  return first;
}

int FinishRun(const RunReport& report, ReportStream* stream, const ReportFiles& files,
              const std::string& color, bool verbose) {
  std::FILE* human = HumanStream(files);
  Status status = stream->WriteReports(report, files);
  TableStyle style;
  style.color = ShouldUseColorFor(human, color);
  style.width = TerminalWidth(human);
  style.verbose = verbose;
  std::fputs(stream->fold().RenderPlan(verbose, style.width).c_str(),
             human);  // "" unless a dry run
  std::fputs(RenderTable(report, stream->fold(), style).c_str(), human);
  std::fflush(human);
  const int code = ExitCodeFor(report, stream->fold());
  if (!status.ok()) {
    std::fprintf(stderr, "fleetreap: %s; exit %d instead of %d\n", status.message().c_str(),
                 kExitSoftware, code);
    return kExitSoftware;
  }
  return code;
}

}  // namespace fleetreap
