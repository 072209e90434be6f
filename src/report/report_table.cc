#include "fleetreap/report/report_table.h"

#include <algorithm>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/text_wrap.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/step_times.h"

namespace fleetreap {

const char* OutcomeColor(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kClean:
    case OutcomeKind::kCleaned: return "\033[32m";     // green
    case OutcomeKind::kWouldClean: return "\033[36m";  // cyan
    case OutcomeKind::kDirty:
    case OutcomeKind::kNotReady: return "\033[33m";  // yellow
    case OutcomeKind::kFailed:
    case OutcomeKind::kUnreachable: return "\033[31m";  // red
    case OutcomeKind::kNotStarted:
    case OutcomeKind::kNoReport: return "\033[35m";  // magenta
  }
  return "";
}

namespace {

const char* kReset = "\033[0m";

std::string Paint(const std::string& text, const char* color, bool enabled) {
  if (!enabled) return text;
  return color + text + kReset;
}

// A GPU's detail on one terminal line: control bytes escaped ("\x1b"), so a
// hostile message can neither break the table nor drive the terminal;
// backslashes are left alone (the parsers already escaped theirs).
std::string OneLineDetail(const std::string& detail) {
  // The parsers cut nvidia-smi's lines at 400 bytes already (remote's
  // kMaxToolLine); a detail from a merged report is cut there too.
  constexpr size_t kDetailCap = 400;
  return EscapeControlBytes(detail, kDetailCap, /*backslashes=*/false);
}

}  // namespace

std::vector<std::string> GpuAttentionLines(const HostReport& host) {
  const std::vector<GpuReading>& gpus =
      host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
  std::vector<std::string> lines;
  for (const GpuReading& gpu : gpus) {
    if (gpu.state != GpuState::kLost && gpu.state != GpuState::kRecovery) continue;
    std::string line = GpuLabel(gpu) + (gpu.state == GpuState::kLost ? " lost" : " needs recovery");
    if (!gpu.detail.empty()) line += ": " + OneLineDetail(gpu.detail);
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> RowDetailLines(const HostReport& host) {
  std::vector<std::string> lines = GpuAttentionLines(host);
  // Each /dev/shm entry left in place, and why (names escaped).
  for (const std::string& kept : host.shm_kept) {
    lines.push_back("/dev/shm kept " + OneLineDetail(kept));
  }
  for (const std::string& note : HostNotes(host)) lines.push_back("note: " + OneLineDetail(note));
  return lines;
}

std::string RenderVerdict(const RunReport& report, const TableStyle& style) {
  return RenderVerdict(report, ReportFold::Of(report), style);
}

std::string RenderVerdict(const RunReport& report, const ReportFold& fold,
                          const TableStyle& style) {
  const int cleaned = fold.Count(OutcomeKind::kCleaned);
  const int clean = fold.Count(OutcomeKind::kClean) + cleaned;
  const int would_clean = fold.Count(OutcomeKind::kWouldClean);
  const int dirty = fold.Count(OutcomeKind::kDirty);
  const int not_ready = fold.Count(OutcomeKind::kNotReady);
  const int failed = fold.Count(OutcomeKind::kFailed);
  const int unreachable = fold.Count(OutcomeKind::kUnreachable);
  int not_started = static_cast<int>(report.not_started.size());
  int no_report = static_cast<int>(report.no_report.size());
  int total = static_cast<int>(fold.hosts()) + not_started + no_report;
  int exit_code = ExitCodeFor(report, fold);

  std::string word;
  const char* color;
  if (report.interrupted) {
    word = "INTERRUPTED";
    color = "\033[1;35m";
  } else if (!report.stopped.empty()) {
    word = "STOPPED";
    color = "\033[1;35m";
  } else if (report.dry_run) {
    word = "DRY RUN";
    color = "\033[1;36m";
  } else if (exit_code == 0) {
    word = "READY";
    color = "\033[1;32m";
  } else {
    word = "NOT READY";
    color = "\033[1;31m";
  }
  std::string text = std::to_string(clean) + "/" + std::to_string(total) +
                     (total == 1 ? " host clean" : " hosts clean");
  if (cleaned > 0) text += " (" + std::to_string(cleaned) + " cleaned)";
  auto add = [&text](int count, const char* what) {
    if (count > 0) text += ", " + std::to_string(count) + " " + what;
  };
  add(would_clean, "would clean");
  add(dirty, "dirty");
  add(not_ready, "not ready");
  add(failed, "failed");
  add(unreachable, "unreachable");
  add(not_started, "not started");
  add(no_report, "without a report");
  text += " in " + FormatSeconds(report.duration);
  if (report.dry_run) text += ", nothing changed";
  if (style.exit_code) text += " (exit " + std::to_string(exit_code) + ")";
  return Paint(word + ":", color, style.color) + " " + text;
}

namespace {

// A row's host and its notes (null: none).
struct RowHost {
  const std::string* name;
  const HostRowNotes* notes;
};

// The reasons of a row's hosts, each distinct one once: the whole row's
// when every host shares it, else prefixed with the hosts that share it.
std::vector<std::string> ReasonLines(const std::vector<RowHost>& hosts) {
  struct Reason {
    std::string generic;
    std::vector<const RowHost*> hosts;
  };
  std::vector<Reason> reasons;
  size_t with_reason = 0;
  for (const RowHost& host : hosts) {
    if (host.notes == nullptr || host.notes->generic_reason.empty()) continue;
    const std::string& generic = host.notes->generic_reason;
    ++with_reason;
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&generic](const Reason& r) { return r.generic == generic; });
    if (it == reasons.end()) {
      reasons.push_back({generic, {&host}});
    } else {
      it->hosts.push_back(&host);
    }
  }
  // One host's own words, or the words its hosts share.
  auto text = [](const Reason& reason) {
    return reason.hosts.size() == 1 ? reason.hosts[0]->notes->reason : reason.generic;
  };
  std::vector<std::string> lines;
  if (reasons.size() == 1 && with_reason == hosts.size()) {
    lines.push_back(text(reasons[0]));
    return lines;
  }
  for (const Reason& reason : reasons) {
    std::vector<std::string> names;
    for (const RowHost* host : reason.hosts) names.push_back(*host->name);
    lines.push_back(FoldHostNames(names) + ": " + text(reason));
  }
  return lines;
}

// "folded" (a FoldHostNames set) cut after commas into lines of at most
// "width" columns, each indented by 4.
std::vector<std::string> WrapHostSet(const std::string& folded, size_t width) {
  std::vector<std::string> lines;
  std::string line = "    ";
  size_t from = 0;
  while (from < folded.size()) {
    size_t comma = folded.find(',', from);
    const size_t end = comma == std::string::npos ? folded.size() : comma + 1;
    const std::string piece = folded.substr(from, end - from);
    if (line.size() > 4 && line.size() + piece.size() > width) {
      lines.push_back(line);
      line = "    ";
    }
    line += piece;
    from = end;
  }
  if (line.size() > 4) lines.push_back(line);
  return lines;
}

// A row's detail, broken after ", " (a list of what was done stays in
// whole items), a piece longer than a line broken after its spaces.
std::string WrapDetail(const std::string& detail, size_t indent, size_t width) {
  const size_t room = width > indent ? width - indent : 1;
  std::vector<std::string> pieces;
  for (const std::string& piece : CutAfter(detail, ", ")) {
    if (piece.size() <= room) {
      pieces.push_back(piece);
    } else {
      for (const std::string& word : CutAfter(piece, " ")) pieces.push_back(word);
    }
  }
  return FillLines(pieces, indent, indent, width);
}

// The indented lines under a row: its hosts' GPU attention lines and
// /dev/shm entries kept, then their reasons, each wrapped at "width" with
// its continuation lines 2 further in.
std::string RowDetails(const OutcomeGroup& row, const ReportFold& fold, size_t width) {
  std::vector<RowHost> hosts;
  for (const std::string& name : row.names) hosts.push_back({&name, fold.NotesOf(name)});
  std::string out;
  for (const RowHost& host : hosts) {
    if (host.notes == nullptr) continue;
    for (const std::string& line : host.notes->lines) {
      const std::string text = (row.names.size() > 1 ? *host.name + ": " : std::string()) + line;
      out += "    " + WrapWords(text, 6, width);
    }
  }
  for (const std::string& line : ReasonLines(hosts)) out += "    " + WrapWords(line, 6, width);
  return out;
}

}  // namespace

std::string RenderTable(const RunReport& report, const TableStyle& style) {
  return RenderTable(report, ReportFold::Of(report), style);
}

std::string RenderTable(const RunReport& report, const ReportFold& fold, const TableStyle& style) {
  const size_t width = static_cast<size_t>(style.width > 0 ? style.width : kDefaultTableWidth);
  const size_t name_cap = std::max<size_t>(16, width / 3);
  std::vector<OutcomeGroup> rows = fold.Groups(report);
  std::vector<std::string> folded;
  std::vector<std::string> cells;
  size_t name_width = 0;
  size_t label_width = 0;
  for (const OutcomeGroup& row : rows) {
    folded.push_back(FoldHostNames(row.names));
    cells.push_back(folded.back().size() <= name_cap ? folded.back()
                                                     : std::to_string(row.names.size()) + " hosts");
    name_width = std::max(name_width, cells.back().size());
    label_width = std::max(label_width, std::string(OutcomeKindLabel(row.kind)).size());
  }
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string label = OutcomeKindLabel(rows[i].kind);
    out += cells[i] + std::string(name_width - cells[i].size() + 2, ' ');
    out += Paint(label, OutcomeColor(rows[i].kind), style.color);
    out += std::string(label_width - label.size() + 2, ' ');
    out += WrapDetail(rows[i].detail, name_width + 2 + label_width + 2, width);
    const bool listed = cells[i] == folded[i];
    if (!listed && (rows[i].kind != OutcomeKind::kClean || style.verbose)) {
      for (const std::string& line : WrapHostSet(folded[i], width)) out += line + "\n";
    }
    out += RowDetails(rows[i], fold, width);
  }
  // Why the GPUs were held, by cause, indented as the rows' details are.
  for (const std::string& line : fold.causes().Lines()) {
    out += "    " + WrapWords("why " + OneLineDetail(line), 6, width);
  }
  if (style.verbose) out += fold.step_times().Render();
  // The verdict stays one line off a terminal, where a CI job greps it; on
  // a terminal (style.width set) it breaks after its commas to fit.
  const std::string verdict = RenderVerdict(report, fold, style);
  if (style.width <= 0) return out + verdict + "\n";
  return out + FillLines(CutAfter(verdict, ", "), 0, 4, width);
}

}  // namespace fleetreap
