#include "fleetreap/report/report_metrics.h"

#include <map>
#include <optional>
#include <vector>

#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/utf8.h"

namespace fleetreap {
namespace {

constexpr long long kBytesPerMib = 1024LL * 1024LL;

std::string LabelValue(const std::string& value) {
  std::string out;
  for (char c : ReplaceInvalidUtf8(value)) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// The exposition, handed to "emit" in pieces of about kPiece bytes.
class Exposition {
 public:
  explicit Exposition(const MetricsPieceSink& emit) : emit_(emit) {}
  void Family(const std::string& name, const std::string& help) {
    name_ = name;
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n";
  }
  void Sample(const Labels& labels, const std::string& value) {
    out_ += name_;
    if (!labels.empty()) {
      out_ += "{";
      for (size_t i = 0; i < labels.size(); ++i) {
        out_ += (i > 0 ? "," : "") + labels[i].first + "=\"" + LabelValue(labels[i].second) + "\"";
      }
      out_ += "}";
    }
    out_ += " " + value + "\n";
    if (out_.size() >= kPiece) Flush();
  }
  void Sample(const Labels& labels, long long value) { Sample(labels, std::to_string(value)); }
  void Flush() {
    if (!out_.empty()) emit_(out_);
    out_.clear();
  }

 private:
  static constexpr size_t kPiece = size_t{64} * 1024;
  const MetricsPieceSink& emit_;
  std::string name_;
  std::string out_;
};

std::string Seconds(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  std::string fraction = std::to_string(ms % 1000);
  return std::to_string(ms / 1000) + "." + std::string(3 - fraction.size(), '0') + fraction;
}

void RenderRun(const RunReport& header, int exit_code, Exposition* m) {
  const RunReport& report = header;
  const auto start_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(report.start_time.time_since_epoch());
  m->Family("fleetreap_run_timestamp_seconds", "When the run started, seconds since the epoch.");
  m->Sample({}, Seconds(start_ms));
  m->Family("fleetreap_run_duration_seconds", "How long the whole run took.");
  m->Sample({}, Seconds(report.duration));
  m->Family("fleetreap_run_exit_code",
            "The run's exit code: 0 clean, bit 1 dirty, bit 2 unreachable, failed or not started, "
            "bit 4 stopped by --max-fail.");
  m->Sample({}, exit_code);
  m->Family("fleetreap_run_ready",
            "1 when the run changed hosts and every selected host is clean.");
  m->Sample({}, !report.dry_run && !report.interrupted && exit_code == 0 ? 1 : 0);
  m->Family("fleetreap_run_stopped",
            "1 when --max-fail (or a wave whose every host failed) stopped the run's waves.");
  m->Sample({}, report.stopped.empty() ? 0 : 1);
  m->Family("fleetreap_run_dry_run", "1 for a dry run (nothing was changed).");
  m->Sample({}, report.dry_run ? 1 : 0);
  if (!report.run_id.empty()) {
    m->Family("fleetreap_run_info", "1, labelled with the run's id (the JSON report's run_id).");
    m->Sample({{"run_id", report.run_id}}, 1);
  }
}

// Label values are snake_case, as the JSON report writes outcomes.
std::string SnakeCase(const char* words) {
  std::string out = words;
  for (char& c : out) {
    if (c == ' ') c = '_';
  }
  return out;
}

constexpr OutcomeKind kOutcomes[] = {
    OutcomeKind::kClean,       OutcomeKind::kCleaned,    OutcomeKind::kWouldClean,
    OutcomeKind::kDirty,       OutcomeKind::kNotReady,   OutcomeKind::kFailed,
    OutcomeKind::kUnreachable, OutcomeKind::kNotStarted, OutcomeKind::kNoReport};

// GPU states and holder fates a host always has a sample for (0 when none),
// so an alert on them sees its series go to 0 rather than vanish; others
// appear when a GPU or holder is in them.
constexpr GpuState kAlwaysCountedStates[] = {GpuState::kClean,   GpuState::kBusy,
                                             GpuState::kGhost,   GpuState::kLost,
                                             GpuState::kMissing, GpuState::kRecovery};
constexpr HolderFate kAlwaysCountedFates[] = {HolderFate::kTerminated, HolderFate::kKilled,
                                              HolderFate::kUnkillable};

// The samples of one host's counts by name ("fate" or "state"), in name
// order: the always counted ones, and the others that are not 0.
template <typename Enum, size_t N, size_t M>
void SampleCounts(const std::string& host, const char* label, const int (&counts)[N],
                  const Enum (&always)[M], const char* (*name)(Enum), Exposition* m) {
  std::map<std::string, int> by_name;
  for (Enum value : always) by_name[name(value)] = 0;
  for (size_t i = 0; i < N; ++i) {
    if (counts[i] > 0) by_name[name(static_cast<Enum>(i))] = counts[i];
  }
  for (const auto& [words, count] : by_name) m->Sample({{"host", host}, {label, words}}, count);
}

}  // namespace

MetricsFold::MetricsFold(bool dry_run) : dry_run_(dry_run) {}

void MetricsFold::Add(size_t index, const HostReport& host) {
  Host& out = hosts_[index];
  out.name = host.name;
  out.outcome = OutcomeOf(host, dry_run_).kind;
  out.duration = host.duration;
  out.term_sent = host.term_sent;
  out.kill_sent = host.kill_sent;
  for (const Holder& holder : host.holders) ++out.fates[static_cast<int>(holder.fate)];
  const std::vector<GpuReading>& gpus =
      host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
  for (const GpuReading& gpu : gpus) ++out.states[static_cast<int>(gpu.state)];
  auto used = [](const std::vector<GpuReading>& readings) -> std::optional<long long> {
    std::optional<long long> mib;
    for (const GpuReading& gpu : readings) {
      if (gpu.used_mib) mib = mib.value_or(0) + *gpu.used_mib;
    }
    return mib;
  };
  out.used_mib_before = used(host.gpus_before);
  out.used_mib_after = used(host.gpus_after);
}

namespace {

void RenderHostOutcomes(const RunReport& header, const MetricsFold& fold, Exposition* m) {
  std::vector<std::pair<std::string, OutcomeKind>> outcomes;  // host, outcome
  for (const auto& [index, host] : fold.hosts()) outcomes.emplace_back(host.name, host.outcome);
  for (const HostWithoutResult& host : HostsWithoutResult(header)) {
    outcomes.emplace_back(host.name,
                          host.started_never ? OutcomeKind::kNotStarted : OutcomeKind::kNoReport);
  }
  std::map<OutcomeKind, int> counts;
  for (const auto& [name, outcome] : outcomes) ++counts[outcome];
  m->Family("fleetreap_hosts", "Selected hosts by outcome.");
  for (OutcomeKind kind : kOutcomes) {
    m->Sample({{"outcome", SnakeCase(OutcomeKindLabel(kind))}}, counts[kind]);
  }
  m->Family("fleetreap_host_outcome",
            "1 for the host's outcome, 0 for each other outcome (every outcome present).");
  for (const auto& [name, outcome] : outcomes) {
    for (OutcomeKind kind : kOutcomes) {
      m->Sample({{"host", name}, {"outcome", SnakeCase(OutcomeKindLabel(kind))}},
                kind == outcome ? 1 : 0);
    }
  }
}

void RenderHostActions(const MetricsFold& fold, Exposition* m) {
  m->Family("fleetreap_host_duration_seconds", "How long the host took, connect included.");
  for (const auto& [index, host] : fold.hosts())
    m->Sample({{"host", host.name}}, Seconds(host.duration));
  m->Family("fleetreap_host_signals", "Signals sent to the host's holders, by signal.");
  for (const auto& [index, host] : fold.hosts()) {
    m->Sample({{"host", host.name}, {"signal", "TERM"}}, host.term_sent);
    m->Sample({{"host", host.name}, {"signal", "KILL"}}, host.kill_sent);
  }
  m->Family("fleetreap_host_holders",
            "Processes found holding the host's GPUs, by what became of them (terminated, "
            "killed and unkillable always present).");
  for (const auto& [index, host] : fold.hosts()) {
    SampleCounts(host.name, "fate", host.fates, kAlwaysCountedFates, HolderFateName, m);
  }
}

void RenderHostGpus(const MetricsFold& fold, Exposition* m) {
  m->Family("fleetreap_host_gpus",
            "The host's GPUs by their last state (clean, busy, ghost, lost, missing and "
            "needs_recovery always present).");
  for (const auto& [index, host] : fold.hosts()) {
    SampleCounts(host.name, "state", host.states, kAlwaysCountedStates, GpuStateName, m);
  }
  m->Family("fleetreap_host_gpu_memory_used_bytes",
            "GPU memory in use on the host, its GPUs together, before and after the run.");
  for (const auto& [index, host] : fold.hosts()) {
    if (host.used_mib_before) {
      m->Sample({{"host", host.name}, {"when", "before"}}, *host.used_mib_before * kBytesPerMib);
    }
    if (host.used_mib_after) {
      m->Sample({{"host", host.name}, {"when", "after"}}, *host.used_mib_after * kBytesPerMib);
    }
  }
}

}  // namespace

void RenderMetricsPieces(const RunReport& header, const ReportFold& fold,
                         const MetricsFold& metrics, const MetricsPieceSink& emit) {
  Exposition m(emit);
  RenderRun(header, ExitCodeFor(header, fold), &m);
  RenderHostOutcomes(header, metrics, &m);
  RenderHostActions(metrics, &m);
  RenderHostGpus(metrics, &m);
  m.Flush();
}

std::string RenderMetrics(const RunReport& report) {
  std::string out;
  RenderMetricsPieces(report, ReportFold::Of(report), FoldOfHosts<MetricsFold>(report),
                      [&out](const std::string& piece) { out += piece; });
  return out;
}

}  // namespace fleetreap
