#include "fleetreap/base/shell.h"
#include "fleetreap/runner/host_cleaner.h"

#include "fleetreap/remote/nvidia_smi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

enum class Behavior { kExitsOnTerm, kIgnoresTerm, kUnkillable };

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
  bool foreign = false;  // owned by another user: kill(1) is refused
  std::string cgroup;    // its cgroup v2 path, "" for the root
  uint64_t start() const { return 5000 + pid; }
};

// A host as the fake transport plays it: processes, GPUs, units, /dev/shm.
struct FakeHost {
  int gpus = 8;
  std::vector<FakeProc> procs;
  std::vector<FakeProc> respawns;  // appear after the first signal wave
  std::map<int, int64_t> ghost_mib;
  std::vector<std::string> shm;
  int nvidia_smi_exit = 0;
  int lost_gpu = -1;  // nvidia-smi prints the lost line for it and exits 15
  bool sudo_refuses = false;
  std::string pid_namespace = "pid:[4026531836]";  // the scan shell's
};

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now_; }
  void SleepFor(milliseconds d) override {
    now_ += d;
    slept_ += d;
  }
  void Advance(milliseconds d) { now_ += d; }
  milliseconds slept_{0};

 private:
  std::chrono::steady_clock::time_point now_{};
};

class FakeTransport : public Transport {
 public:
  FakeTransport(FakeHost host, FakeClock* clock) : host_(std::move(host)), clock_(clock) {}
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  void Close() override {}
  std::string Describe() const override { return "fake"; }

  CommandResult Run(const std::string& command, milliseconds) override {
    clock_->Advance(milliseconds(5));
    CommandResult r;
    r.end = CommandEnd::kExited;
    r.exit_code = 0;
    if (host_.sudo_refuses) {
      r.exit_code = 1;
      r.err = "sudo: a password is required\n";
      return r;
    }
    const bool scan = Has(command, "scan 1");
    const bool holders = Has(command, "HOLD=1");
    const size_t scan_at = command.find("scan 1"), shm_at = command.find("shm 1");
    if (scan_at != std::string::npos && shm_at != std::string::npos && scan_at < shm_at) {
      // The first re-scan after a wave, fused with the shm clean and verify.
      const std::string first = command.substr(0, shm_at);
      const bool full = Has(first, "HOLD=1");
      log_.push_back(std::string(full ? "scan" : "smi") + "+shm+smi");
      r.out = Scan(first, full) + Nul("shm 1");
      for (const std::string& f : host_.shm) r.out += Nul("removed:" + f);
      host_.shm.clear();
      r.out += Scan(command.substr(shm_at), false);
    } else if (Has(command, "shm 1")) {
      bool dry = Has(command, "DRY=1");
      log_.push_back(dry ? "shm?" : "shm");
      r.out = Nul("shm 1");
      for (const std::string& f : host_.shm) r.out += Nul((dry ? "would:" : "removed:") + f);
      if (!dry) host_.shm.clear();
      if (scan) {
        log_.back() += holders ? "+scan" : "+smi";
        r.out += Scan(command, holders);
      } else {
        r.out += Nul("end");
      }
    } else if (scan) {
      log_.push_back(holders ? "scan" : "smi");
      r.out = Scan(command, holders);
    } else if (Has(command, "systemctl stop")) {
      log_.push_back("stop");
      r.out = Stop();
      if (Has(command, "signal 1")) {  // the first wave rides along
        const bool kill = Has(command, "SIG=KILL");
        log_.back() += kill ? "+kill" : "+term";
        r.out = r.out.substr(0, r.out.size() - 4) + Signal(command, kill);
      }
    } else if (Has(command, "SIG=TERM")) {
      log_.push_back("term");
      r.out = Signal(command, false);
    } else if (Has(command, "SIG=KILL")) {
      log_.push_back("kill");
      r.out = Signal(command, true);
    } else if (Has(command, "--gpu-reset")) {
      log_.push_back("reset");
      r.out = Nul("reset 2 255:In use by another client\n") + Nul("end");
    } else {
      log_.push_back("?");
      r.exit_code = 2;
    }
    return r;
  }

  std::string Log() const {
    std::string out;
    for (const std::string& entry : log_) out += (out.empty() ? "" : " ") + entry;
    return out;
  }
  const FakeHost& host() const { return host_; }

 private:
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  static std::string Nul(const std::string& text) { return text + '\0'; }

  // The GPU query's answer, in the columns fleetreap asks for.
  std::string GpuQuery() {
    std::ostringstream out;
    const std::vector<std::string>& fields = GpuQueryFields();
    bool recovery = std::find(fields.begin(), fields.end(), "gpu_recovery_action") != fields.end();
    if (host_.lost_gpu >= 0) {
      out << "Unable to determine the device handle for GPU 0000:CB:00.0: GPU "
             "is lost. Reboot the system to recover this GPU\n";
    }
    out << "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]"
        << (recovery ? ", gpu_recovery_action" : "") << "\n";
    for (int i = 0; i < host_.gpus; ++i) {
      if (i == host_.lost_gpu) continue;
      int64_t used = host_.ghost_mib.count(i) ? host_.ghost_mib[i] : 0;
      for (const FakeProc& p : host_.procs) {
        for (int g : p.gpus) used += (p.alive && g == i) ? p.mib : 0;
      }
      out << i << ", GPU-" << i << ", NVIDIA H200, 00000000:1" << i << ":00.0, " << used
          << ", 143771" << (recovery ? ", None" : "") << "\n";
    }
    return out.str();
  }

  std::string Scan(const std::string& command, bool holders) {
    std::string out = Nul("scan 1") + Nul("session 9000 8999 8998");
    if (Has(command, "systemctl list-units")) {
      std::string units;
      for (const FakeProc& p : host_.procs) {
        if (p.alive && !p.unit.empty()) units += p.unit + " loaded active running x\n";
      }
      out += Nul("units 0:" + units);
    } else {
      out += Nul("units -");
    }
    bool answers = host_.nvidia_smi_exit == 0 || host_.lost_gpu >= 0;
    const std::string failure =
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.";
    int rc = host_.lost_gpu >= 0 ? 15 : host_.nvidia_smi_exit;
    out += Nul("gpu " + std::to_string(rc) + ":" + (answers ? GpuQuery() : failure));
    if (!holders) return out + Nul("apps -") + Nul("table -") + Nul("end");
    std::ostringstream apps;
    apps << "pid, gpu_uuid, gpu_bus_id, used_gpu_memory [MiB]\n";
    for (const FakeProc& p : host_.procs) {
      for (int g : p.gpus) {
        if (p.alive && p.mib > 0 && g != host_.lost_gpu) {
          apps << p.pid << ", GPU-" << g << ", 00000000:1" << g << ":00.0, " << p.mib << "\n";
        }
      }
    }
    out += Nul("apps " + std::to_string(rc) + ":" + (answers && rc == 0 ? apps.str() : failure));
    // The plain table, when asked (a ghost suspected): no graphics client.
    out += Has(command, "TABLE=1") ? Nul("table 0:No running processes found\n") : Nul("table -");
    out += Nul("majors 195 nvidia");
    std::ostringstream details;
    for (const FakeProc& p : host_.procs) {
      if (!p.alive || p.gpus.empty()) continue;
      int fd = 3;
      for (int g : p.gpus) {
        out += Nul("fd " + std::to_string(p.pid) + " " + std::to_string(fd++) + " 195 " +
                   std::to_string(g));
      }
      std::ostringstream stat;
      char state = p.behavior == Behavior::kUnkillable ? 'D' : 'S';
      stat << p.pid << " (" << p.comm << ") " << state << " " << p.ppid;
      for (int f = 5; f <= 21; ++f) stat << " 0";
      stat << " " << p.start() << " 0 0";
      std::string proc = "/proc/" + std::to_string(p.pid);
      details << Nul(proc + "/stat:" + stat.str()) << Nul(proc + "/status:Uid:\t0\t0\t0\t0\n")
              << Nul(proc + "/cmdline:" + p.comm)
              << Nul(proc + "/cgroup:0::" + (p.cgroup.empty() ? "/" : p.cgroup) + "\n");
      if (!p.exe.empty()) {
        details << Nul("exe " + proc + ":" + p.exe) << Nul("exs " + proc + " 0 755");
      }
    }
    return out + details.str() + Nul("/etc/passwd:root:x:0:0::/root:/bin/sh\n") +
           Nul("pidns:" + host_.pid_namespace) + Nul("selfcg:0::/system.slice/ssh.service\n") +
           Nul("show -") + Nul("end");
  }

  std::string Stop() {
    std::string out;
    int index = 0;
    for (FakeProc& p : host_.procs) {
      if (p.unit.empty() || !p.alive) continue;
      p.alive = false;
      out += Nul("stop " + std::to_string(index++) + " 0");
    }
    return out + Nul("end");
  }

  std::string Signal(const std::string& command, bool kill) {
    // The script arrives single-quoted by BoundedCommand: skip the quoting.
    std::string list = command.substr(command.find("TG=") + 3);
    list = list.substr(list.find_first_of("0123456789"));
    list = list.substr(0, list.find('\''));
    std::istringstream targets(list);
    std::string out = Nul("signal 1") + Nul("now 7000"), left;
    std::string t;
    while (targets >> t) {
      int pid = std::stoi(t.substr(0, t.find(':')));
      FakeProc* p = nullptr;
      for (FakeProc& candidate : host_.procs) {
        if (candidate.pid == pid && candidate.alive) p = &candidate;
      }
      if (p == nullptr) {
        out += Nul("gone " + std::to_string(pid));
        continue;
      }
      if (p->foreign) {
        out += Nul("failed " + std::to_string(pid));
        continue;
      }
      out += Nul("sent " + std::to_string(pid));
      bool dies = kill ? p->behavior != Behavior::kUnkillable
                       : p->behavior == Behavior::kExitsOnTerm;
      if (dies) {
        p->alive = false;
      } else {
        left += Nul("left " + std::to_string(pid) + " " + (kill ? "D" : "S"));
      }
    }
    // The parents asked about: alive unless the fake host has them dead.
    size_t at = command.find("PP=");
    std::string pp = at == std::string::npos ? "" : command.substr(at + 3);
    pp = pp.substr(0, pp.find('\n'));
    for (char& c : pp) c = std::isdigit(static_cast<unsigned char>(c)) ? c : ' ';
    std::istringstream parents(pp);
    for (int parent; parents >> parent;) {
      bool dead = false;
      for (const FakeProc& p : host_.procs) dead = dead || (p.pid == parent && !p.alive);
      if (!dead) left += Nul("parent " + std::to_string(parent));
    }
    for (FakeProc& r : host_.respawns) host_.procs.push_back(r);
    host_.respawns.clear();
    return out + left + Nul("end");
  }

  FakeHost host_;
  FakeClock* clock_;
  std::vector<std::string> log_;
};

FakeProc Worker(int pid, int gpu, int ppid = 100) {
  FakeProc p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = "VLLM::Worker_TP";
  p.exe = "/usr/bin/python3.11";
  p.gpus = {gpu};
  p.mib = 96000;
  return p;
}

FakeHost Incident() {
  FakeHost host;
  FakeProc server;
  server.pid = 100;
  server.comm = "vllm";
  server.exe = "/usr/bin/python3.11";
  server.unit = "vllm.service";
  host.procs.push_back(server);
  for (int i = 0; i < 8; ++i) host.procs.push_back(Worker(200 + i, i));
  host.shm = {"nccl-AbC123", "psm_1f2e"};
  return host;
}

struct Outcome {
  HostReport report;
  std::string log;
  milliseconds slept;
};

Outcome Clean(FakeHost host, const Playbook& playbook, bool dry_run = false,
              const Scope& scope = Scope()) {
  FakeClock clock;
  FakeTransport transport(std::move(host), &clock);
  Host h;
  h.name = "gpu01";
  h.expected_gpus = 8;
  HostJob job;
  job.host = &h;
  job.playbook = &playbook;
  job.dry_run = dry_run;
  job.clock = &clock;
  job.scope = scope;
  Outcome outcome{CleanHost(transport, job), transport.Log(), clock.slept_};
  return outcome;
}

Playbook Vllm() {
  Playbook p;
  Status status = LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/vllm.yaml", &p);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return p;
}

int CountFate(const HostReport& report, HolderFate fate) {
  int n = 0;
  for (const Holder& h : report.holders) n += h.fate == fate;
  return n;
}

TEST(HostCleanerTest, CleanHostTakesInspectShmVerify) {
  FakeHost host;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan shm+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean) << o.report.error_message;
  EXPECT_EQ(o.report.gpus_after.size(), 8u);
  EXPECT_EQ(o.slept.count(), 0);
}

TEST(HostCleanerTest, VllmIncident) {
  Outcome o = Clean(Incident(), Vllm());
  EXPECT_EQ(o.log, "scan stop+term smi+shm+smi");  // 3 round trips
  EXPECT_EQ(o.report.status, HostStatus::kClean) << o.report.error_message;
  EXPECT_EQ(o.report.units_stopped, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(o.report.term_sent, 8);
  EXPECT_EQ(o.report.kill_sent, 0);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 8);
  EXPECT_EQ(o.report.shm_removed.size(), 2u);
  EXPECT_EQ(o.report.rounds, 1);
  // Only the quick settle after the TERM wave, never the full 2 s.
  EXPECT_LE(o.slept.count(), 500);
}

TEST(HostCleanerTest, IgnoredTermGetsKill) {
  FakeHost host;
  for (int i = 0; i < 4; ++i) host.procs.push_back(Worker(300 + i, i, /*ppid=*/1));  // orphans
  host.procs[1].behavior = Behavior::kIgnoresTerm;
  host.procs[3].behavior = Behavior::kIgnoresTerm;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term kill smi+shm+smi");  // orphans: the quick re-scan
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.term_sent, 4);
  EXPECT_EQ(o.report.kill_sent, 2);
  EXPECT_EQ(CountFate(o.report, HolderFate::kKilled), 2);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 2);
}

TEST(HostCleanerTest, UnkillableIsNamedNotRetried) {
  FakeHost host;
  host.procs.push_back(Worker(300, 2));
  host.procs[0].behavior = Behavior::kUnkillable;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term kill scan+shm+smi scan shm+smi scan");
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  ASSERT_EQ(o.report.holders.size(), 1u);
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kUnkillable);
  EXPECT_EQ(o.report.holders[0].state, 'D');
}

TEST(HostCleanerTest, ProtectedDaemonsAreNeverTargets) {
  FakeHost host;
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nvidia-persiste";
  daemon.exe = "/usr/bin/nvidia-persistenced";
  daemon.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  FakeProc fake = Worker(60, 1, /*ppid=*/1);
  fake.comm = "nvidia-persiste";  // a user process wearing the daemon's name
  host.procs = {daemon, fake};
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term smi+shm+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.holders[0].protected_by, "nvidia-persistenced");
  EXPECT_EQ(o.report.holders[1].fate, HolderFate::kTerminated);
}

// A user's copy of python named like a daemon is a job; a real daemon that
// holds memory leaves the GPU busy and named, never silently accepted.
TEST(HostCleanerTest, ImpostorsAreJobsAndBusyDaemonsAreNamed) {
  FakeHost host;
  FakeProc impostor = Worker(60, 1);
  impostor.comm = "nvidia-persiste";
  impostor.exe = "/home/gpuops/bin/nvidia-persistenced";
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nv-hostengine";
  daemon.exe = "/usr/bin/nv-hostengine";
  daemon.gpus = {2};
  daemon.mib = 512;
  host.procs = {daemon, impostor};
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(o.report.holders[1].fate, HolderFate::kTerminated);
  EXPECT_EQ(o.report.holders[1].named_like, "nvidia-persistenced");
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.gpus_after[2].state, GpuState::kBusy);
  EXPECT_EQ(o.report.gpus_after[2].detail,
            "512 MiB used, held only by protected nv-hostengine (50)");
}

// Seen from a PID namespace that is not the host's, nvidia-smi's PIDs name
// other processes: nothing is signalled, dry run or not.
TEST(HostCleanerTest, ForeignPidNamespaceSignalsNothing) {
  FakeHost host = Incident();
  host.pid_namespace = "pid:[4026532999]";
  for (bool dry_run : {false, true}) {
    Outcome o = Clean(host, Vllm(), dry_run);
    EXPECT_EQ(o.log, dry_run ? "shm?+scan" : "scan") << dry_run;
    EXPECT_EQ(o.report.status, HostStatus::kFailed);
    EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
    EXPECT_NE(o.report.error_message.find("does not see the host's PID namespace "
                                          "(pid:[4026532999])"),
              std::string::npos)
        << o.report.error_message;
  }
}

// Two jobs share the host; the run is scoped to the second one's GPUs.
TEST(HostCleanerTest, ScopedRunNeverTouchesTheCoTenant) {
  FakeHost host;
  for (int i = 0; i < 4; ++i) host.procs.push_back(Worker(300 + i, i));
  for (int i = 4; i < 8; ++i) host.procs.push_back(Worker(300 + i, i));
  Scope scope;
  scope.gpus = std::vector<int>{4, 5, 6, 7};
  scope.source = "flags";
  Outcome o = Clean(host, DefaultPlaybook(), false, scope);
  EXPECT_EQ(o.report.status, HostStatus::kClean) << o.report.error_message;
  EXPECT_EQ(o.report.term_sent, 4);
  EXPECT_EQ(CountFate(o.report, HolderFate::kOutOfScope), 4);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 4);
  for (const Holder& h : o.report.holders) {
    EXPECT_EQ(h.fate == HolderFate::kOutOfScope, h.pid < 304) << h.pid;
  }
  EXPECT_EQ(o.report.gpus_after[0].state, GpuState::kOutOfScope);
  EXPECT_EQ(o.report.gpus_after[5].state, GpuState::kClean);
}

TEST(HostCleanerTest, GhostMemoryIsNamed) {
  FakeHost host;
  host.ghost_mib[3] = 10151;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan scan shm+smi scan scan");  // the second: with the table
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.gpus_after[3].state, GpuState::kGhost);
  EXPECT_EQ(o.report.term_sent, 0);
}

TEST(HostCleanerTest, GhostUnderDaemonIsNamedAndItsResetBlocked) {
  FakeHost host;
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nvidia-persiste";
  daemon.exe = "/usr/bin/nvidia-persistenced";
  daemon.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  host.procs = {daemon};
  host.ghost_mib[2] = 10151;
  host.ghost_mib[4] = 512;
  host.procs[0].gpus = {0, 1, 2, 3, 5, 6, 7};  // GPU 4: nothing holds it
  Playbook reset;
  ASSERT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/reset.yaml", &reset).ok());
  Outcome o = Clean(host, reset);
  EXPECT_EQ(o.log, "scan scan shm+smi scan scan reset smi scan scan");
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.gpus_after[2].state, GpuState::kGhost);
  EXPECT_EQ(o.report.gpus_after[4].state, GpuState::kGhost);
  EXPECT_EQ(o.report.reset_blocked_by, "nvidia-persistenced (pid 50)");
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
}

TEST(HostCleanerTest, StragglerStartsASecondWave) {
  FakeHost host;
  for (int i = 0; i < 8; ++i) host.procs.push_back(Worker(200 + i, i, 150));
  host.respawns.push_back(Worker(400, 5, 150));
  Outcome o = Clean(host, DefaultPlaybook());
  // The supervisor (150) lives on after the second wave: the full settle
  // re-scan looks once more for a later restart before the host is clean.
  EXPECT_EQ(o.log, "scan term scan+shm+smi term scan+shm+smi scan shm+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.rounds, 2);
  EXPECT_EQ(o.report.term_sent, 9);
  EXPECT_EQ(o.report.respawning_parent, "150");
  EXPECT_EQ(o.report.holders.back().round, 2);
}

TEST(HostCleanerTest, DryRunChangesNothing) {
  Outcome o = Clean(Incident(), Vllm(), /*dry_run=*/true);
  EXPECT_EQ(o.log, "shm?+scan");  // one round trip
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.units_would_stop, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(o.report.shm_would_remove.size(), 2u);
  EXPECT_EQ(CountFate(o.report, HolderFate::kWouldTerm), 8);
  EXPECT_EQ(o.report.term_sent, 0);
}

TEST(HostCleanerTest, InspectPlaybookOnlyLooks) {
  Playbook inspect;
  ASSERT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/inspect.yaml", &inspect).ok());
  Outcome o = Clean(Incident(), inspect);
  EXPECT_EQ(o.log, "scan");
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(CountFate(o.report, HolderFate::kObserved), 8);
}

TEST(HostCleanerTest, LostGpuIsNamedOthersStillVerified) {
  FakeHost host;
  host.lost_gpu = 6;
  host.nvidia_smi_exit = 15;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kDirty) << o.report.error_message;
  ASSERT_EQ(o.report.gpus_after.size(), 8u);
  for (const GpuReading& gpu : o.report.gpus_after) {
    EXPECT_EQ(gpu.state, gpu.index == 6 ? GpuState::kLost : GpuState::kClean) << gpu.index;
  }
  EXPECT_NE(o.report.nvidia_smi_error.find("GPU is lost"), std::string::npos);
}

TEST(HostCleanerTest, LostGpuStopsTheLadderBeforeAnySignal) {
  FakeHost host = Incident();
  host.lost_gpu = 6;
  for (bool dry_run : {false, true}) {
    Outcome o = Clean(host, Vllm(), dry_run);
    EXPECT_EQ(o.log, dry_run ? "shm?+scan" : "scan") << dry_run;
    EXPECT_EQ(o.report.status, HostStatus::kDirty) << o.report.error_message;
    EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
    EXPECT_EQ(CountFate(o.report, HolderFate::kObserved), 8);
    EXPECT_NE(o.report.error_message.find("nothing signalled"), std::string::npos);
  }
}

TEST(HostCleanerTest, RefusedKillFailsTheHostWithoutCallingItUnkillable) {
  FakeHost host;
  host.procs.push_back(Worker(300, 0));
  host.procs.push_back(Worker(301, 1));
  host.procs[1].foreign = true;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term scan+shm+smi scan shm+smi scan");
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kCommandFailed);
  EXPECT_EQ(o.report.error_message,
            "not permitted to signal 301 (root): run with --become or as root");
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(CountFate(o.report, HolderFate::kUnkillable), 0);
}

TEST(HostCleanerTest, Failures) {
  FakeHost sudo;
  sudo.sudo_refuses = true;
  Outcome o = Clean(sudo, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kSudo);
  EXPECT_EQ(o.report.error_message, "sudo: a password is required");

  FakeHost driver;
  driver.nvidia_smi_exit = 9;
  o = Clean(driver, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kCommandFailed);
  EXPECT_NE(o.report.nvidia_smi_error.find("couldn't communicate with the NVIDIA driver"),
            std::string::npos);
}

}  // namespace
}  // namespace fleetreap
