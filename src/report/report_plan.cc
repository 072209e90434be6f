#include "fleetreap/report/report_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/text_wrap.h"
#include "fleetreap/model/scope.h"
#include "fleetreap/report/report_table.h"

namespace fleetreap {
namespace {

constexpr size_t kFieldCap = 64;

std::string Field(const std::string& text) { return EscapeControlBytes(text, kFieldCap, false); }

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

// "1,600": counts an approver reads at a glance.
std::string Thousands(size_t n) {
  std::string digits = std::to_string(n);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

std::string Counted(size_t n, const char* one, const char* many) {
  return Thousands(n) + " " + (n == 1 ? one : many);
}

// "0-3,5", sorted and deduplicated.
std::string Ranges(std::vector<int> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return FoldIndexes(values);
}

std::string GpuText(const std::vector<int>& gpus) {
  if (gpus.empty()) return "-";
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + Ranges(gpus);
}

// The name an approver knows: argv[0] (its file name) when the kernel's
// 15-character comm is a prefix of it (VLLM::Worker_TP3, not
// VLLM::Worker_TP), else comm.
std::string HolderName(const Holder& holder) {
  const std::string argv0 = holder.cmdline.substr(0, holder.cmdline.find(' '));
  const std::string base = argv0.substr(argv0.rfind('/') + 1);
  if (!holder.comm.empty() && base.size() > holder.comm.size() &&
      base.compare(0, holder.comm.size(), holder.comm) == 0) {
    return Field(base);
  }
  return Field(holder.comm);
}

// What the holder would get, and why it is left alone when it is.
std::pair<std::string, std::string> Verdict(const Holder& holder) {
  switch (holder.fate) {
    case HolderFate::kWouldTerm: return {"TERM", ""};
    case HolderFate::kWouldKill: return {"KILL", ""};
    case HolderFate::kProtected: return {"leave", "protected: " + Field(holder.protected_by)};
    case HolderFate::kOutOfScope: return {"leave", "out of scope: " + Field(holder.out_of_scope)};
    case HolderFate::kObserved: return {"leave", "observed only"};
    default: return {"leave", HolderFateName(holder.fate)};
  }
}

// Holders that read the same but for their PID and the number a name ends
// in (TP rank): one row, "TERM x8 VLLM::Worker_TP[0-7] GPUs 0-7 root ...".
struct Row {
  std::string verdict;
  std::vector<std::string> names;
  std::string gpus, user, owner;
  std::vector<int> pids;
};

std::vector<Row> Rows(const HostReport& host) {
  std::vector<Row> rows;
  std::map<std::string, size_t> by_key;
  for (const Holder& holder : host.holders) {
    auto [verdict, why] = Verdict(holder);
    const std::string name = HolderName(holder);
    const std::string stem = name.substr(0, name.find_last_not_of("0123456789") + 1);
    Row row{verdict,
            {name},
            GpuText(holder.gpus),
            Field(holder.user),
            JoinNonEmpty({Field(DescribeOwner(holder.owner)), why}, "  "),
            {holder.pid}};
    const std::string key = Join({verdict, stem, row.gpus, row.user, row.owner}, "\n");
    auto [it, added] = by_key.emplace(key, rows.size());
    if (added) {
      rows.push_back(std::move(row));
    } else {
      rows[it->second].names.push_back(name);
      rows[it->second].pids.push_back(holder.pid);
    }
  }
  return rows;
}

// The host's plan without PIDs or /dev/shm names (its shape, what hosts
// fold on), and its headline's counts. A holder row's owner column (a
// unit or pod and why a holder is left, last and longest) is kept apart:
// Render decides whether it fits after the other columns.
std::vector<PlanFold::Line> HostShape(const HostReport& host, const std::vector<Row>& rows,
                                      size_t* signals) {
  std::vector<std::vector<std::string>> cells;
  *signals = 0;
  for (const Row& row : rows) {
    if (row.verdict != "leave") *signals += row.pids.size();
    cells.push_back({row.verdict, "x" + std::to_string(row.pids.size()), FoldHostNames(row.names),
                     row.gpus, row.user, row.owner});
  }
  std::vector<size_t> widths(5, 0);
  for (const auto& c : cells) {
    for (size_t i = 0; i < widths.size(); ++i) widths[i] = std::max(widths[i], c[i].size() + 1);
  }
  std::vector<PlanFold::Line> lines;
  for (const auto& c : cells) {
    std::string columns;
    for (size_t i = 0; i < widths.size(); ++i) columns += Pad(c[i], widths[i]);
    lines.push_back({std::move(columns), c[5], true});
  }
  for (const std::string& unit : host.units_would_stop) {
    lines.push_back({"stop   " + Field(unit), "", false});
  }
  if (!host.shm_would_remove.empty()) {
    lines.push_back(
        {"remove " + Counted(host.shm_would_remove.size(), "/dev/shm entry", "/dev/shm entries"),
         "", false});
  }
  return lines;
}

std::string Headline(const HostReport& host, size_t signals) {
  std::vector<std::string> parts;
  if (signals > 0) parts.push_back("would signal " + Thousands(signals));
  if (!host.units_would_stop.empty()) {
    parts.push_back("stop " + Counted(host.units_would_stop.size(), "unit", "units"));
  }
  if (!host.shm_would_remove.empty()) {
    parts.push_back("remove " +
                    Counted(host.shm_would_remove.size(), "/dev/shm entry", "/dev/shm entries"));
  }
  return parts.empty() ? "nothing to signal" : Join(parts, ", ");
}

// -v: what the shape leaves out, for one host: PIDs by verdict, the
// /dev/shm entries by name.
std::string HostDetail(const HostReport& host, const std::vector<Row>& rows) {
  std::map<std::string, std::vector<int>> pids;
  for (const Row& row : rows) {
    pids[row.verdict].insert(pids[row.verdict].end(), row.pids.begin(), row.pids.end());
  }
  std::vector<std::string> parts;
  for (const char* verdict : {"TERM", "KILL", "leave"}) {
    if (pids.count(verdict)) parts.push_back(std::string(verdict) + " " + Ranges(pids[verdict]));
  }
  std::vector<std::string> shm;
  for (const std::string& path : host.shm_would_remove) shm.push_back(Field(path));
  if (!shm.empty()) parts.push_back("remove " + Join(shm, " "));
  return Join(parts, "; ");
}

// A block's lines at "width" columns, 4 in: a holder row whose owner does
// not fit after its other columns has it on the next lines, 8 in; any
// other line too long wraps 8 in.
std::string FitLines(const std::vector<PlanFold::Line>& lines, size_t width) {
  std::string out;
  for (const PlanFold::Line& line : lines) {
    if (!line.row) {
      out += "    " + FillLines(CutAfter(line.columns, " "), 4, 8, width);
      continue;
    }
    std::string columns = "    " + line.columns;
    const bool fits = line.owner.empty() || columns.size() + line.owner.size() <= width;
    if (fits) columns += line.owner;
    out += columns.erase(columns.find_last_not_of(' ') + 1) + "\n";
    if (!fits) out += "        " + WrapWords(line.owner, 8, width);
  }
  return out;
}

}  // namespace

void PlanFold::Add(size_t index, const HostReport& host) {
  if (host.status == HostStatus::kUnreachable || host.status == HostStatus::kFailed) return;
  const std::vector<Row> rows = Rows(host);
  size_t signals = 0;
  std::vector<Line> lines = HostShape(host, rows, &signals);
  if (lines.empty()) return;
  signals_ += signals;
  if (signals > 0) ++signalled_hosts_;
  units_ += host.units_would_stop.size();
  shm_ += host.shm_would_remove.size();
  std::string headline = Headline(host, signals);
  // The fold's key: the whole shape, never read back.
  std::string key = headline;
  for (const Line& line : lines) key += "\n" + line.columns + "\t" + line.owner;
  auto [it, added] = by_shape_.emplace(std::move(key), plans_.size());
  if (added) plans_.push_back({std::move(headline), std::move(lines), index, {}});
  Plan& plan = plans_[it->second];
  plan.first = std::min(plan.first, index);
  plan.hosts.push_back({index, host.name, HostDetail(host, rows)});
}

std::string PlanFold::Render(bool verbose, int width) const {
  const size_t columns = static_cast<size_t>(width > 0 ? width : kDefaultTableWidth);
  if (plans_.empty()) return "";
  std::vector<const Plan*> sorted;
  for (const Plan& plan : plans_) sorted.push_back(&plan);
  std::sort(sorted.begin(), sorted.end(),
            [](const Plan* a, const Plan* b) { return a->first < b->first; });
  // The total, broken after its commas where it does not fit, the -v hint
  // kept whole.
  std::vector<std::string> total =
      CutAfter("plan: would signal " + Counted(signals_, "process", "processes") + " on " +
                   Counted(signalled_hosts_, "host", "hosts") + ", remove " +
                   Counted(shm_, "/dev/shm entry", "/dev/shm entries") + ", stop " +
                   Counted(units_, "unit", "units"),
               ", ");
  if (!verbose) {
    total.back() += " ";
    total.push_back("(-v lists each host's PIDs and /dev/shm entries)");
  }
  std::string out = FillLines(total, 0, 4, columns);
  for (const Plan* plan : sorted) {
    std::vector<PlanHost> hosts = plan->hosts;
    std::sort(hosts.begin(), hosts.end(),
              [](const PlanHost& a, const PlanHost& b) { return a.index < b.index; });
    std::vector<std::string> names;
    for (const PlanHost& host : hosts) names.push_back(host.name);
    const std::string each =
        hosts.size() > 1 ? " (" + Thousands(hosts.size()) + " hosts, each)" : "";
    out += WrapLine(FoldHostNames(names) + each + ": " + plan->headline, 4, columns);
    out += FitLines(plan->lines, columns);
    if (!verbose) continue;
    for (const PlanHost& host : hosts) {
      if (host.detail.empty()) continue;
      out += "      " + FillLines(CutAfter(host.name + ": " + host.detail, " "), 6, 8, columns);
    }
  }
  return out;
}

std::string RenderPlan(const RunReport& report, bool verbose, int width) {
  if (!report.dry_run) return "";
  PlanFold fold;
  for (size_t i = 0; i < report.hosts.size(); ++i) fold.Add(i, report.hosts[i]);
  return fold.Render(verbose, width);
}

}  // namespace fleetreap
