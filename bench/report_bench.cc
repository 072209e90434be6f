// Times the report renderers on a large mixed fleet, to show that reporting
// stays negligible next to the run itself. Usage: report_bench [hosts]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>

#include "fleetreap/report/report.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "fleetreap/report/report_table.h"

namespace {

fleetreap::HostReport MakeHost(int i) {
  using fleetreap::HostStatus;
  fleetreap::HostReport host;
  char name[16];
  std::snprintf(name, sizeof(name), "gpu%05d", i);
  host.name = name;
  host.address = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250);
  host.status = i % 97 == 0   ? HostStatus::kUnreachable
                : i % 89 == 0 ? HostStatus::kDirty
                              : HostStatus::kClean;
  if (host.status == HostStatus::kUnreachable) {
    host.error_kind = fleetreap::ErrorKind::kConnectTimeout;
    host.error_message = "Timeout connecting to " + host.address;
    return host;
  }
  for (int g = 0; g < 8; ++g) {
    fleetreap::GpuReading gpu;
    gpu.index = g;
    gpu.uuid = "GPU-" + std::to_string(i) + "-" + std::to_string(g);
    gpu.used_mib = 0;
    gpu.total_mib = 143771;
    gpu.state = fleetreap::GpuState::kClean;
    host.gpus_before.push_back(gpu);
    host.gpus_after.push_back(gpu);
  }
  if (i % 7 == 0) {
    for (int g = 0; g < 8; ++g) {
      fleetreap::Holder holder;
      holder.pid = 1000 + g;
      holder.comm = "python3";
      holder.gpus = {g};
      holder.fate = g < 6 ? fleetreap::HolderFate::kTerminated : fleetreap::HolderFate::kKilled;
      host.holders.push_back(holder);
    }
  }
  return host;
}

void Time(const char* name, const std::function<std::string()>& render) {
  // CPU time too: on a shared, loaded machine wall time mostly measures the
  // neighbours.
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  std::string out = render();
  double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  auto took = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  std::printf("%-10s wall %8.1f ms  cpu %8.1f ms  %9zu bytes\n", name, took.count() / 1000.0,
              cpu_ms, out.size());
}

}  // namespace

int main(int argc, char** argv) {
  int hosts = argc > 1 ? std::atoi(argv[1]) : 10000;
  fleetreap::RunReport run;
  run.tool_version = "bench";
  run.playbook = "default";
  for (int i = 1; i <= hosts; ++i) run.hosts.push_back(MakeHost(i));
  std::printf("%d hosts\n", hosts);
  Time("table", [&] { return fleetreap::RenderTable(run, fleetreap::TableStyle{}); });
  Time("json", [&] { return fleetreap::RenderJson(run); });
  Time("junit", [&] { return fleetreap::RenderJunit(run); });
  Time("markdown", [&] { return fleetreap::RenderMarkdown(run); });
  return 0;
}
