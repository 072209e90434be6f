#include "fleetreap/host_cleaner.h"

#include <algorithm>
#include <thread>

#include "fleetreap/escalation.h"
#include "fleetreap/gpu_state.h"
#include "fleetreap/host_view.h"
#include "fleetreap/nvidia_smi.h"
#include "fleetreap/proc_scan.h"
#include "fleetreap/protect.h"
#include "fleetreap/remote_script.h"

namespace fleetreap {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

class RealClock : public CleanerClock {
 public:
  TimePoint Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(milliseconds duration) override {
    std::this_thread::sleep_for(duration);
  }
};

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) : line;
}

// One host's run: the state that CleanHost threads through the ladder.
class Runner {
 public:
  Runner(Transport& transport, const HostJob& job)
      : transport_(transport),
        job_(job),
        playbook_(*job.playbook),
        clock_(job.clock ? *job.clock : RealCleanerClock()),
        protect_(ProtectList::Default()) {
    protect_.AddAll(playbook_.protect);
    protect_.AddAll(job.host->protect);
    protect_.AddAll(job.extra_protect);
    threshold_ = job.host->threshold_mib.value_or(playbook_.threshold_mib);
    milliseconds half = job.command_timeout / 2;
    nvidia_smi_timeout_ = std::clamp(half, milliseconds(1000), milliseconds(30000));
  }

  HostReport Run();

 private:
  // Runs "script" bounded by "timeout" (cut to the deadline). On failure
  // sets the report's error and returns false.
  bool Exec(const std::string& script, milliseconds timeout, CommandResult* result);
  bool Fail(ErrorKind kind, const std::string& message);
  // "prefetched": the scan's output when it already came back as the tail of
  // another command.
  bool Scan(const std::vector<std::string>& units, std::vector<GpuReading>* gpus,
            bool holders = true, const std::string* prefetched = nullptr);
  // nvidia-smi alone, the known holders standing in; a full Scan follows
  // only when a GPU is not clean, to find and classify what holds it.
  bool QuickScan(std::vector<GpuReading>* gpus, const std::string* prefetched = nullptr);
  bool FindGhostsUnderDaemons(std::vector<GpuReading>* gpus);
  // After a whole-host query failed on a lost GPU: asks each GPU alone and
  // adds the readings of those that answer.
  bool QueryGpusOneByOne(std::vector<GpuReading>* gpus);
  bool Signal(const Action& action);
  bool StopUnits(const Action& action);
  // With "verify", the verify's nvidia-smi runs in the same round trip.
  bool CleanShm(bool dry_run, bool verify = false);
  bool ResetGpus(const Action& action);
  void Time(const char* step, TimePoint start) {
    report_.timings.push_back(
        {step, duration_cast<milliseconds>(clock_.Now() - start)});
  }
  void Finish();

  Transport& transport_;
  const HostJob& job_;
  const Playbook& playbook_;
  CleanerClock& clock_;
  ProtectList protect_;
  int64_t threshold_ = 0;
  milliseconds nvidia_smi_timeout_{20000};
  HostReport report_;
  HostView view_;
  History history_;
  TimePoint last_signal_;
  bool failed_ = false;
  bool nvidia_smi_failed_ = false;  // the latest scan's query failed outright
  int device_gpus_ = 0;             // 1 + the highest /dev/nvidiaN seen
  std::vector<std::string> refused_;  // "PID (user)" that kill(1) refused
};

bool Runner::Fail(ErrorKind kind, const std::string& message) {
  if (!failed_) {
    failed_ = true;
    report_.status = HostStatus::kFailed;
    report_.error_kind = kind;
    report_.error_message = message;
  }
  return false;
}

bool Runner::Exec(const std::string& script, milliseconds timeout,
                  CommandResult* result) {
  TimePoint now = clock_.Now();
  if (now >= job_.deadline) return Fail(ErrorKind::kHostTimeout, "host deadline reached");
  if (job_.deadline != TimePoint::max()) {
    timeout = std::min(timeout, duration_cast<milliseconds>(job_.deadline - now));
  }
  *result = transport_.Run(BoundedCommand(script, timeout, job_.become), timeout);
  switch (result->end) {
    case CommandEnd::kExited:
      break;
    case CommandEnd::kTimedOut:
      return Fail(ErrorKind::kCommandTimeout,
                  "command did not finish within " +
                      std::to_string(timeout.count()) + "ms");
    case CommandEnd::kConnectionLost:
      return Fail(ErrorKind::kConnectionLost, result->error);
    case CommandEnd::kSignaled:
      return Fail(ErrorKind::kCommandFailed,
                  "remote command killed by SIG" + result->signal);
    case CommandEnd::kNotStarted:
      return Fail(ErrorKind::kCommandFailed,
                  "remote command not started: " + result->error);
  }
  if (IsSudoRefusal(*result)) return Fail(ErrorKind::kSudo, FirstLine(result->err));
  if (result->exit_code == 124 || result->exit_code == 137) {
    return Fail(ErrorKind::kCommandTimeout,
                "remote command ran past " + std::to_string(timeout.count()) + "ms");
  }
  return true;
}

bool Runner::QuickScan(std::vector<GpuReading>* gpus, const std::string* prefetched) {
  if (!Scan({}, gpus, /*holders=*/false, prefetched)) return false;
  for (const GpuReading& gpu : *gpus) {
    if (gpu.state != GpuState::kClean && gpu.state != GpuState::kProtectedOnly) {
      return Scan({}, gpus);
    }
  }
  return !gpus->empty() || Scan({}, gpus);
}

bool Runner::Scan(const std::vector<std::string>& units,
                  std::vector<GpuReading>* gpus, bool holders,
                  const std::string* prefetched) {
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  if (prefetched != nullptr) {
    result.out = *prefetched;
  } else if (!Exec(ScanScript(units, nvidia_smi_timeout_, holders), timeout, &result)) {
    return false;
  }
  ScanOutput scan;
  Status status = ParseScanOutput(result.out, &scan);
  if (!status.ok()) {
    return Fail(status.kind(), status.message() +
                                   (result.err.empty() ? "" : ": " + FirstLine(result.err)));
  }
  protect_.SetSession(scan.shell_pid, {scan.ancestors.begin(), scan.ancestors.end()});
  if (!history_.inspected) view_.active_units = scan.active_units;

  std::vector<Holder> scanned;
  HolderScanInfo info;
  if (holders) {
    status = ParseHolderScan(scan.holder_scan, &scanned, &info);
    if (!status.ok()) return Fail(status.kind(), status.message());
    for (const std::string& device : info.devices) {
      device_gpus_ = std::max(device_gpus_, GpuIndexOfDevice(device) + 1);
    }
  }

  GpuQueryResult query;
  if (scan.nvidia_smi_exit == 124 || scan.nvidia_smi_exit == 137) {
    report_.nvidia_smi_error = "nvidia-smi did not answer within " +
                               std::to_string(nvidia_smi_timeout_.count() / 1000) + "s";
    return Fail(ErrorKind::kCommandTimeout, report_.nvidia_smi_error);
  }
  status = ParseGpuQuery(scan.nvidia_smi_out, scan.nvidia_smi_err,
                         scan.nvidia_smi_exit, GpuQueryFields(), &query);
  if (!query.tool_message.empty()) report_.nvidia_smi_error = query.tool_message;
  nvidia_smi_failed_ = !status.ok() && query.failure != NvidiaSmiFailure::kGpuLost;
  if (!status.ok() && status.kind() != ErrorKind::kCommandFailed) {
    return Fail(status.kind(), status.message());
  }
  if (!status.ok() && report_.nvidia_smi_error.empty()) {
    report_.nvidia_smi_error = status.message();
  }
  *gpus = query.gpus;
  if (!status.ok() && query.failure == NvidiaSmiFailure::kGpuLost &&
      !ReadRowsBesideLostGpus(scan.nvidia_smi_out, gpus) &&
      !QueryGpusOneByOne(gpus)) {
    return false;
  }
  if (holders) {
    // /dev/nvidiaN is the device minor, not always nvidia-smi's index.
    MapHolderGpusToIndexes(info.minors, *gpus, &scanned);
    MergeHolderScan(scanned, protect_, history_.waves, &view_.holders);
  }
  std::vector<Holder> current;
  for (const TrackedHolder& t : view_.holders) current.push_back(t.holder);
  // Without an inventory count, the /dev/nvidiaN files say how many GPUs the
  // driver knows: a GPU that fell off the bus still has its device file.
  int expected = job_.host->expected_gpus > 0 ? job_.host->expected_gpus : device_gpus_;
  NumberTheLostGpu(expected, gpus);
  ClassifyGpus(current, expected, threshold_, gpus);
  if (holders && !FindGhostsUnderDaemons(gpus)) return false;
  view_.gpus = *gpus;
  return true;
}

bool Runner::QueryGpusOneByOne(std::vector<GpuReading>* gpus) {
  int count = job_.host->expected_gpus > 0 ? job_.host->expected_gpus : device_gpus_;
  std::vector<int> indexes;
  for (int i = 0; i < count; ++i) indexes.push_back(i);
  if (indexes.empty()) return true;
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  if (!Exec(PerGpuQueryScript(indexes, nvidia_smi_timeout_), timeout, &result)) {
    return false;
  }
  std::vector<PerGpuQuery> queries;
  Status status = ParsePerGpuQueryOutput(result.out, &queries);
  if (!status.ok()) return Fail(status.kind(), status.message());
  for (const PerGpuQuery& q : queries) {
    GpuQueryResult one;
    if (!ParseGpuQuery(q.out, "", q.exit_code, GpuQueryFields(), &one).ok()) continue;
    for (const GpuReading& gpu : one.gpus) {
      if (gpu.state != GpuState::kLost) gpus->push_back(gpu);
    }
  }
  return true;
}

// A GPU over the threshold that only protected daemons hold (persistenced,
// DCGM hold every GPU at 0 MiB) is a ghost when no process has memory on it:
// asks --query-compute-apps, only when such a GPU exists.
bool Runner::FindGhostsUnderDaemons(std::vector<GpuReading>* gpus) {
  std::vector<int> suspects = GpusHeldOnlyByProtected(view_.holders, *gpus);
  if (suspects.empty()) return true;
  CommandResult result;
  std::string script = "timeout -k 1 " + std::to_string(nvidia_smi_timeout_.count() / 1000) +
                       " " + ComputeAppsCommand() + " </dev/null";
  if (!Exec(script, job_.command_timeout, &result)) return false;
  std::vector<ComputeApp> apps;
  Status status = ParseComputeApps(result.out, result.err, result.exit_code,
                                   ComputeAppsFields(), &apps, nullptr);
  if (status.ok()) MarkGhostsWithoutApps(suspects, apps, gpus);  // else: "busy", the safe reading
  return true;
}

bool Runner::Signal(const Action& action) {
  const bool kill = action.kind == ActionKind::kKill;
  TimePoint start = clock_.Now();
  CommandResult result;
  std::string script = SignalScript(kill ? "KILL" : "TERM", action.targets,
                                    action.wait, playbook_.poll_interval);
  bool ok = Exec(script, action.wait + job_.command_timeout, &result);
  Time(kill ? "kill" : "term", start);
  if (!ok) return false;
  SignalOutput out;
  Status status = ParseSignalOutput(result.out, &out);
  if (!status.ok()) return Fail(status.kind(), status.message());
  last_signal_ = start;
  history_.signalled_since_scan = true;
  history_.rescans_since_signal = 0;
  for (const Target& target : action.targets) {
    auto it = std::find_if(view_.holders.begin(), view_.holders.end(),
                           [&](const TrackedHolder& t) {
                             return t.holder.pid == target.pid &&
                                    t.holder.start_time == target.start_time;
                           });
    if (it == view_.holders.end()) continue;
    history_.waves = std::max(history_.waves, it->holder.round);
    auto in = [&](const std::vector<int>& pids) {
      return std::count(pids.begin(), pids.end(), target.pid) > 0;
    };
    if (in(out.failed)) {
      // kill(1) refused (another user's process without --become): never
      // retried, never called unkillable; the host fails at the end.
      it->term_sent = it->kill_sent = true;
      refused_.push_back(std::to_string(target.pid) + " (" + it->holder.user + ")");
      continue;
    }
    if (in(out.sent)) {
      (kill ? it->kill_sent : it->term_sent) = true;
      (kill ? report_.kill_sent : report_.term_sent)++;
    }
    auto left = std::find_if(out.left.begin(), out.left.end(),
                             [&](const std::pair<int, char>& l) {
                               return l.first == target.pid;
                             });
    if (left != out.left.end()) {
      it->holder.state = left->second;
      if (kill) it->holder.fate = HolderFate::kUnkillable;
    } else {
      it->present = false;
      it->holder.fate = FateAfterExit(*it);
    }
  }
  return true;
}

bool Runner::StopUnits(const Action& action) {
  TimePoint start = clock_.Now();
  CommandResult result;
  milliseconds timeout = (playbook_.unit_stop_timeout + milliseconds(3000)) *
                             static_cast<int>(action.units.size()) +
                         job_.command_timeout;
  bool ok = Exec(StopUnitsScript(action.units, playbook_.unit_stop_timeout),
                 timeout, &result);
  Time("stop_units", start);
  history_.units_done = true;
  if (!ok) return false;
  std::vector<UnitStop> stops;
  Status status = ParseStopUnitsOutput(result.out, action.units, &stops);
  if (!status.ok()) return Fail(status.kind(), status.message());
  for (const UnitStop& stop : stops) {
    if (stop.exit_code == 0) report_.units_stopped.push_back(stop.unit);
  }
  return true;
}

bool Runner::CleanShm(bool dry_run, bool verify) {
  TimePoint start = clock_.Now();
  CommandResult result;
  std::string script = ShmCleanScript(playbook_.shm_patterns, dry_run);
  if (verify) script += ScanScript({}, nvidia_smi_timeout_, /*holders=*/false);
  bool ok = Exec(script, job_.command_timeout + nvidia_smi_timeout_, &result);
  history_.shm_done = true;
  if (!ok) return false;
  ShmOutput out;
  Status status = ParseShmOutput(result.out, &out);
  if (!status.ok()) return Fail(status.kind(), status.message());
  (dry_run ? report_.shm_would_remove : report_.shm_removed) = out.removed;
  if (!verify) {
    Time("clean_shm", start);
    return true;
  }
  size_t end = result.out.find("@@end\n");
  std::string rest = end == std::string::npos ? "" : result.out.substr(end + 6);
  history_.verified = true;
  bool verified = QuickScan(&report_.gpus_after, &rest);
  Time("clean_shm+verify", start);
  return verified;
}

bool Runner::ResetGpus(const Action& action) {
  TimePoint start = clock_.Now();
  CommandResult result;
  bool ok = Exec(GpuResetScript(action.gpus), job_.command_timeout, &result);
  Time("reset_gpus", start);
  history_.reset_done = true;
  history_.verified = false;
  if (!ok) return false;
  std::vector<GpuReset> resets;
  Status status = ParseGpuResetOutput(result.out, &resets);
  if (!status.ok()) return Fail(status.kind(), status.message());
  for (const GpuReset& reset : resets) {
    if (reset.exit_code == 0) {
      report_.gpus_reset.push_back(reset.gpu);
    } else if (report_.reset_blocked_by.empty()) {
      report_.reset_blocked_by = "GPU " + std::to_string(reset.gpu) + ": " + reset.message;
    }
  }
  return true;
}

HostReport Runner::Run() {
  TimePoint run_start = clock_.Now();
  for (int step = 0; step < 64 && !failed_; ++step) {
    if (clock_.Now() >= job_.deadline) {
      Fail(ErrorKind::kHostTimeout, "host deadline reached");
      break;
    }
    if (job_.dry_run && history_.inspected) {
      if (playbook_.Runs(Step::kCleanShm) && !playbook_.shm_patterns.empty()) {
        CleanShm(/*dry_run=*/true);
      }
      break;
    }
    Action action = NextAction(playbook_, view_, history_);
    if (action.kind == ActionKind::kDone) break;
    TimePoint start = clock_.Now();
    switch (action.kind) {
      case ActionKind::kInspect: {
        std::vector<std::string> units;
        if (playbook_.Runs(Step::kStopUnits)) units = playbook_.units;
        if (Scan(units, &report_.gpus_before)) {
          report_.gpus_after = report_.gpus_before;
        }
        history_.inspected = true;
        Time("inspect", start);
        break;
      }
      case ActionKind::kStopUnits:
        StopUnits(action);
        break;
      case ActionKind::kTerm:
      case ActionKind::kKill:
        Signal(action);
        break;
      case ActionKind::kRescan: {
        milliseconds since = duration_cast<milliseconds>(start - last_signal_);
        if (action.wait > since) {
          milliseconds sleep = action.wait - since;
          if (job_.deadline != TimePoint::max()) {
            sleep = std::min(sleep, duration_cast<milliseconds>(job_.deadline - start));
          }
          clock_.SleepFor(sleep);
        }
        TimePoint scan_start = clock_.Now();
        // The quick re-scan trusts nvidia-smi when every GPU reads clean; the
        // settle re-scan always looks at the device files again.
        if (history_.rescans_since_signal == 0) {
          QuickScan(&report_.gpus_after);
        } else {
          Scan({}, &report_.gpus_after);
        }
        history_.signalled_since_scan = false;
        history_.rescans_since_signal++;
        Time("rescan", scan_start);
        break;
      }
      case ActionKind::kCleanShm:
        CleanShm(/*dry_run=*/false, playbook_.Runs(Step::kVerify) && !history_.verified);
        break;
      case ActionKind::kVerify:
        QuickScan(&report_.gpus_after);
        history_.verified = true;
        Time("verify", start);
        break;
      case ActionKind::kResetGpus:
        ResetGpus(action);
        break;
      case ActionKind::kDone:
        break;
    }
  }
  Finish();
  report_.duration = duration_cast<milliseconds>(clock_.Now() - run_start);
  return report_;
}

void Runner::Finish() {
  for (TrackedHolder& t : view_.holders) {
    if (job_.dry_run && t.present) t.holder.fate = PlannedFate(playbook_, t.holder);
    report_.holders.push_back(t.holder);
  }
  if (job_.dry_run && playbook_.Runs(Step::kStopUnits)) {
    report_.units_would_stop = view_.active_units;
  }
  report_.rounds = history_.waves;
  report_.respawning_parent = RespawningParent(view_.holders);
  if (playbook_.Runs(Step::kResetGhosts)) report_.reset_blocked_by = [&] {
    std::string blockers = ResetBlockers(view_);
    return blockers.empty() ? report_.reset_blocked_by : blockers;
  }();
  if (failed_) return;
  if (!refused_.empty()) {
    std::string pids;
    for (const std::string& p : refused_) pids += (pids.empty() ? "" : ", ") + p;
    Fail(ErrorKind::kCommandFailed,
         "not permitted to signal " + pids + ": run with --become or as root");
    return;
  }
  if (nvidia_smi_failed_) {
    Fail(ErrorKind::kCommandFailed, "nvidia-smi: " + report_.nvidia_smi_error);
    return;
  }
  bool clean = HostGpusClean(report_.gpus_after);
  report_.status = clean ? HostStatus::kClean : HostStatus::kDirty;
  report_.error_kind = ErrorKind::kNone;
}

}  // namespace

CleanerClock& RealCleanerClock() {
  static RealClock clock;
  return clock;
}

HostReport CleanHost(Transport& transport, const HostJob& job) {
  if (job.host == nullptr || job.playbook == nullptr) {
    HostReport report;
    report.error_kind = ErrorKind::kInternal;
    report.error_message = "CleanHost needs a host and a playbook";
    return report;
  }
  Runner runner(transport, job);
  return runner.Run();
}

}  // namespace fleetreap
