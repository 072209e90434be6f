// FakeTransport: a host as the cleaner tests play it (processes, GPUs,
// units, /dev/shm), answering the remote scripts of remote_script.h with the
// records their parsers read, and logging each round trip by what it did
// ("scan", "term", "shm+smi"). Dispatches on the scripts' text. Not
// thread-safe; one per test.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/base/shell.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/transport/transport.h"
#include "support/fake_clock.h"

namespace fleetreap {
namespace fake_host {

using std::chrono::milliseconds;

// kHidesFromSignal: the signal script reports it gone without signalling it
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

class FakeTransport : public Transport {
 public:
  FakeTransport(FakeHost host, FakeClock* clock) : host_(std::move(host)), clock_(clock) {}
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  void Close() override {}
  std::string Describe() const override { return "fake"; }

  // As a host would answer: the start record first (CheckStartRecord), then
  // the script's records; a sudo refusal prints nothing.
  CommandResult Run(const std::string& command, milliseconds) override {
    CommandResult r = Answer(command);
    if (!host_.sudo_refuses) r.out = StartRecordBytes() + r.out;
    return r;
  }

  CommandResult Answer(const std::string& command) {
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
      if (!p.alive || (p.gpus.empty() && !p.ctl_only)) continue;
      int fd = 3;
      if (p.ctl_only)
        out += Nul("fd " + std::to_string(p.pid) + " " + std::to_string(fd++) + " 195 255");
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
      if (p == nullptr || p->behavior == Behavior::kHidesFromSignal) {
        out += Nul("gone " + std::to_string(pid));
        continue;
      }
      if (p->foreign) {
        out += Nul("failed " + std::to_string(pid));
        continue;
      }
      out += Nul("sent " + std::to_string(pid));
      bool dies =
          kill ? p->behavior != Behavior::kUnkillable : p->behavior == Behavior::kExitsOnTerm;
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

}  // namespace fake_host
}  // namespace fleetreap
