// Scan reading: turns a scan's parsed records (ScanOutput, from
// ParseScanOutput) into a model/host_reply.h HostSnapshot in one pass: the
// units' properties, the holders the fd pass found, the processes nvidia-smi
// charges, the GPU query (nvidia-smi's output is parsed here, once, rows
// beside a lost GPU included) and the respawn watch. It reads; the
// escalation (host_fold.h) folds and decides. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"

namespace fleetreap {

/// Reads "scan", asked with the playbook's "units" (ScanRequest::units),
/// into "snapshot": the active ones among them from the scan's systemctl
/// show (ActiveUnitsShown). When the holder part ran but the shell does
/// not see the host's PID namespace, only the session, pid files and
/// namespace are read (sees_host_pid_namespace false). Returns kParse for a
/// process's stat or a compute-apps answer it cannot read ("compute apps:
/// ..."); a GPU query that failed or cannot be read is not an error here but
/// snapshot->gpu_query.status.
[[nodiscard]] Status ReadScan(const ScanOutput& scan, const std::vector<std::string>& units,
                              HostSnapshot* snapshot);

/// Reads PerGpuQueryScript's stdout, appending to "gpus" the readings of each
/// GPU that answered (lost ones left out). kParse for output that breaks the
/// script's grammar.
[[nodiscard]] Status ReadPerGpuQuery(const std::string& out, std::vector<GpuReading>* gpus);

}  // namespace fleetreap
