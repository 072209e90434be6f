// Loads a generated 10,000-host inventory (8,000 hosts from ranges, 2,000
// written out one by one with their own address, 50 groups three levels
// deep) and resolves --limit patterns over it. Prints milliseconds per
// repetition; the target is under 200 ms for a load and a --limit together.
//
//   inventory_bench [repetitions]        (default 10)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/inventory/inventory.h"

namespace fleetreap {
namespace {

std::string Pad(int n, int width) {
  std::string s = std::to_string(n);
  return std::string(width - std::min<int>(width, s.size()), '0') + s;
}

// 5 regions > 8 racks each > 200 hosts per rack as one range: 8,000 hosts.
// 5 model groups: each takes ranges from the racks and 400 explicit hosts.
std::string GenerateInventory() {
  std::string y = "all:\n  vars:\n    ansible_user: fleet\n    fleetreap_expected_gpus: 8\n";
  y += "  children:\n";
  for (int region = 1; region <= 5; ++region) {
    y += "    region" + std::to_string(region) + ":\n";
    y += "      vars:\n        ansible_ssh_private_key_file: keys/region" + std::to_string(region) +
         "\n";
    y += "      children:\n";
    for (int r = 1; r <= 8; ++r) {
      std::string rack = "r" + Pad((region - 1) * 8 + r, 2);
      y += "        " + rack + ":\n          hosts:\n";
      y += "            " + rack + "-gpu[001:200]:\n";
    }
  }
  int explicit_host = 0;
  for (int model = 1; model <= 5; ++model) {
    y += "    model" + std::to_string(model) + ":\n";
    y += "      vars:\n        fleetreap_threshold_mib: " + std::to_string(model * 8) + "\n";
    y += "      hosts:\n";
    for (int r = model; r <= 40; r += 5) {
      y += "        r" + Pad(r, 2) + "-gpu[001:100]:\n";
    }
    for (int i = 0; i < 400; ++i) {
      ++explicit_host;
      y += "        edge" + Pad(explicit_host, 4) + ":\n";
      y += "          ansible_host: 10." + std::to_string(explicit_host / 250) + "." +
           std::to_string(explicit_host % 250) + ".1\n";
      if (i % 10 == 0) y += "          ansible_port: 2222\n";
    }
  }
  return y;
}

double CpuMillis() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Wall-clock milliseconds of "work"; adds its CPU milliseconds to "*cpu", which
// tells apart a slow loader from a busy machine.
double Millis(const std::function<void()>& work, double* cpu = nullptr) {
  double cpu_start = CpuMillis();
  auto start = std::chrono::steady_clock::now();
  work();
  double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (cpu) *cpu += CpuMillis() - cpu_start;
  return wall;
}

void Print(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s min %7.2f  median %7.2f  max %7.2f ms\n", what, ms.front(), ms[ms.size() / 2],
              ms.back());
}

int Main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  const std::string path = "/tmp/fleetreap_inventory_bench.yaml";
  std::ofstream(path) << GenerateInventory();

  Inventory inventory;
  std::vector<double> load, load_cpu(reps, 0);
  for (int i = 0; i < reps; ++i) {
    load.push_back(Millis(
        [&] {
          inventory = Inventory();
          std::vector<std::string> warnings;
          Status s = LoadInventory(path, &inventory, &warnings);
          if (!s.ok()) {
            std::fprintf(stderr, "%s\n", s.message().c_str());
            std::exit(1);
          }
        },
        &load_cpu[i]));
  }
  std::printf("inventory: %zu hosts, %zu groups, %d repetitions\n", inventory.hosts().size(),
              inventory.group_names().size(), reps);
  Print("LoadInventory", load);
  Print("LoadInventory, CPU time", load_cpu);

  const char* limits[] = {
      "",
      "region2:&model3:!r10-gpu[001:050]",
      "r*-gpu0??:!region5",
      "edge[0001-2000]",
      "~r1[0-9]-gpu1",
      "model1,model2,edge0007,!r01-gpu001",
  };
  std::vector<double> worst_select(reps, 0), worst_select_cpu(reps, 0);
  for (const char* limit : limits) {
    std::vector<double> ms;
    size_t selected = 0;
    for (int i = 0; i < reps; ++i) {
      std::vector<Host> hosts;
      double cpu = 0;
      ms.push_back(Millis(
          [&] {
            Status s = SelectHosts(inventory, limit, &hosts);
            if (!s.ok()) {
              std::fprintf(stderr, "%s\n", s.message().c_str());
              std::exit(1);
            }
          },
          &cpu));
      selected = hosts.size();
      worst_select[i] = std::max(worst_select[i], ms.back());
      worst_select_cpu[i] = std::max(worst_select_cpu[i], cpu);
    }
    std::string label = std::string("--limit '") + limit + "' (" + std::to_string(selected) + ")";
    Print(label.c_str(), ms);
  }
  std::vector<double> total, total_cpu;
  for (int i = 0; i < reps; ++i) {
    total.push_back(load[i] + worst_select[i]);
    total_cpu.push_back(load_cpu[i] + worst_select_cpu[i]);
  }
  Print("load + slowest --limit (target < 200 ms)", total);
  Print("load + slowest --limit, CPU time", total_cpu);
  if (!std::getenv("KEEP")) std::remove(path.c_str());
  return 0;
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) { return fleetreap::Main(argc, argv); }
