// FakeSteps: a host as the cleaner tests play it (processes, GPUs, units,
// /dev/shm), answering each step of host_steps.h with the model values the
// real steps would read from such a host (a HostSnapshot, a SignalReply,
// the units' stops, a /dev/shm outcome, the resets), and logging each round
// trip by what it did ("scan", "term", "shm+smi"). It reads no script text:
// the scripts and their parsers have their own tests (tests/unit/remote).
// Not thread-safe; one per test.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/model/process_owner.h"
#include "fleetreap/runner/host_steps.h"
#include "support/fake_clock.h"

namespace fleetreap {
namespace fake_host {

using std::chrono::milliseconds;

// kHidesFromSignal: the signal step reports it gone without signalling it
// (a comm that breaks its /proc/PID/stat line), yet every scan finds it.
enum class Behavior { kExitsOnTerm, kIgnoresTerm, kUnkillable, kHidesFromSignal };

struct FakeProc {
  int pid = 0;
  int ppid = 1;
  std::string comm;
  std::string exe;
  std::vector<int> gpus;
  int64_t mib = 0;  // per GPU held
  Behavior behavior = Behavior::kExitsOnTerm;
  std::string unit;  // main process of this unit
  bool alive = true;
  bool foreign = false;   // owned by another user: kill(1) is refused
  std::string cgroup;     // its cgroup v2 path, "" for the root
  bool ctl_only = false;  // holds /dev/nvidiactl alone (gpus empty)
  uint64_t start() const { return 5000 + pid; }
};

// A host as the fake plays it: processes, GPUs, units, /dev/shm.
struct FakeHost {
  int gpus = 8;
  std::vector<FakeProc> procs;
  std::vector<FakeProc> respawns;  // appear after the first signal wave
  std::map<int, int64_t> ghost_mib;
  std::vector<std::string> shm;
  int nvidia_smi_exit = 0;  // non-zero (and no lost GPU): the driver is not loaded
  int lost_gpu = -1;        // nvidia-smi names it lost and exits 15
  bool sudo_refuses = false;
  std::string pid_namespace = "pid:[4026531836]";  // the scan shell's
  /// The reset step's answer: by default every reset refused (GPU 2 in
  /// use); "reset_reply" instead when set; an error when "reset_error" is.
  std::optional<GpuResetReply> reset_reply;
  ErrorKind reset_error = ErrorKind::kNone;
};

// nvidia-smi's words for the fake's two failures.
inline constexpr char kLostLine[] =
    "Unable to determine the device handle for GPU 0000:CB:00.0: GPU is lost. Reboot the "
    "system to recover this GPU";
inline constexpr char kNoDriver[] =
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running.";

class FakeSteps : public HostSteps {
 public:
  FakeSteps(FakeHost host, FakeClock* clock) : host_(std::move(host)), clock_(clock) {}

  void StartStep(const char*) override {}

  // One round trip, logged by the names of the steps that ran joined by "+"
  // ("stop+term"). As the script does, the steps after a wave that left a
  // target of a TERM or a live parent do not run.
  Status Run(const std::vector<StepRequest>& batch, std::vector<StepReply>* replies) override {
    replies->clear();
    if (!RoundTrip()) return Refused();
    std::string what;
    for (const StepRequest& step : batch) {
      StepReply reply;
      Status status = Answer(step, &reply);
      if (!status.ok()) return status;
      what += (what.empty() ? "" : "+") + Name(step);
      replies->push_back(std::move(reply));
      const auto* wave = std::get_if<SignalReply>(&replies->back());
      if (wave != nullptr &&
          (!wave->live_parents.empty() ||
           (!wave->left.empty() && std::get<SignalRequest>(step).signal != "KILL"))) {
        break;
      }
    }
    log_.push_back(what);
    return Status::Ok();
  }

  std::string Log() const {
    std::string out;
    for (const std::string& entry : log_) out += (out.empty() ? "" : " ") + entry;
    return out;
  }
  const FakeHost& host() const { return host_; }

 private:
  static std::string Name(const StepRequest& step) {
    if (const auto* scan = std::get_if<ScanRequest>(&step)) return scan->holders ? "scan" : "smi";
    if (std::holds_alternative<GpuQueryRequest>(step)) return "gpus";
    if (const auto* wave = std::get_if<SignalRequest>(&step)) {
      return wave->signal == "KILL" ? "kill" : "term";
    }
    if (std::holds_alternative<StopUnitsRequest>(step)) return "stop";
    if (const auto* shm = std::get_if<ShmRequest>(&step)) return shm->dry_run ? "shm?" : "shm";
    return "reset";
  }

  // One step's reply, in the order the batch runs them.
  Status Answer(const StepRequest& step, StepReply* reply) {
    if (const auto* scan = std::get_if<ScanRequest>(&step)) {
      *reply = Snapshot(scan->holders);
    } else if (const auto* query = std::get_if<GpuQueryRequest>(&step)) {
      std::vector<GpuReading> gpus;
      for (int index : query->indexes) {
        if (index != host_.lost_gpu && index < host_.gpus) gpus.push_back(Reading(index));
      }
      *reply = gpus;
    } else if (const auto* wave = std::get_if<SignalRequest>(&step)) {
      *reply = SignalWave(*wave);
    } else if (const auto* stop = std::get_if<StopUnitsRequest>(&step)) {
      *reply = UnitStops{Stop(stop->units), {}};
    } else if (const auto* shm = std::get_if<ShmRequest>(&step)) {
      *reply = Shm(shm->dry_run);
    } else {
      return Reset(reply);
    }
    return Status::Ok();
  }

  // Every reset is refused: another client holds GPU 2.
  Status Reset(StepReply* reply) const {
    if (host_.reset_error != ErrorKind::kNone) {
      return Status::Error(host_.reset_error, "reset_gpus: remote command ran past 60000ms");
    }
    GpuResetReply reset;
    reset.resets = {{2, 255, "In use by another client", ""}};
    *reply = host_.reset_reply ? *host_.reset_reply : reset;
    return Status::Ok();
  }

  // One round trip: time passes; false when sudo refuses it.
  bool RoundTrip() {
    clock_->Advance(milliseconds(5));
    return !host_.sudo_refuses;
  }

  static Status Refused() {
    return Status::Error(ErrorKind::kSudo, "sudo: a password is required");
  }

  GpuReading Reading(int index) const {
    GpuReading gpu;
    gpu.index = index;
    gpu.uuid = "GPU-" + std::to_string(index);
    gpu.name = "NVIDIA H200";
    gpu.bus_id = "00000000:1" + std::to_string(index) + ":00.0";
    int64_t used = host_.ghost_mib.count(index) ? host_.ghost_mib.at(index) : 0;
    for (const FakeProc& p : host_.procs) {
      for (int g : p.gpus) used += (p.alive && g == index) ? p.mib : 0;
    }
    gpu.used_mib = used;
    gpu.total_mib = 143771;
    gpu.recovery_action = "None";
    return gpu;
  }

  // What nvidia-smi's GPU query says: every GPU, the lost one named by its
  // bus id, or the driver's failure.
  GpuQueryAnswer GpuQuery() const {
    GpuQueryAnswer answer;
    if (host_.lost_gpu < 0 && host_.nvidia_smi_exit != 0) {
      answer.tool_message = std::string("\"") + kNoDriver + "\"";
      answer.status = Status::Error(ErrorKind::kCommandFailed,
                                    "nvidia-smi failed (no_driver): " + answer.tool_message);
      answer.stops_ladder = true;
      return answer;
    }
    for (int i = 0; i < host_.gpus; ++i) {
      if (i != host_.lost_gpu) answer.gpus.push_back(Reading(i));
    }
    if (host_.lost_gpu >= 0) {
      GpuReading lost;
      lost.bus_id = "00000000:CB:00.0";
      lost.state = GpuState::kLost;
      lost.detail = kLostLine;
      answer.gpus.push_back(lost);
      answer.tool_message = std::string("\"") + kLostLine + "\"";
      answer.gpu_lost = true;
      answer.stops_ladder = true;
    }
    return answer;
  }

  Holder HolderOf(const FakeProc& p) const {
    Holder h;
    h.pid = p.pid;
    h.start_time = p.start();
    h.ppid = p.ppid;
    h.user = "root";
    h.state = p.behavior == Behavior::kUnkillable ? 'D' : 'S';
    h.comm = p.comm;
    h.exe = p.exe;
    h.cmdline = p.comm;
    std::vector<int> minors = p.gpus;
    std::sort(minors.begin(), minors.end());
    minors.erase(std::unique(minors.begin(), minors.end()), minors.end());
    h.gpus = minors;
    for (int g : minors) h.devices.push_back("/dev/nvidia" + std::to_string(g));
    if (p.ctl_only) h.devices.push_back("/dev/nvidiactl");
    std::sort(h.devices.begin(), h.devices.end());
    h.owner = OwnerFromCgroup(p.cgroup.empty() ? "/" : p.cgroup);
    if (!p.exe.empty()) {
      h.exe_uid = 0;
      h.exe_mode = 0755;
    }
    return h;
  }

  // The holder part of a scan: the device files' holders, nvidia-smi's
  // compute apps (none beside a failed query), the active units.
  void AddHolders(HostSnapshot* snapshot) const {
    for (const FakeProc& p : host_.procs) {
      if (!p.alive || (p.gpus.empty() && !p.ctl_only)) continue;
      snapshot->holders.push_back(HolderOf(p));
      for (int g : p.gpus) snapshot->device_gpus = std::max(snapshot->device_gpus, g + 1);
    }
    std::sort(snapshot->holders.begin(), snapshot->holders.end(),
              [](const Holder& a, const Holder& b) { return a.pid < b.pid; });
    const bool answers = host_.lost_gpu < 0 && host_.nvidia_smi_exit == 0;
    for (const FakeProc& p : host_.procs) {
      for (int g : p.gpus) {
        if (!answers || !p.alive || p.mib <= 0) continue;
        snapshot->apps.push_back({p.pid, "", "GPU-" + std::to_string(g),
                                  "00000000:1" + std::to_string(g) + ":00.0", p.mib});
      }
    }
    for (const FakeProc& p : host_.procs) {
      if (p.alive && !p.unit.empty()) snapshot->active_units.push_back(p.unit);
    }
    snapshot->self_cgroup = "/system.slice/ssh.service";
  }

  HostSnapshot Snapshot(bool holders) const {
    HostSnapshot snapshot;
    snapshot.holders_scanned = holders;
    snapshot.shell_pid = 9000;
    snapshot.ancestors = {8999, 8998};
    if (holders) {
      snapshot.pid_namespace = host_.pid_namespace;
      // nvidia-smi's PIDs are the host's: a scan from another namespace
      // reads no further.
      snapshot.sees_host_pid_namespace = host_.pid_namespace == "pid:[4026531836]";
      if (!snapshot.sees_host_pid_namespace) return snapshot;
      AddHolders(&snapshot);
    }
    snapshot.gpu_query = GpuQuery();
    return snapshot;
  }

  std::vector<UnitStop> Stop(const std::vector<std::string>& units) {
    std::vector<UnitStop> stops;
    for (FakeProc& p : host_.procs) {
      if (p.unit.empty() || !p.alive) continue;
      p.alive = false;
      const size_t index = stops.size();
      stops.push_back({index < units.size() ? units[index] : p.unit, 0});
    }
    return stops;
  }

  ShmOutput Shm(bool dry_run) {
    ShmOutput out;
    out.removed = host_.shm;
    if (!dry_run) host_.shm.clear();
    return out;
  }

  SignalReply SignalWave(const SignalRequest& wave) {
    const bool kill = wave.signal == "KILL";
    SignalReply reply;
    reply.now = 7000;
    for (const Target& target : wave.targets) {
      FakeProc* p = nullptr;
      for (FakeProc& candidate : host_.procs) {
        if (candidate.pid == target.pid && candidate.alive) p = &candidate;
      }
      if (p == nullptr || p->behavior == Behavior::kHidesFromSignal) {
        reply.gone.push_back(target.pid);
        continue;
      }
      if (p->foreign) {
        reply.failed.push_back(target.pid);
        continue;
      }
      reply.sent.push_back(target.pid);
      bool dies =
          kill ? p->behavior != Behavior::kUnkillable : p->behavior == Behavior::kExitsOnTerm;
      if (dies) {
        p->alive = false;
      } else {
        reply.left.push_back({target.pid, kill ? 'D' : 'S'});
      }
    }
    // The parents asked about: alive unless the fake host has them dead.
    for (int parent : wave.parents) {
      bool dead = false;
      for (const FakeProc& p : host_.procs) dead = dead || (p.pid == parent && !p.alive);
      if (!dead) reply.live_parents.push_back(parent);
    }
    for (FakeProc& r : host_.respawns) host_.procs.push_back(r);
    host_.respawns.clear();
    return reply;
  }

  FakeHost host_;
  FakeClock* clock_;
  std::vector<std::string> log_;
};

}  // namespace fake_host
}  // namespace fleetreap
