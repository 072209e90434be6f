// ParseComputeApps: nvidia-smi --query-compute-apps output to ComputeApps.
#include "fleetreap/remote/nvidia_smi.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {

Status ParseComputeApps(const std::string& out, const std::string& err, int exit_code,
                        const std::vector<std::string>& fields, std::vector<ComputeApp>* apps,
                        NvidiaSmiFailure* failure) {
  using nvsmi::Query;
  apps->clear();
  NvidiaSmiFailure classified = NvidiaSmiFailure::kNone;
  std::string message;
  std::vector<LostGpu> lost;
  Status run = nvsmi::CheckRun(out, err, exit_code, &classified, &message, &lost);
  if (failure != nullptr) *failure = classified;
  if (!run.ok()) return run;
  if (classified == NvidiaSmiFailure::kGpuLost) {
    // The process list of a lost GPU is unknowable: a partial list is no list.
    return nvsmi::FailedRun(classified, message);
  }
  nvsmi::Table table;
  Status read = nvsmi::ReadTable(out, Query::kComputeApps, fields, &table);
  if (!read.ok()) return read;
  auto column = [&](const char* name) {
    return nvsmi::FieldIndex(Query::kComputeApps, fields, name);
  };
  const int pid = column("pid");
  const int name = column("process_name");
  const int uuid = column("gpu_uuid");
  const int bus_id = column("gpu_bus_id");
  const int used = column("used_gpu_memory");
  auto text = [](const nvsmi::Row& row, int at) {
    return at < 0 ? std::string() : row.values[static_cast<size_t>(at)];
  };
  std::vector<ComputeApp> parsed;
  for (const nvsmi::Row& row : table.rows) {
    ComputeApp app;
    Status status = nvsmi::ParseCount(row, "pid", text(row, pid), &app.pid);
    if (status.ok() && used >= 0) {
      status = nvsmi::ParseMib(row, "used_gpu_memory", text(row, used), &app.used_mib);
    }
    if (!status.ok()) return status;
    app.process_name = text(row, name);
    app.gpu_uuid = nvsmi::IsUnknownValue(text(row, uuid)) ? "" : text(row, uuid);
    app.gpu_bus_id = nvsmi::IsUnknownValue(text(row, bus_id)) ? "" : text(row, bus_id);
    parsed.push_back(std::move(app));
  }
  *apps = std::move(parsed);
  return Status::Ok();
}

}  // namespace fleetreap
