#include "fleetreap/runner/wave_runner.h"

#include <map>
#include <optional>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// Passes every call on but the run's start and end, which the wave runner
// makes once for all waves, and the stop notice, made at most once.
class WaveObserver : public FleetObserver {
 public:
  explicit WaveObserver(FleetObserver* inner) : inner_(inner) {}
  void HostStarted(const Host& host) override { inner_->HostStarted(host); }
  void HostRetrying(const Host& host, int attempt, const std::string& why) override {
    inner_->HostRetrying(host, attempt, why);
  }
  void HostStep(const Host& host, const std::string& step) override {
    inner_->HostStep(host, step);
  }
  void HostFinished(const HostReport& report) override { inner_->HostFinished(report); }
  void Interrupted() override {
    if (!told_) inner_->Interrupted();
    told_ = true;
  }
  void Tick() override { inner_->Tick(); }

 private:
  FleetObserver* inner_;
  bool told_ = false;
};

}  // namespace

RunReport RunWaves(const std::vector<FleetPlan>& plans, const std::vector<Wave>& waves,
                   const FailCap& cap, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested, Clock& clock,
                   const HostCleanerFunction& clean) {
  const auto start = clock.Now();
  const auto start_wall = clock.WallNow();
  std::optional<WaveObserver> wave_observer;
  if (waves.empty()) {
    return RunFleet(plans, settings, make_transport, observer, stop_requested, clock, clean);
  }
  if (observer != nullptr) {
    wave_observer.emplace(observer);
    observer->RunStarted(static_cast<int>(plans.size()));
  }
  RunReport report;  // the first wave's run header (version, playbook, scope...)
  std::vector<std::optional<HostReport>> results(plans.size());
  std::vector<WaveTally> tallies;
  bool stop = false;
  for (size_t w = 0; w < waves.size() && !stop; ++w) {
    FleetSettings wave_settings = settings;
    if (settings.deadline.count() > 0) {
      wave_settings.deadline =
          settings.deadline - std::chrono::duration_cast<milliseconds>(clock.Now() - start);
      if (wave_settings.deadline.count() <= 0) break;
    }
    std::vector<FleetPlan> wave_plans;
    std::map<std::string, size_t> index_of;
    for (size_t i : waves[w].hosts) {
      wave_plans.push_back(plans[i]);
      index_of[plans[i].host.name] = i;
    }
    RunReport part =
        RunFleet(wave_plans, wave_settings, make_transport,
                 wave_observer ? &*wave_observer : nullptr, stop_requested, clock, clean);
    if (w == 0) report = part;
    WaveTally tally;
    for (HostReport& host : part.hosts) {
      ++tally.hosts;
      if (host.status != HostStatus::kClean) ++tally.failed;
      results[index_of[host.name]] = std::move(host);
    }
    tallies.push_back(tally);
    if (part.interrupted) report.interrupted = true;
    if (part.interrupted || !part.not_started.empty()) break;
    if (!settings.dry_run && w + 1 < waves.size()) {
      report.stopped = StopReason(cap, tallies, static_cast<int>(waves.size()));
      stop = !report.stopped.empty();
    }
  }
  report.hosts.clear();
  report.not_started.clear();
  for (size_t i = 0; i < plans.size(); ++i) {
    if (results[i].has_value()) {
      report.hosts.push_back(std::move(*results[i]));
    } else {
      report.not_started.push_back(plans[i].host.name);
    }
  }
  report.start_time = start_wall;
  report.duration = std::chrono::duration_cast<milliseconds>(clock.Now() - start);
  if (observer != nullptr) observer->RunFinished();
  return report;
}

}  // namespace fleetreap
