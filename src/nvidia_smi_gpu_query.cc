// ParseGpuQuery: nvidia-smi --query-gpu output to GpuReadings.
#include <algorithm>

#include "fleetreap/nvidia_smi.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {
namespace {

using nvsmi::Query;

// Adds one kLost reading per lost GPU, or marks the row with its bus id.
void AddLost(const std::vector<LostGpu>& lost, std::vector<GpuReading>* gpus) {
  for (const LostGpu& gpu : lost) {
    std::string bus_id = NormalizeBusId(gpu.bus_id);
    auto row = std::find_if(gpus->begin(), gpus->end(), [&](const GpuReading& r) {
      return !r.bus_id.empty() && NormalizeBusId(r.bus_id) == bus_id;
    });
    if (row == gpus->end()) {
      gpus->emplace_back();
      row = gpus->end() - 1;
      row->bus_id = bus_id;
    }
    row->state = GpuState::kLost;
    row->used_mib.reset();
    row->detail = gpu.message;
  }
}

std::string Text(const nvsmi::Row& row, int column) {
  if (column < 0) return "";
  const std::string& value = row.values[static_cast<size_t>(column)];
  return nvsmi::IsUnknownValue(value) ? "" : value;
}

// Reads one row into "gpu"; "seen" holds the readings before it.
Status ReadRow(const nvsmi::Row& row, const std::vector<std::string>& fields,
               const std::vector<GpuReading>& seen, GpuReading* gpu) {
  auto column = [&](const char* name) { return nvsmi::FieldIndex(Query::kGpu, fields, name); };
  const int index = column("index");
  const int used = column("memory.used");
  const int total = column("memory.total");
  if (index >= 0) {
    std::optional<int> value;
    const std::string& text = row.values[static_cast<size_t>(index)];
    Status parsed = nvsmi::ParseCount(row, "index", text, &value);
    if (!parsed.ok()) return parsed;
    if (!value) return nvsmi::LineError(row.line, "index: expected an integer, got \"" + text + "\"");
    gpu->index = *value;
    for (const GpuReading& other : seen) {
      if (other.index == gpu->index) {
        return nvsmi::LineError(row.line, "duplicate GPU index " + std::to_string(gpu->index));
      }
    }
  }
  gpu->uuid = Text(row, column("uuid"));
  gpu->name = Text(row, column("name"));
  gpu->bus_id = Text(row, column("pci.bus_id"));
  if (index < 0 && !gpu->uuid.empty()) {
    for (const GpuReading& other : seen) {
      if (other.uuid == gpu->uuid) {
        return nvsmi::LineError(row.line, "duplicate GPU uuid " + gpu->uuid);
      }
    }
  }
  if (used >= 0) {
    const std::string& text = row.values[static_cast<size_t>(used)];
    Status parsed = nvsmi::ParseMib(row, "memory.used", text, &gpu->used_mib);
    if (!parsed.ok()) return parsed;
    if (!gpu->used_mib) gpu->detail = "memory.used is " + (text.empty() ? "empty" : text);
  } else {
    gpu->detail = "memory.used was not queried";
  }
  if (total >= 0) {
    Status parsed = nvsmi::ParseMib(row, "memory.total",
                                    row.values[static_cast<size_t>(total)], &gpu->total_mib);
    if (!parsed.ok()) return parsed;
  }
  return Status::Ok();
}

}  // namespace

Status ParseGpuQuery(const std::string& out, const std::string& err,
                     int exit_code, const std::vector<std::string>& fields,
                     GpuQueryResult* result) {
  *result = GpuQueryResult();
  std::vector<LostGpu> lost;
  Status run = nvsmi::CheckRun(out, err, exit_code, &result->failure,
                               &result->tool_message, &lost);
  if (!run.ok()) {
    AddLost(lost, &result->gpus);
    return run;
  }
  nvsmi::Table table;
  Status read = nvsmi::ReadTable(out, Query::kGpu, fields, &table);
  if (!read.ok()) return read;
  if (table.rows.empty() && lost.empty()) {
    return Status::Error(ErrorKind::kParse, "nvidia-smi output: no GPU rows");
  }
  std::vector<GpuReading> gpus;
  for (const nvsmi::Row& row : table.rows) {
    GpuReading gpu;
    Status parsed = ReadRow(row, fields, gpus, &gpu);
    if (!parsed.ok()) return parsed;
    gpus.push_back(std::move(gpu));
  }
  AddLost(lost, &gpus);
  std::stable_sort(gpus.begin(), gpus.end(), [](const GpuReading& a, const GpuReading& b) {
    return static_cast<unsigned>(a.index) < static_cast<unsigned>(b.index);
  });
  result->gpus = std::move(gpus);
  return Status::Ok();
}

}  // namespace fleetreap
