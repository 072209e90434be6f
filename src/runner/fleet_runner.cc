#include "fleetreap/runner/fleet_runner.h"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <optional>
#include <thread>

namespace fleetreap {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds Since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
}

// Everything the workers share. Read-only but for the atomics and the
// per-index result slots, each written by exactly one worker.
struct Run {
  const std::vector<FleetPlan>* plans;
  const FleetSettings* settings;
  const TransportFactory* make_transport;
  const HostCleanerFunction* clean;
  FleetObserver* observer;
  const std::atomic<bool>* stop_requested;
  SteadyClock::time_point deadline;  // max() for none
  std::atomic<size_t> next{0};
  std::atomic<bool> interrupted{false};
  std::vector<std::optional<HostReport>> results;
};

// Connects with retries. Returns the last status; "*attempts" counts tries.
Status ConnectWithRetries(Run& run, const Host& host, Transport& transport,
                          SteadyClock::time_point host_deadline, int* attempts) {
  const FleetSettings& settings = *run.settings;
  milliseconds backoff = settings.retry_backoff;
  Status status;
  for (int attempt = 1;; ++attempt) {
    *attempts = attempt;
    status = transport.Connect(host_deadline);
    if (status.ok() || !IsTransient(status.kind()) || attempt > settings.retries) {
      return status;
    }
    if (SteadyClock::now() + backoff >= host_deadline) return status;
    if (run.observer != nullptr) {
      run.observer->HostRetrying(host, attempt + 1, status.ToString());
    }
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

HostReport RunHost(Run& run, const FleetPlan& plan) {
  const FleetSettings& settings = *run.settings;
  const Host& host = plan.host;
  const SteadyClock::time_point start = SteadyClock::now();
  SteadyClock::time_point host_deadline = run.deadline;
  if (settings.host_timeout.count() > 0) {
    host_deadline = std::min(host_deadline, start + settings.host_timeout);
  }
  if (run.observer != nullptr) run.observer->HostStarted(host);

  HostReport report;
  int attempts = 0;
  milliseconds connect_time{0};
  std::unique_ptr<Transport> transport = (*run.make_transport)(host);
  if (transport == nullptr) {
    report.status = HostStatus::kFailed;
    report.error_kind = ErrorKind::kInternal;
    report.error_message = "no transport for " + host.name;
  } else {
    Status connected = ConnectWithRetries(run, host, *transport, host_deadline, &attempts);
    connect_time = Since(start);
    if (connected.ok()) {
      HostJob job;
      job.host = &host;
      job.playbook = plan.playbook != nullptr ? plan.playbook.get() : &DefaultPlaybook();
      job.dry_run = settings.dry_run;
      job.become = settings.become || host.become;
      job.command_timeout = settings.command_timeout;
      job.deadline = host_deadline;
      job.extra_protect = settings.extra_protect;
      job.scope = settings.scope;
      report = (*run.clean)(*transport, job);
      report.host_key_fingerprint = transport->HostKeyFingerprint();
    } else {
      report.status = IsUnreachable(connected.kind()) ? HostStatus::kUnreachable
                                                      : HostStatus::kFailed;
      report.error_kind = connected.kind();
      report.error_message = connected.message();
      report.host_key_fingerprint = transport->HostKeyFingerprint();
      if (SteadyClock::now() >= host_deadline) {
        report.error_message += settings.host_timeout.count() > 0 &&
                                        host_deadline < run.deadline
                                    ? " (ended by --host-timeout)"
                                    : " (ended by --deadline)";
      }
    }
    transport->Close();
  }
  report.name = host.name;
  report.address = host.address;
  report.port = host.port;
  report.attempts = std::max(attempts, 1);
  report.timings.insert(report.timings.begin(), StepTiming{"connect", connect_time});
  report.duration = Since(start);
  if (run.observer != nullptr) run.observer->HostFinished(report);
  return report;
}

bool MayStart(Run& run) {
  if (run.stop_requested != nullptr && run.stop_requested->load()) {
    run.interrupted = true;
    return false;
  }
  return SteadyClock::now() < run.deadline;
}

void Worker(Run& run) {
  while (true) {
    size_t index = run.next.fetch_add(1);
    if (index >= run.plans->size()) return;
    if (!MayStart(run)) continue;  // leaves the slot empty: never started
    run.results[index] = RunHost(run, (*run.plans)[index]);
  }
}

// Each host in flight holds a socket (and, while resolving, a thread): make
// sure --forks hosts fit under the soft descriptor limit, within the hard one.
void RaiseDescriptorLimit(int forks) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t wanted = static_cast<rlim_t>(forks) * 4 + 256;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

FleetSettings FleetSettingsFor(const Options& options) {
  FleetSettings settings;
  settings.forks = std::max(options.forks, 1);
  settings.connect_timeout = options.connect_timeout;
  settings.command_timeout = options.command_timeout;
  settings.host_timeout = options.host_timeout;
  settings.deadline = options.deadline;
  settings.retries = std::max(options.retries, 0);
  settings.dry_run = options.dry_run;
  settings.become = options.become;
  settings.extra_protect = options.protect;
  settings.host_key_policy = options.local ? "" : HostKeyPolicyName(options.host_key_policy);
  return settings;
}

RunReport RunFleet(const std::vector<FleetPlan>& plans, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested,
                   const HostCleanerFunction& clean) {
  RunReport report;
  report.tool_version = settings.tool_version;
  report.playbook = settings.playbook_name;
  report.dry_run = settings.dry_run;
  report.host_key_policy = settings.host_key_policy;
  report.scope = settings.scope;
  report.start_time = std::chrono::system_clock::now();
  const SteadyClock::time_point start = SteadyClock::now();

  Run run;
  run.plans = &plans;
  run.settings = &settings;
  run.make_transport = &make_transport;
  run.clean = &clean;
  run.observer = observer;
  run.stop_requested = stop_requested;
  run.deadline = settings.deadline.count() > 0 ? start + settings.deadline
                                               : SteadyClock::time_point::max();
  run.results.resize(plans.size());

  if (observer != nullptr) observer->RunStarted(static_cast<int>(plans.size()));
  size_t workers = std::min<size_t>(plans.size(), static_cast<size_t>(std::max(settings.forks, 1)));
  RaiseDescriptorLimit(static_cast<int>(workers));
  // Workers run with SIGINT, SIGTERM, SIGHUP and SIGPIPE blocked, so Ctrl-C
  // is taken by the calling thread (setting stop_requested) and never lands
  // in a worker's poll(), where libssh would take the EINTR for a dead session.
  sigset_t blocked;
  sigset_t previous;
  sigemptyset(&blocked);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&blocked, signal_number);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (size_t i = 0; i < workers; ++i) threads.emplace_back(Worker, std::ref(run));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  for (std::thread& thread : threads) thread.join();

  for (size_t i = 0; i < plans.size(); ++i) {
    if (run.results[i].has_value()) {
      report.hosts.push_back(std::move(*run.results[i]));
    } else {
      report.not_started.push_back(plans[i].host.name);
    }
  }
  report.interrupted = run.interrupted.load();
  report.duration = Since(start);
  if (observer != nullptr) observer->RunFinished();
  return report;
}

}  // namespace fleetreap
