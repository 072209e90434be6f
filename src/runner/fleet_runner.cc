#include "fleetreap/runner/fleet_runner.h"

#include <signal.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "fleet_events.h"
#include "fleetreap/base/fiber.h"

namespace fleetreap {
namespace {

using fleet_runner_internal::Event;
using fleet_runner_internal::EventQueue;
using TimePoint = std::chrono::steady_clock::time_point;
using std::chrono::milliseconds;

// How often the collecting thread ticks the observer and checks the stop
// flag, and the longest single sleep of a connect retry's backoff.
constexpr milliseconds kTickInterval{250};
constexpr milliseconds kBackoffSlice{100};

milliseconds Between(TimePoint start, TimePoint end) {
  return std::chrono::duration_cast<milliseconds>(end - start);
}

// Everything the workers share. Read-only but for the atomics, the queue and
// the per-index result slots, each written by exactly one worker.
struct Run {
  const std::vector<FleetPlan>* plans = nullptr;
  const FleetSettings* settings = nullptr;
  const TransportFactory* make_transport = nullptr;
  const HostCleanerFunction* clean = nullptr;
  const std::atomic<bool>* stop_requested = nullptr;
  Clock* clock = nullptr;
  TimePoint deadline;  // max() for none
  EventQueue* events = nullptr;
  std::atomic<size_t> next{0};
  std::atomic<bool> interrupted{false};
  std::vector<std::optional<HostReport>> results;
};

bool StopRequested(const Run& run) {
  return run.stop_requested != nullptr && run.stop_requested->load();
}

// Waits "backoff" on the run's clock, in slices so that a Ctrl-C is noticed.
// Returns false when the stop flag ended the wait.
bool WaitBackoff(Run& run, milliseconds backoff) {
  const TimePoint end = run.clock->Now() + backoff;
  while (!StopRequested(run)) {
    const milliseconds left = Between(run.clock->Now(), end);
    if (left.count() <= 0) return true;
    run.clock->SleepFor(std::min(left, kBackoffSlice));
  }
  return false;
}

// Connects with retries. Returns the last status; "*attempts" counts tries.
Status ConnectWithRetries(Run& run, size_t index, Transport& transport, TimePoint host_deadline,
                          int* attempts) {
  const FleetSettings& settings = *run.settings;
  milliseconds backoff = settings.retry_backoff;
  Status status;
  for (int attempt = 1;; ++attempt) {
    *attempts = attempt;
    status = transport.Connect(host_deadline);
    if (status.ok() || !IsTransient(status.kind()) || attempt > settings.retries) {
      return status;
    }
    if (run.clock->Now() + backoff >= host_deadline) return status;
    run.events->Push({Event::Kind::kRetrying, index, attempt + 1, status.ToString()});
    if (!WaitBackoff(run, backoff)) return status;
    backoff *= 2;
  }
}

// The job CleanHost runs on a connected host; its steps go to the queue.
HostJob JobFor(Run& run, size_t index, TimePoint host_deadline) {
  const FleetSettings& settings = *run.settings;
  const FleetPlan& plan = (*run.plans)[index];
  HostJob job;
  job.host = &plan.host;
  job.playbook = plan.playbook.get();
  job.dry_run = settings.dry_run;
  job.become = plan.host.become;
  job.command_timeout = settings.command_timeout;
  job.deadline = host_deadline;
  job.extra_protect = settings.extra_protect;
  job.scope = settings.scope;
  job.audit = settings.audit;
  job.clock = run.clock;
  job.stop_requested = run.stop_requested;
  job.on_step = [&run, index](const std::string& step) {
    run.events->Push({Event::Kind::kStep, index, 0, step});
  };
  return job;
}

// A host whose connection failed: unreachable (or failed, for a kind that
// is not the network's), saying which deadline ended it if one did.
void ReportNotConnected(const Run& run, const Status& connected, TimePoint host_deadline,
                        HostReport* report) {
  report->status = IsUnreachable(connected.kind()) ? HostStatus::kUnreachable : HostStatus::kFailed;
  report->error_kind = connected.kind();
  report->error_message = connected.message();
  if (run.clock->Now() < host_deadline) return;
  const bool by_host_timeout =
      run.settings->host_timeout.count() > 0 && host_deadline < run.deadline;
  report->error_message +=
      by_host_timeout ? " (ended by --host-timeout)" : " (ended by --deadline)";
}

// Connects, cleans and closes; the report's identity and times are the caller's.
HostReport ConnectAndClean(Run& run, size_t index, TimePoint start, TimePoint host_deadline,
                           int* attempts, milliseconds* connect_time) {
  HostReport report;
  std::unique_ptr<Transport> transport = (*run.make_transport)((*run.plans)[index].host);
  if (transport == nullptr) {
    report.status = HostStatus::kFailed;
    report.error_kind = ErrorKind::kInternal;
    report.error_message = "no transport for " + (*run.plans)[index].host.name;
    return report;
  }
  Status connected = ConnectWithRetries(run, index, *transport, host_deadline, attempts);
  *connect_time = Between(start, run.clock->Now());
  if (connected.ok()) {
    report = (*run.clean)(*transport, JobFor(run, index, host_deadline));
    if (report.error_kind == ErrorKind::kInterrupted) run.interrupted = true;
  } else {
    ReportNotConnected(run, connected, host_deadline, &report);
  }
  report.host_key_fingerprint = transport->HostKeyFingerprint();
  report.host_key_type = transport->HostKeyType();
  report.host_key_accepted_into = transport->HostKeyAcceptedInto();
  transport->Close();
  return report;
}

// Connects and cleans; a throw out of the host's code (a library's
// bad_alloc, a bug) fails this host alone, as an internal error, instead of
// ending the process with every other host in flight.
HostReport ConnectAndCleanGuarded(Run& run, size_t index, TimePoint start, TimePoint host_deadline,
                                  int* attempts, milliseconds* connect_time) {
  std::string what;
  try {
    return ConnectAndClean(run, index, start, host_deadline, attempts, connect_time);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  HostReport report;
  report.status = HostStatus::kFailed;
  report.error_kind = ErrorKind::kInternal;
  report.error_message = "internal error (" + what +
                         "): the host's ladder stopped where it was; its journal and the "
                         "host's audit lines say what was done";
  return report;
}

HostReport RunHost(Run& run, size_t index) {
  const Host& host = (*run.plans)[index].host;
  const TimePoint start = run.clock->Now();
  TimePoint host_deadline = run.deadline;
  if (run.settings->host_timeout.count() > 0) {
    host_deadline = std::min(host_deadline, start + run.settings->host_timeout);
  }
  run.events->Push({Event::Kind::kStarted, index, 0, ""});
  int attempts = 0;
  milliseconds connect_time{0};
  HostReport report =
      ConnectAndCleanGuarded(run, index, start, host_deadline, &attempts, &connect_time);
  report.name = host.name;
  report.address = host.address;
  report.port = host.port;
  report.groups = host.groups;
  report.attempts = std::max(attempts, 1);
  report.timings.insert(report.timings.begin(), StepTiming{"connect", connect_time});
  report.duration = Between(start, run.clock->Now());
  return report;
}

bool MayStart(Run& run) {
  if (StopRequested(run)) {
    run.interrupted = true;
    return false;
  }
  return run.clock->Now() < run.deadline;
}

// One worker: takes hosts until none is left, then says it is done (a
// host's throw is its own failure, ConnectAndCleanGuarded).
void Worker(Run& run) {
  struct Done {
    Run& run;
    ~Done() { run.events->WorkerDone(); }
  } done{run};
  while (true) {
    size_t index = run.next.fetch_add(1);
    if (index >= run.plans->size()) break;
    if (!MayStart(run)) continue;  // leaves the slot empty: never started
    run.results[index] = RunHost(run, index);
    run.events->Push({Event::Kind::kFinished, index, 0, ""});
  }
}

// How many loop threads carry "workers" fibers: one per core, at most 8.
size_t LoopThreads(size_t workers) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({workers, cores, size_t{8}}));
}

// Starts the threads that run the workers: one each (kThreads), or a few
// loop threads each running its share of them as fibers (kFibers).
std::vector<std::thread> StartWorkers(Run& run, size_t workers, Fanout fanout) {
  std::vector<std::thread> threads;
  if (fanout == Fanout::kThreads) {
    threads.reserve(workers);
    for (size_t i = 0; i < workers; ++i) threads.emplace_back(Worker, std::ref(run));
    return threads;
  }
  const size_t loops = LoopThreads(workers);
  for (size_t i = 0; i < loops; ++i) {
    const size_t share = workers / loops + (i < workers % loops ? 1 : 0);
    threads.emplace_back([&run, share] {
      FiberLoop loop;
      for (size_t j = 0; j < share; ++j) loop.Spawn([&run] { Worker(run); });
      loop.Run();
    });
  }
  return threads;
}

// StartWorkers with SIGINT, SIGTERM, SIGHUP and SIGPIPE blocked in the
// workers, so Ctrl-C is taken by the calling thread (setting stop_requested)
// and never lands in a worker's poll(), where libssh would take the EINTR
// for a dead session.
std::vector<std::thread> StartWorkersSignalsBlocked(Run& run, size_t workers, Fanout fanout) {
  sigset_t blocked;
  sigset_t previous;
  sigemptyset(&blocked);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&blocked, signal_number);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  std::vector<std::thread> threads = StartWorkers(run, workers, fanout);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return threads;
}

// What is kept of a finished host whose report the observer has had, when
// the run keeps no reports: what the run's own bookkeeping reads.
HostReport Outline(HostReport&& report) {
  HostReport outline;
  outline.name = std::move(report.name);
  outline.status = report.status;
  outline.error_kind = report.error_kind;
  return outline;
}

// The calling thread's half: hands each event to the observer, ticks it and
// tells it once about a stop request, until every worker is done.
class Collector {
 public:
  Collector(Run& run, FleetObserver* observer) : run_(run), observer_(observer) {}

  void Drain() {
    TimePoint next_tick = run_.clock->Now() + kTickInterval;
    std::deque<Event> batch;
    while (run_.events->Take(kTickInterval, &batch)) {
      for (const Event& event : batch) {
        // A host that started did so before its worker saw the stop flag:
        // count it in flight before the notice, as a finish after it.
        if (event.kind != Event::Kind::kStarted) CheckStop();
        Deliver(event);
      }
      CheckStop(/*between_batches=*/true);
      const TimePoint now = run_.clock->Now();
      if (batch.empty() || now >= next_tick) {
        if (observer_ != nullptr) observer_->Tick();
        next_tick = now + kTickInterval;
      }
    }
    CheckStop();
  }

 private:
  // "between_batches": no event of a batch is left to deliver, so the
  // events still queued may be taken: hosts whose start is queued (the
  // observer may have been slow, writing the journal) started before the
  // stop was seen and are in flight when the notice counts them; the other
  // events follow it, in order.
  void CheckStop(bool between_batches = false) {
    if (told_stop_ || !StopRequested(run_)) return;
    told_stop_ = true;
    std::deque<Event> queued;
    if (between_batches) run_.events->Take(milliseconds(0), &queued);
    for (const Event& event : queued) {
      if (event.kind == Event::Kind::kStarted) Deliver(event);
    }
    if (observer_ != nullptr) observer_->Interrupted();
    for (const Event& event : queued) {
      if (event.kind != Event::Kind::kStarted) Deliver(event);
    }
  }

  void Deliver(const Event& event) {
    if (observer_ == nullptr) return;
    const Host& host = (*run_.plans)[event.index].host;
    switch (event.kind) {
      case Event::Kind::kStarted: observer_->HostStarted(host); break;
      case Event::Kind::kRetrying: observer_->HostRetrying(host, event.attempt, event.why); break;
      case Event::Kind::kStep: observer_->HostStep(host, event.why); break;
      case Event::Kind::kFinished: {
        std::optional<HostReport>& result = run_.results[event.index];
        observer_->HostFinished(*result);
        if (!run_.settings->keep_host_reports) result = Outline(std::move(*result));
        break;
      }
    }
  }

  Run& run_;
  FleetObserver* observer_;
  bool told_stop_ = false;
};

}  // namespace

RunReport RunFleet(const std::vector<FleetPlan>& plans, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested, Clock& clock,
                   const HostCleanerFunction& clean) {
  RunReport report;
  report.dry_run = settings.dry_run;
  report.scope = settings.scope;
  report.start_time = clock.WallNow();
  const TimePoint start = clock.Now();

  const size_t workers =
      std::min<size_t>(plans.size(), static_cast<size_t>(std::max(settings.forks, 1)));
  EventQueue events(workers);
  Run run;
  run.plans = &plans;
  run.settings = &settings;
  run.make_transport = &make_transport;
  run.clean = &clean;
  run.stop_requested = stop_requested;
  run.clock = &clock;
  run.deadline = settings.deadline.count() > 0 ? start + settings.deadline : TimePoint::max();
  run.events = &events;
  run.results.resize(plans.size());

  if (observer != nullptr) observer->RunStarted(static_cast<int>(plans.size()));
  std::vector<std::thread> threads = StartWorkersSignalsBlocked(run, workers, settings.fanout);
  Collector(run, observer).Drain();
  for (std::thread& thread : threads) thread.join();
  fleet_runner_internal::PlaceResults(plans, &run.results, &report);
  report.interrupted = run.interrupted.load();
  report.duration = Between(start, clock.Now());
  if (observer != nullptr) observer->RunFinished();
  return report;
}

}  // namespace fleetreap
