// Fixed RunReports for the report renderers' tests, and the golden-file check.
// Times are fixed so the rendered output is byte-stable. Set
// FLEETREAP_UPDATE_GOLDEN=1 to rewrite the golden files from the current
// output (then review the diff); without it the tests compare exactly.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/report/report.h"

namespace fleetreap {
namespace testing_fixture {

inline std::vector<GpuReading> Gpus(const std::vector<int64_t>& used,
                                    const std::vector<GpuState>& states = {}) {
  std::vector<GpuReading> gpus;
  for (size_t i = 0; i < used.size(); ++i) {
    GpuReading gpu;
    gpu.index = static_cast<int>(i);
    gpu.uuid = "GPU-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-dddddddddddd";
    gpu.name = "NVIDIA H200";
    gpu.bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    gpu.used_mib = used[i];
    gpu.total_mib = 143771;
    gpu.state = i < states.size() ? states[i] : (used[i] == 0 ? GpuState::kClean : GpuState::kBusy);
    gpus.push_back(gpu);
  }
  return gpus;
}

inline Holder MakeHolder(int pid, const std::string& comm, std::vector<int> gpus, HolderFate fate) {
  Holder holder;
  holder.pid = pid;
  holder.start_time = 1000 + static_cast<uint64_t>(pid);
  holder.ppid = 1;
  holder.user = "svc-infer";
  holder.state = fate == HolderFate::kUnkillable ? 'D' : 'S';
  holder.comm = comm;
  holder.exe = "/usr/bin/" + comm;
  holder.cmdline = "/usr/bin/" + comm + " --serve";
  for (int gpu : gpus) holder.devices.push_back("/dev/nvidia" + std::to_string(gpu));
  holder.devices.push_back("/dev/nvidiactl");
  holder.gpus = std::move(gpus);
  holder.fate = fate;
  return holder;
}

inline HostReport BaseHost(const std::string& name, int octet) {
  HostReport host;
  host.name = name;
  host.address = "127.0.1." + std::to_string(octet);
  host.port = 22;
  host.duration = std::chrono::milliseconds(1200 + octet);
  host.rounds = 1;
  host.timings = {{"connect", std::chrono::milliseconds(40)},
                  {"inspect", std::chrono::milliseconds(300)},
                  {"verify", std::chrono::milliseconds(200)}};
  return host;
}

inline HostReport CleanHost(const std::string& name, int octet) {
  HostReport host = BaseHost(name, octet);
  host.status = HostStatus::kClean;
  host.gpus_before = Gpus({0, 0, 0, 0, 0, 0, 0, 0});
  host.gpus_after = host.gpus_before;
  Holder daemon = MakeHolder(900, "nvidia-persiste", {}, HolderFate::kProtected);
  daemon.user = "nvidia-persistenced";
  daemon.exe = "/usr/bin/nvidia-persistenced";
  daemon.protected_by = "nvidia-persistenced";
  host.holders.push_back(daemon);
  return host;
}

inline HostReport CleanedHost(const std::string& name, int octet) {
  HostReport host = BaseHost(name, octet);
  host.status = HostStatus::kClean;
  host.gpus_before = Gpus({70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000});
  host.gpus_after = Gpus({0, 0, 0, 0, 0, 0, 0, 0});
  for (int i = 0; i < 8; ++i) {
    host.holders.push_back(MakeHolder(4000 + i, "python3", {i},
                                      i < 6 ? HolderFate::kTerminated : HolderFate::kKilled));
  }
  host.term_sent = 8;
  host.kill_sent = 2;
  host.rounds = 2;
  host.units_stopped = {"vllm.service"};
  host.shm_removed = {"/dev/shm/nccl-abc123", "/dev/shm/torch_4000_1"};
  host.timings.push_back({"stop_units", std::chrono::milliseconds(1500)});
  host.timings.push_back({"term", std::chrono::milliseconds(10000)});
  host.timings.push_back({"kill", std::chrono::milliseconds(500)});
  return host;
}

/// The mixed fleet every golden file shows: clean, cleaned, dirty (ghost
/// memory and an unkillable holder), unreachable and failed hosts.
inline RunReport MixedFleet() {
  RunReport run;
  run.tool_version = "0.1.0";
  run.run_id = "20261130T030405Z-4f1c2a";
  run.start_time = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(1796007845123));  // 2026-11-30T03:04:05.123Z
  run.duration = std::chrono::milliseconds(14321);
  run.playbook = "default";
  for (int i = 1; i <= 12; ++i) {
    char name[8];
    std::snprintf(name, sizeof(name), "gpu%02d", i);
    run.hosts.push_back(i == 5 || i == 7 ? CleanedHost(name, i) : CleanHost(name, i));
  }
  HostReport dirty = BaseHost("gpu13", 13);
  dirty.status = HostStatus::kDirty;
  dirty.gpus_before = Gpus({70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000});
  dirty.gpus_after = Gpus({0, 0, 0, 2048, 0, 0, 0, 70000},
                          {GpuState::kClean, GpuState::kClean, GpuState::kClean, GpuState::kGhost,
                           GpuState::kClean, GpuState::kClean, GpuState::kClean, GpuState::kBusy});
  for (int i = 0; i < 7; ++i) {
    dirty.holders.push_back(MakeHolder(5000 + i, "python3", {i}, HolderFate::kTerminated));
  }
  dirty.holders.push_back(MakeHolder(5007, "python3", {7}, HolderFate::kUnkillable));
  dirty.term_sent = 8;
  dirty.kill_sent = 1;
  dirty.rounds = 3;
  dirty.notes = {"audit: 9 lines not written to the host's log (no logger)"};
  run.hosts.push_back(dirty);

  HostReport unreachable = BaseHost("gpu14", 14);
  unreachable.status = HostStatus::kUnreachable;
  unreachable.error_kind = ErrorKind::kConnectTimeout;
  unreachable.error_message = "Timeout connecting to 127.0.1.14";
  unreachable.attempts = 3;
  unreachable.timings = {{"connect", std::chrono::milliseconds(10000)}};
  run.hosts.push_back(unreachable);

  HostReport failed = BaseHost("gpu15", 15);
  failed.status = HostStatus::kFailed;
  failed.error_kind = ErrorKind::kSudo;
  failed.error_message = "sudo: a password is required";
  failed.timings = {{"connect", std::chrono::milliseconds(40)}};
  run.hosts.push_back(failed);

  HostReport auth = BaseHost("gpu16", 16);
  auth.status = HostStatus::kUnreachable;
  auth.error_kind = ErrorKind::kAuth;
  auth.error_message = "Access denied for 'root' <publickey> & \"password\"";
  auth.timings = {{"connect", std::chrono::milliseconds(60)}};
  run.hosts.push_back(auth);
  return run;
}

/// Issue 11: a GPU nvidia-smi could not number is named by its bus id, with
/// the tool's words; a GPU whose driver asks for recovery names the action.
/// Two hosts with the same story share a row; their GPU lines name the host.
inline RunReport DriverSignalsFleet() {
  RunReport run = MixedFleet();
  run.hosts.resize(1);
  HostReport lost = run.hosts[0];
  lost.name = "gpu20";
  lost.status = HostStatus::kDirty;
  lost.gpus_after.resize(2);
  GpuReading gone;
  gone.bus_id = "0000:B1:00.0";
  gone.state = GpuState::kLost;
  gone.detail = "Unable to determine the device handle for GPU0000:B1:00.0: Unknown Error\x1b[2J";
  lost.gpus_after.push_back(gone);
  lost.nvidia_smi_error = "\"" + gone.detail + "\"";
  HostReport reset = run.hosts[0];
  reset.status = HostStatus::kDirty;
  reset.gpus_after[3].state = GpuState::kRecovery;
  reset.gpus_after[3].recovery_action = "Reset";
  reset.gpus_after[3].detail = "driver asks for recovery: Reset (0 MiB used)";
  reset.name = "gpu21";
  HostReport reset2 = reset;
  reset2.name = "gpu22";
  run.hosts = {lost, reset, reset2};
  return run;
}

/// A dry run: holders that would be signalled, units and /dev/shm entries
/// that would go, a ghost that no signal fixes, and an unreachable host.
inline RunReport DryRunFleet() {
  RunReport run = MixedFleet();
  run.dry_run = true;
  run.playbook = "inspect";
  run.hosts.resize(4);
  for (int i = 0; i < 2; ++i) {
    HostReport& host = run.hosts[i];
    host.status = HostStatus::kDirty;
    host.gpus_after = Gpus({70000, 70000, 0, 0, 0, 0, 0, 0});
    host.gpus_before = host.gpus_after;
    host.holders = {MakeHolder(6000, "python3", {0}, HolderFate::kWouldTerm),
                    MakeHolder(6001, "python3", {1}, HolderFate::kWouldTerm)};
    host.units_would_stop = {"vllm.service"};
    host.shm_would_remove = {"/dev/shm/nccl-xyz"};
  }
  HostReport& ghost = run.hosts[2];
  ghost.status = HostStatus::kDirty;
  ghost.gpus_after = Gpus({0, 0, 0, 0, 0, 512, 0, 0},
                          {GpuState::kClean, GpuState::kClean, GpuState::kClean, GpuState::kClean,
                           GpuState::kClean, GpuState::kGhost, GpuState::kClean, GpuState::kClean});
  ghost.gpus_before = ghost.gpus_after;
  ghost.holders.clear();
  run.hosts[3] = MixedFleet().hosts[13];  // gpu14, unreachable
  return run;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Compares "actual" with tests/testdata/golden/"name" byte for byte, or
/// rewrites the file when FLEETREAP_UPDATE_GOLDEN is set.
/// Issue 27: a fleet of 1,000 hosts as a real run leaves it, with the
/// same stories told with different numbers: 8 or 9 workers killed, after
/// TERM or KILL; ghost memory on one GPU or another; refused after 1 or 3
/// attempts, each with its own address in the message. Deterministic.
inline RunReport ThousandHostFleet() {
  RunReport run = MixedFleet();
  std::vector<HostReport> kinds = run.hosts;  // 0 clean, 4 cleaned, 12 dirty, 13, 14, 15
  run.hosts.clear();
  uint32_t seed = 27;
  auto next = [&seed](uint32_t range) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % range;
  };
  for (int i = 1; i <= 1000; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "gpu%04d", i);
    const uint32_t roll = next(100);
    HostReport host;
    if (roll < 55) {
      host = kinds[0];
    } else if (roll < 85) {
      host = kinds[4];
      const int workers = 8 + static_cast<int>(next(2));
      const int killed = static_cast<int>(next(workers + 1));
      host.holders.clear();
      for (int w = 0; w < workers; ++w) {
        host.holders.push_back(
            MakeHolder(4000 + w, "python3", {w % 8},
                       w < killed ? HolderFate::kKilled : HolderFate::kTerminated));
      }
    } else if (roll < 92) {
      host = kinds[0];
      host.status = HostStatus::kDirty;
      host.gpus_after[next(8)].state = GpuState::kGhost;
    } else if (roll < 97) {
      host = kinds[13];
      host.attempts = next(2) == 0 ? 1 : 3;
      host.error_kind = ErrorKind::kRefused;
    } else if (roll < 99) {
      host = kinds[15];
    } else {
      host = kinds[14];
    }
    host.name = name;
    host.address = "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250);
    if (host.error_kind == ErrorKind::kRefused) {
      host.error_message = std::string(name) + ": connection refused by " + host.address + ":22";
    }
    run.hosts.push_back(host);
  }
  return run;
}

inline void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = std::string(FLEETREAP_TESTDATA_DIR) + "/golden/" + name;
  const char* update = std::getenv("FLEETREAP_UPDATE_GOLDEN");
  if (update != nullptr && update[0] != '\0' && update[0] != '0') {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << path
                                 << " is missing; run with FLEETREAP_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(actual, expected) << "golden " << path
                              << " differs; FLEETREAP_UPDATE_GOLDEN=1 rewrites it";
}

}  // namespace testing_fixture
}  // namespace fleetreap
