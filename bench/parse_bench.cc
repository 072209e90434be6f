// Parses what one 8-GPU host prints in a scan (nvidia-smi --query-gpu with a
// header, --query-compute-apps with 16 processes, a holder scan with 24
// holders over 11 device files) and classifies its GPUs, as many times as a
// 10,000-host fleet needs. Prints microseconds per host; nothing asserts.
//
//   parse_bench [hosts]        (default 10000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fleetreap/gpu_state.h"
#include "fleetreap/nvidia_smi.h"
#include "fleetreap/proc_scan.h"

namespace fleetreap {
namespace {

std::string Hex(const std::string& text) {
  std::string hex;
  const char* digits = "0123456789abcdef";
  for (unsigned char c : text) {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return hex.empty() ? "-" : hex;
}

std::string GpuQueryOutput() {
  std::string out = "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\n";
  for (int i = 0; i < 8; ++i) {
    out += std::to_string(i) + ", GPU-11111111-0000-0000-0000-00000000000" + std::to_string(i) +
           ", NVIDIA H200, 00000000:" + std::to_string(18 + i) + ":00.0, " +
           std::to_string(70000 + i) + ", 143771\n";
  }
  return out;
}

std::string ComputeAppsOutput() {
  std::string out = "gpu_uuid, gpu_bus_id, pid, used_gpu_memory [MiB], process_name\n";
  for (int i = 0; i < 16; ++i) {
    out += "GPU-11111111-0000-0000-0000-00000000000" + std::to_string(i % 8) + ", 00000000:" +
           std::to_string(18 + i % 8) + ":00.0, " + std::to_string(4000 + i) +
           ", 35000, python3 -m vllm.entrypoints.openai.api_server, --tp 8\n";
  }
  return out;
}

std::string HolderScanOutput() {
  std::string out = "fleetreap-holders 1 fuser\n";
  std::vector<std::string> devices = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
  for (int i = 0; i < 8; ++i) devices.push_back("/dev/nvidia" + std::to_string(i));
  for (const std::string& device : devices) out += "dev " + Hex(device) + "\n";
  for (int pid = 4000; pid < 4024; ++pid) {
    out += "hold " + std::to_string(pid) + " " + Hex("/dev/nvidiactl") + "\n";
    out += "hold " + std::to_string(pid) + " " + Hex("/dev/nvidia" + std::to_string(pid % 8)) + "\n";
  }
  for (int pid = 4000; pid < 4024; ++pid) {
    std::string stat = std::to_string(pid) + " (VLLM::Worker_TP) S 1 1 1 0 -1 4194560 100 0 0 0 "
                       "5 3 0 0 20 0 1 0 987654 8192 100\n";
    out += "proc " + std::to_string(pid) + " " + Hex(stat) + " 1000 " + Hex("svc") + " " +
           Hex("/usr/bin/python3.11") + " " +
           Hex(std::string("python3\0-m\0vllm.entrypoints.openai.api_server\0", 48)) + "\n";
  }
  return out + "end\n";
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) {
  using namespace fleetreap;  // NOLINT: a benchmark's main
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 10000;
  const std::string query = GpuQueryOutput(), apps = ComputeAppsOutput(),
                    scan = HolderScanOutput();
  size_t checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (int host = 0; host < hosts; ++host) {
    GpuQueryResult result;
    std::vector<ComputeApp> processes;
    std::vector<Holder> holders;
    HolderScanInfo info;
    if (!ParseGpuQuery(query, "", 0, GpuQueryFields(), &result).ok() ||
        !ParseComputeApps(apps, "", 0, ComputeAppsFields(), &processes, nullptr).ok() ||
        !ParseHolderScan(scan, &holders, &info).ok()) {
      std::fprintf(stderr, "parse failed\n");
      return 1;
    }
    MapHolderGpusToIndexes(info.minors, result.gpus, &holders);
    ClassifyGpus(holders, 8, 5, &result.gpus);
    checksum += result.gpus.size() + processes.size() + holders.size();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("parse_bench: %d hosts in %.3f s, %.1f us per host (%zu bytes of output per host, "
              "checksum %zu)\n",
              hosts, seconds, seconds * 1e6 / hosts, query.size() + apps.size() + scan.size(),
              checksum);
  return 0;
}
