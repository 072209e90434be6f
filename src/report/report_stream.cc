#include "fleetreap/report/report_stream.h"

#include <utility>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/report/drain_reason.h"
#include "fleetreap/report/failed_hosts.h"
#include "fleetreap/report/report_html.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/terminal.h"

namespace fleetreap {
namespace {

// The outputs, in the order they are written. A new output is a renderer
// (and, when it has one, a host piece) and a row here, and its flag.
const std::vector<ReportOutput> kOutputs = {
    {"--json", &ReportFiles::json, kPrivateReportMode,
     [](const HostReport& host, const ReportStream& stream) {
       return RenderHostJsonPiece(host, stream.fold().dry_run());
     },
     [](ReportStream& stream, const RunReport& header, size_t row, const ReportPieceSink& emit) {
       RenderJsonPieces(
           header, stream.fold(),
           [&stream, row](const JsonPieceSink& host) { stream.ForEachPiece(row, host); }, emit);
     }},
    {"--junit", &ReportFiles::junit, kPrivateReportMode,
     [](const HostReport& host, const ReportStream& stream) {
       return RenderJunitCase(host, stream.playbook(), stream.fold().dry_run());
     },
     [](ReportStream& stream, const RunReport& header, size_t row, const ReportPieceSink& emit) {
       RenderJunitPieces(
           header, stream.fold(),
           [&stream, row](const JunitPieceSink& host) { stream.ForEachPiece(row, host); }, emit);
     }},
    {"--summary-md", &ReportFiles::summary_md, kPrivateReportMode, nullptr,
     [](ReportStream& stream, const RunReport& header, size_t, const ReportPieceSink& emit) {
       emit(RenderMarkdown(stream.fold().WithHostsNotClean(header), stream.fold()));
     }},
    {"--failed-hosts", &ReportFiles::failed_hosts, kPrivateReportMode, nullptr,
     [](ReportStream& stream, const RunReport& header, size_t, const ReportPieceSink& emit) {
       emit(RenderFailedHosts(stream.fold().WithHostsNotClean(header)));
     }},
    {"--drain-reasons", &ReportFiles::drain_reasons, kPrivateReportMode, nullptr,
     [](ReportStream& stream, const RunReport& header, size_t, const ReportPieceSink& emit) {
       emit(RenderDrainReasons(stream.fold().WithHostsNotClean(header)));
     }},
    {"--metrics", &ReportFiles::metrics, kPublicReportMode, nullptr,
     [](ReportStream& stream, const RunReport& header, size_t, const ReportPieceSink& emit) {
       RenderMetricsPieces(header, stream.fold(), stream.metrics(), emit);
     }},
    {"--html", &ReportFiles::html, kPrivateReportMode,
     [](const HostReport& host, const ReportStream& stream) {
       return RenderHostHtmlPiece(host, stream.fold().dry_run());
     },
     [](ReportStream& stream, const RunReport& header, size_t row, const ReportPieceSink& emit) {
       RenderHtmlPieces(
           header, stream.fold(), stream.html(),
           [&stream, row](const HtmlPieceSink& host) { stream.ForEachPiece(row, host); }, emit);
     }},
    // Written while the run happens (journal.h), not by WriteReports.
    {"--journal", &ReportFiles::journal, kPrivateReportMode, nullptr, nullptr},
};

}  // namespace

const std::vector<ReportOutput>& ReportOutputs() { return kOutputs; }

Status ReportStream::Open(const ReportFiles& files, const std::string& playbook, bool dry_run,
                          size_t hosts, std::unique_ptr<ReportStream>* out) {
  std::unique_ptr<ReportStream> stream(new ReportStream(files, playbook, dry_run));
  for (size_t row = 0; row < kOutputs.size(); ++row) {
    const std::string& path = files.*kOutputs[row].path;
    if (path.empty() || kOutputs[row].piece == nullptr) continue;
    Status status = HostSpill::Open(path, hosts, &stream->spills_[row]);
    if (!status.ok()) return status;
  }
  *out = std::move(stream);
  return Status::Ok();
}

ReportStream::ReportStream(const ReportFiles& files, const std::string& playbook, bool dry_run)
    : fold_(dry_run), playbook_(playbook), spills_(kOutputs.size()) {
  if (!files.metrics.empty()) metrics_ = std::make_unique<MetricsFold>(dry_run);
  if (!files.html.empty()) html_ = std::make_unique<HtmlFold>(dry_run);
}

void ReportStream::Add(size_t index, const HostReport& host) {
  fold_.Add(index, host);
  if (metrics_) metrics_->Add(index, host);
  if (html_) html_->Add(index, host);
  for (size_t row = 0; row < kOutputs.size(); ++row) {
    if (spills_[row]) spills_[row]->Put(index, kOutputs[row].piece(host, *this));
  }
}

void ReportStream::ForEachPiece(size_t row, const ReportPieceSink& emit) {
  if (spills_[row]) spills_[row]->ForEach(emit);
  if (whole_ == nullptr || kOutputs[row].piece == nullptr) return;
  for (const HostReport& host : whole_->hosts) emit(kOutputs[row].piece(host, *this));
}

Status ReportStream::WriteReports(const RunReport& header, const ReportFiles& files,
                                  std::FILE* stdout_stream) {
  Status first;
  for (size_t row = 0; row < kOutputs.size(); ++row) {
    const ReportOutput& output = kOutputs[row];
    const std::string& path = files.*output.path;
    if (path.empty() || output.render == nullptr) continue;
    // A spill that lost a piece during the run would make a report that
    // lies: the existing file is left as it is.
    HostSpill* spill = spills_[row].get();
    Status status = spill != nullptr ? spill->status() : Status::Ok();
    if (status.ok()) {
      status = WriteReportPieces(
          path, [&](const ReportPieceSink& emit) { output.render(*this, header, row, emit); },
          stdout_stream, output.mode);
    }
    if (status.ok() && spill != nullptr) status = spill->status();
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

ReportStream ReportStream::OfWhole(const RunReport& report, const ReportFiles& files) {
  ReportStream stream(files, report.playbook, report.dry_run);
  stream.whole_ = &report;
  for (size_t i = 0; i < report.hosts.size(); ++i) stream.Add(i, report.hosts[i]);
  return stream;
}

// The whole report's writers: its hosts fed to a stream, one path for both.
Status WriteReports(const RunReport& report, const ReportFiles& files, std::FILE* stdout_stream) {
  return ReportStream::OfWhole(report, files).WriteReports(report, files, stdout_stream);
}

int FinishRun(const RunReport& report, const ReportFiles& files, const std::string& color,
              bool verbose) {
  ReportStream stream = ReportStream::OfWhole(report, files);
  return FinishRun(report, &stream, files, color, verbose);
}

}  // namespace fleetreap
