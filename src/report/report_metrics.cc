#include "fleetreap/report/report_metrics.h"

#include <map>
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

class Exposition {
 public:
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
  }
  void Sample(const Labels& labels, long long value) { Sample(labels, std::to_string(value)); }
  const std::string& text() const { return out_; }

 private:
  std::string name_;
  std::string out_;
};

std::string Seconds(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  std::string fraction = std::to_string(ms % 1000);
  return std::to_string(ms / 1000) + "." + std::string(3 - fraction.size(), '0') + fraction;
}

std::string GpuName(const GpuReading& gpu) {
  return gpu.index >= 0 ? std::to_string(gpu.index) : gpu.bus_id;
}

const char* const kOutcomes[] = {"clean",  "cleaned",     "would clean", "dirty",
                                 "failed", "unreachable", "not started", "no report"};

}  // namespace

std::string RenderMetrics(const RunReport& report) {
  Exposition m;
  const int exit_code = ExitCodeFor(report);
  const auto start_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(report.start_time.time_since_epoch());
  m.Family("fleetreap_run_timestamp_seconds", "When the run started, seconds since the epoch.");
  m.Sample({}, Seconds(start_ms));
  m.Family("fleetreap_run_duration_seconds", "How long the whole run took.");
  m.Sample({}, Seconds(report.duration));
  m.Family("fleetreap_run_exit_code",
           "The run's exit code: 0 clean, bit 1 dirty, bit 2 unreachable, failed or not started, "
           "bit 4 stopped by --max-fail.");
  m.Sample({}, exit_code);
  m.Family("fleetreap_run_ready", "1 when the run changed hosts and every selected host is clean.");
  m.Sample({}, !report.dry_run && !report.interrupted && exit_code == 0 ? 1 : 0);
  m.Family("fleetreap_run_stopped",
           "1 when --max-fail (or a wave whose every host failed) stopped the run's waves.");
  m.Sample({}, report.stopped.empty() ? 0 : 1);
  m.Family("fleetreap_run_dry_run", "1 for a dry run (nothing was changed).");
  m.Sample({}, report.dry_run ? 1 : 0);
  if (!report.run_id.empty()) {
    m.Family("fleetreap_run_info", "1, labelled with the run's id (the JSON report's run_id).");
    m.Sample({{"run_id", report.run_id}}, 1);
  }

  std::vector<std::pair<std::string, std::string>> outcomes;  // host, outcome
  for (const HostReport& host : report.hosts) {
    outcomes.emplace_back(host.name, OutcomeKindLabel(OutcomeOf(host, report.dry_run).kind));
  }
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    outcomes.emplace_back(host.name, host.started_never ? "not started" : "no report");
  }
  std::map<std::string, int> counts;
  for (const auto& [name, outcome] : outcomes) ++counts[outcome];
  m.Family("fleetreap_hosts", "Selected hosts by outcome.");
  for (const char* outcome : kOutcomes) m.Sample({{"outcome", outcome}}, counts[outcome]);
  m.Family("fleetreap_host_outcome", "1 for each host with its outcome.");
  for (const auto& [name, outcome] : outcomes) {
    m.Sample({{"host", name}, {"outcome", outcome}}, 1);
  }
  m.Family("fleetreap_host_duration_seconds", "How long the host took, connect included.");
  for (const HostReport& host : report.hosts)
    m.Sample({{"host", host.name}}, Seconds(host.duration));
  m.Family("fleetreap_host_signals", "Signals sent to the host's holders, by signal.");
  for (const HostReport& host : report.hosts) {
    m.Sample({{"host", host.name}, {"signal", "TERM"}}, host.term_sent);
    m.Sample({{"host", host.name}, {"signal", "KILL"}}, host.kill_sent);
  }
  m.Family("fleetreap_host_holders",
           "Processes found holding the host's GPUs, by what became of them.");
  for (const HostReport& host : report.hosts) {
    std::map<std::string, int> fates;
    for (const Holder& holder : host.holders) ++fates[HolderFateName(holder.fate)];
    for (const auto& [fate, count] : fates) m.Sample({{"host", host.name}, {"fate", fate}}, count);
  }
  m.Family("fleetreap_gpu_state", "1 for each GPU with its state after the run.");
  for (const HostReport& host : report.hosts) {
    const std::vector<GpuReading>& gpus =
        host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
    for (const GpuReading& gpu : gpus) {
      m.Sample({{"host", host.name}, {"gpu", GpuName(gpu)}, {"state", GpuStateName(gpu.state)}}, 1);
    }
  }
  m.Family("fleetreap_gpu_memory_used_bytes", "GPU memory in use before and after the run.");
  for (const HostReport& host : report.hosts) {
    for (const auto& [when, gpus] :
         {std::pair<const char*, const std::vector<GpuReading>*>{"before", &host.gpus_before},
          {"after", &host.gpus_after}}) {
      for (const GpuReading& gpu : *gpus) {
        if (!gpu.used_mib) continue;
        m.Sample({{"host", host.name}, {"gpu", GpuName(gpu)}, {"when", when}},
                 *gpu.used_mib * kBytesPerMib);
      }
    }
  }
  return m.text();
}

}  // namespace fleetreap
