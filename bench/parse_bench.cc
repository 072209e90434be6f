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

#include "fleetreap/escalation/gpu_state.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"

namespace fleetreap {
namespace {

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
  std::string out = "pid, gpu_uuid, gpu_bus_id, used_gpu_memory [MiB]\n";
  for (int i = 0; i < 16; ++i) {
    out += std::to_string(4000 + i) + ", GPU-11111111-0000-0000-0000-00000000000" +
           std::to_string(i % 8) + ", 00000000:" + std::to_string(18 + i % 8) + ":00.0, 35000\n";
  }
  return out;
}

std::string Nul(const std::string& text) { return text + '\0'; }

// A realistic 8-GPU host's scan: 8 TP workers each holding every GPU's
// device file, nvidiactl and nvidia-uvm (memory on their own GPU only),
// nvidia-persistenced and nv-hostengine holding all of them too.
std::string HolderScanOutput() {
  std::string out = Nul("scan 1") + Nul("session 9000 8999 8998") +
                    Nul("gpu 0:" + GpuQueryOutput()) + Nul("apps -") + Nul("table -") +
                    Nul("majors 195 nvidia 238 nvidia-uvm");
  std::string details;
  for (int pid = 4000; pid < 4010; ++pid) {
    int fd = 3;
    for (int gpu = 0; gpu < 8; ++gpu) {
      out += Nul("fd " + std::to_string(pid) + " " + std::to_string(fd++) + " 195 " +
                 std::to_string(gpu));
    }
    out += Nul("fd " + std::to_string(pid) + " " + std::to_string(fd++) + " 195 255");
    out += Nul("fd " + std::to_string(pid) + " " + std::to_string(fd++) + " 238 0");
    std::string proc = "/proc/" + std::to_string(pid);
    details += Nul(proc + "/stat:" + std::to_string(pid) +
                   " (VLLM::Worker_TP) S 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 "
                   "8192 100\n");
    details += Nul(proc + "/status:Name:\tVLLM::Worker_TP\nUid:\t1000\t1000\t1000\t1000\n");
    details += Nul(proc + "/cmdline:VLLM::Worker_TP" + std::string(200, ' '));
    details += Nul("exe " + proc + ":/usr/bin/python3.11");
  }
  return out + details + Nul("/etc/passwd:svc:x:1000:1000::/:/bin/sh\n") + Nul("selfcg:0::/") +
         Nul("owners:") + Nul("show -") + Nul("end");
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) {
  using namespace fleetreap;  // NOLINT: a benchmark's main
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 10000;
  const std::string query = GpuQueryOutput(), apps = ComputeAppsOutput(), scan = HolderScanOutput();
  size_t checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (int host = 0; host < hosts; ++host) {
    GpuQueryResult result;
    std::vector<ComputeApp> processes;
    std::vector<Holder> holders;
    ScanOutput parsed;
    if (!ParseGpuQuery(query, "", 0, GpuQueryFields(), &result).ok() ||
        !ParseComputeApps(apps, "", 0, ScanAppsFields(), &processes, nullptr).ok() ||
        !ParseScanOutput(scan, &parsed).ok() || !HoldersFromScan(parsed, &holders).ok()) {
      std::fprintf(stderr, "parse failed\n");
      return 1;
    }
    MapHolderGpusToIndexes(parsed.minors, result.gpus, &holders);
    ClassifyGpus(holders, 8, 5, &result.gpus);
    checksum += result.gpus.size() + processes.size() + holders.size();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "parse_bench: %d hosts in %.3f s, %.1f us per host (%zu bytes of output per host, "
      "checksum %zu)\n",
      hosts, seconds, seconds * 1e6 / hosts, query.size() + apps.size() + scan.size(), checksum);
  return 0;
}
