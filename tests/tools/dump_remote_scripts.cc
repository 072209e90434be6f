// Writes every remote script fleetreap runs on a host (the step headers of
// remote/), built from representative inputs, to one file each in the folder
// given as the only argument: one per script, and the batches
// (remote/batch.h) the host cleaner sends in one round trip (the shared
// library once, then each step's own part). scripts/lint.sh runs shellcheck
// -s sh over them, since the hosts run them under /bin/sh. Each file starts
// with a comment naming its inputs, and, for a combination, the shellcheck
// codes its joining makes meaningless.
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fleetreap/base/shell.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"

namespace {

using fleetreap::HostPaths;
using fleetreap::ScanRequest;
using fleetreap::Target;
using std::chrono::milliseconds;

// A round trip defines the shared library once, but each step that writes
// audit lines defines its own al and aud (its run's fields), and the stops
// their own z: with the stops before the signal, shellcheck calls the first
// definitions unreachable (SC2317) or used before they are defined (SC2218).
constexpr char kJoined[] =
    "# shellcheck disable=SC2317,SC2218  # steps joined: each defines its own audit functions\n";

bool Write(const std::string& dir, const std::string& name, const std::string& inputs,
           const std::string& script, const std::string& header = "") {
  const std::string path = dir + "/" + name + ".sh";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "# " << name << ": " << inputs << "\n" << header << script;
  out.close();
  if (!out) {
    std::cerr << "dump_remote_scripts: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dump_remote_scripts DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  const HostPaths paths;
  HostPaths stand_in;
  stand_in.dev_dir = "/tmp/host dir/dev";
  stand_in.driver_dir = "/tmp/host dir/gpus";
  stand_in.shm_dir = "/tmp/host dir/shm";

  ScanRequest full;
  full.units = {"gpu-worker.service", "train@*.service", "it's odd.service"};
  full.watch = {1234, 5678};
  full.table = true;
  ScanRequest plain;
  ScanRequest quick;
  quick.holders = false;

  const std::vector<Target> targets = {{4242, 987654, true}, {4343, 123456, false}};
  const std::vector<std::string> units = {"gpu-worker.service", "it's odd.service"};
  const std::vector<std::string> shm = {"torch_*", "nccl-*", "psm2'x"};

  bool ok = true;
  ok &= Write(dir, "scan_full", "units, watched parents, the plain table",
              fleetreap::ScanScript(full));
  ok &= Write(dir, "scan_plain", "no units", fleetreap::ScanScript(plain, stand_in));
  ok &= Write(dir, "scan_quick", "the GPU query only", fleetreap::ScanScript(quick));
  ok &= Write(dir, "per_gpu_query", "GPUs 0 and 3",
              fleetreap::PerGpuQueryScript({0, 3}, milliseconds(5000)));
  ok &=
      Write(dir, "stop_units", "two units", fleetreap::StopUnitsScript(units, milliseconds(30000)));
  const fleetreap::StopUnitsRequest stops{units, milliseconds(30000)};
  const fleetreap::SignalRequest term{
      "TERM", targets, milliseconds(10000), milliseconds(150), {1, 777}};
  ok &= Write(dir, "stop_then_signal", "units stopped, then TERM, in one round trip",
              fleetreap::BatchScript({stops, term}, paths), kJoined);
  ok &= Write(
      dir, "signal_kill", "KILL, no parents",
      fleetreap::SignalScript("KILL", targets, milliseconds(5000), milliseconds(5), stand_in));
  ok &= Write(dir, "signal_none", "no targets",
              fleetreap::SignalScript("TERM", {}, milliseconds(1000), milliseconds(100)));
  fleetreap::ShmRequest listing;
  listing.patterns = shm;
  listing.dry_run = true;
  ok &= Write(dir, "shm_dry_then_scan", "the dry-run /dev/shm pass and the scan",
              fleetreap::BatchScript({listing, full}));
  ok &= Write(dir, "shm_clean", "removes, then end",
              fleetreap::ShmCleanScript(shm, /*dry_run=*/false, stand_in));
  ok &= Write(dir, "shm_no_patterns", "no patterns",
              fleetreap::ShmCleanScript({}, /*dry_run=*/false));
  fleetreap::ShmRequest clean;
  clean.patterns = shm;
  ok &= Write(dir, "rescan_shm_verify", "the fused verify: scan, /dev/shm, quick scan",
              fleetreap::BatchScript({plain, clean, quick}));
  ok &= Write(dir, "quick_rescan_then_shm", "the quick re-scan, then the /dev/shm clean",
              fleetreap::BatchScript({quick, clean}));
  ok &= Write(dir, "shm_then_verify", "the /dev/shm clean, then the quick verify",
              fleetreap::BatchScript({clean, quick}));
  ok &= Write(dir, "stop_signal_rescan_shm",
              "units stopped, TERM, then the quick re-scan and the clean when it left nothing",
              fleetreap::BatchScript({stops, term, quick, clean}, paths), kJoined);
  ScanRequest scoped;
  scoped.shm_files = true;
  ok &= Write(dir, "scan_scoped", "a scoped run's scan: the holders' /dev/shm files too",
              fleetreap::ScanScript(scoped, stand_in));
  fleetreap::ShmSelection selection;
  selection.all = false;
  selection.only = {{4242, 1001}, {18446744073709551615u, 0}};
  ok &= Write(dir, "shm_clean_scoped", "under a scope: the selected inodes only",
              fleetreap::ShmCleanScript(shm, /*dry_run=*/false, stand_in, fleetreap::AuditRequest(),
                                        selection));
  ok &= Write(dir, "gpu_reset", "GPUs 0 and 1",
              fleetreap::GpuResetScript({0, 1}, milliseconds(30000)));
  fleetreap::AuditRequest audit;
  audit.run_id = "20261202T061902Z-4f1c2a";
  audit.controller = "ctl 1";
  audit.operator_name = "it's me";
  audit.targets[4242] = {{"pid", "4242"}, {"exe", "/usr/bin/python3"}};
  ok &= Write(dir, "stop_units_audited", "two units, audit lines",
              fleetreap::StopUnitsScript(units, milliseconds(30000), audit));
  ok &= Write(dir, "signal_audited", "TERM, audit lines, the scan's clock",
              fleetreap::SignalScript("TERM", targets, milliseconds(5000), milliseconds(50),
                                      stand_in, {1}, audit, 99812));
  ok &= Write(dir, "shm_clean_audited", "removes, audit lines",
              fleetreap::ShmCleanScript(shm, /*dry_run=*/false, stand_in, audit));
  ok &=
      Write(dir, "gpu_reset_audited", "GPUs 0 and 1 with a daemon unit around them, audit lines",
            fleetreap::GpuResetScript({0, 1}, milliseconds(30000), {"nvidia-persistenced.service"},
                                      milliseconds(30000), audit));
  ok &= Write(dir, "bounded_become", "BoundedCommand around a scan, with sudo",
              fleetreap::BoundedCommand(fleetreap::ScanScript(quick), milliseconds(60000),
                                        /*become=*/true));
  return ok ? 0 : 1;
}
