#include "fleetreap/runner/wave_runner.h"

#include <map>
#include <optional>
#include <string>

#include "fleet_events.h"

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

// One run in waves: the arguments of RunWaves, shared by its waves.
class WaveRun {
 public:
  WaveRun(const std::vector<FleetPlan>& plans, const FleetSettings& settings,
          const TransportFactory& make_transport, FleetObserver* observer,
          const std::atomic<bool>* stop_requested, Clock& clock, const HostCleanerFunction& clean)
      : plans_(plans),
        settings_(settings),
        make_transport_(make_transport),
        observer_(observer),
        stop_requested_(stop_requested),
        clock_(clock),
        clean_(clean),
        start_(clock.Now()),
        results_(plans.size()) {
    if (observer != nullptr) wave_observer_.emplace(observer);
  }

  // Runs "waves" in turn until one is interrupted, leaves hosts not started
  // (--deadline) or the cap stops the run.
  RunReport Run(const std::vector<Wave>& waves, const FailCap& cap) {
    const auto start_wall = clock_.WallNow();
    if (observer_ != nullptr) observer_->RunStarted(static_cast<int>(plans_.size()));
    RunReport report;  // the first wave's run header (version, playbook, scope...)
    std::vector<WaveTally> tallies;
    for (size_t w = 0; w < waves.size(); ++w) {
      FleetSettings settings = settings_;
      if (!DeadlineLeft(&settings)) break;
      RunReport part = RunWave(waves[w], settings, &tallies);
      if (w == 0) report = part;
      if (part.interrupted) report.interrupted = true;
      if (part.interrupted || !part.not_started.empty()) break;
      if (settings_.dry_run || w + 1 == waves.size()) continue;
      report.stopped = StopReason(cap, tallies, static_cast<int>(waves.size()));
      if (!report.stopped.empty()) break;
    }
    report.hosts.clear();
    report.not_started.clear();
    fleet_runner_internal::PlaceResults(plans_, &results_, &report);
    report.start_time = start_wall;
    report.duration = std::chrono::duration_cast<milliseconds>(clock_.Now() - start_);
    if (observer_ != nullptr) observer_->RunFinished();
    return report;
  }

 private:
  // --deadline bounds the whole run: a wave gets what is left of it. False
  // when nothing is.
  bool DeadlineLeft(FleetSettings* settings) const {
    if (settings_.deadline.count() <= 0) return true;
    settings->deadline =
        settings_.deadline - std::chrono::duration_cast<milliseconds>(clock_.Now() - start_);
    return settings->deadline.count() > 0;
  }

  // Runs the hosts of "wave", each report put in its host's slot, and adds
  // the wave's tally to "tallies".
  RunReport RunWave(const Wave& wave, const FleetSettings& settings,
                    std::vector<WaveTally>* tallies) {
    std::vector<FleetPlan> wave_plans;
    std::map<std::string, size_t> index_of;
    for (size_t i : wave.hosts) {
      wave_plans.push_back(plans_[i]);
      index_of[plans_[i].host.name] = i;
    }
    RunReport part =
        RunFleet(wave_plans, settings, make_transport_, wave_observer_ ? &*wave_observer_ : nullptr,
                 stop_requested_, clock_, clean_);
    WaveTally tally;
    for (HostReport& host : part.hosts) {
      ++tally.hosts;
      if (host.status != HostStatus::kClean) ++tally.failed;
      results_[index_of[host.name]] = std::move(host);
    }
    tallies->push_back(tally);
    return part;
  }

  const std::vector<FleetPlan>& plans_;
  const FleetSettings& settings_;
  const TransportFactory& make_transport_;
  FleetObserver* observer_;
  const std::atomic<bool>* stop_requested_;
  Clock& clock_;
  const HostCleanerFunction& clean_;
  const std::chrono::steady_clock::time_point start_;
  std::vector<std::optional<HostReport>> results_;
  std::optional<WaveObserver> wave_observer_;
};

}  // namespace

RunReport RunWaves(const std::vector<FleetPlan>& plans, const std::vector<Wave>& waves,
                   const FailCap& cap, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested, Clock& clock,
                   const HostCleanerFunction& clean) {
  if (waves.empty()) {
    return RunFleet(plans, settings, make_transport, observer, stop_requested, clock, clean);
  }
  return WaveRun(plans, settings, make_transport, observer, stop_requested, clock, clean)
      .Run(waves, cap);
}

}  // namespace fleetreap
