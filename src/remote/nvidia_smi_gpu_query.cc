// ParseGpuQuery: nvidia-smi --query-gpu output to GpuReadings.
#include <algorithm>
#include <map>
#include <set>

#include "fleetreap/remote/nvidia_smi.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {
namespace {

using nvsmi::Query;

// Adds one kLost reading per lost GPU, or marks the row with its bus id.
void AddLost(const std::vector<LostGpu>& lost, std::vector<GpuReading>* gpus) {
  std::map<std::string, size_t> by_bus_id;
  for (size_t i = 0; i < gpus->size(); ++i) {
    if (!(*gpus)[i].bus_id.empty()) by_bus_id.emplace(NormalizeBusId((*gpus)[i].bus_id), i);
  }
  for (const LostGpu& gpu : lost) {
    std::string bus_id = NormalizeBusId(gpu.bus_id);
    auto row = by_bus_id.find(bus_id);
    size_t at = row != by_bus_id.end() ? row->second : gpus->size();
    if (at == gpus->size()) {
      gpus->emplace_back();
      gpus->back().bus_id = gpu.bus_id;  // as the tool printed it
    }
    GpuReading& reading = (*gpus)[at];
    reading.state = GpuState::kLost;
    reading.used_mib.reset();
    reading.detail = EscapeToolLine(gpu.message);
  }
}

std::string Text(const nvsmi::Row& row, int column) {
  if (column < 0) return "";
  const std::string& value = row.values[static_cast<size_t>(column)];
  return nvsmi::IsUnknownValue(value) ? "" : value;
}

// The identities already read, to refuse a second row for the same GPU.
struct Seen {
  std::set<int> indexes;
  std::set<std::string> uuids;
};

Status ReadRow(const nvsmi::Row& row, const std::vector<std::string>& fields, Seen* seen,
               GpuReading* gpu) {
  auto column = [&](const char* name) { return nvsmi::FieldIndex(Query::kGpu, fields, name); };
  const int index = column("index");
  const int used = column("memory.used");
  const int total = column("memory.total");
  if (index >= 0) {
    std::optional<int> value;
    const std::string& text = row.values[static_cast<size_t>(index)];
    Status parsed = nvsmi::ParseCount(row, "index", text, &value);
    if (!parsed.ok()) return parsed;
    if (!value)
      return nvsmi::LineError(row.line, "index: expected an integer, got \"" + text + "\"");
    gpu->index = *value;
    if (!seen->indexes.insert(gpu->index).second) {
      return nvsmi::LineError(row.line, "duplicate GPU index " + std::to_string(gpu->index));
    }
  }
  gpu->uuid = Text(row, column("uuid"));
  gpu->name = Text(row, column("name"));
  gpu->bus_id = Text(row, column("pci.bus_id"));
  gpu->recovery_action = EscapeToolLine(Text(row, column("gpu_recovery_action")));
  if (index < 0 && !gpu->uuid.empty() && !seen->uuids.insert(gpu->uuid).second) {
    return nvsmi::LineError(row.line, "duplicate GPU uuid " + gpu->uuid);
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
    Status parsed = nvsmi::ParseMib(row, "memory.total", row.values[static_cast<size_t>(total)],
                                    &gpu->total_mib);
    if (!parsed.ok()) return parsed;
  }
  return Status::Ok();
}

Status ReadRows(const std::string& out, const std::vector<std::string>& fields,
                std::vector<GpuReading>* gpus) {
  nvsmi::Table table;
  Status read = nvsmi::ReadTable(out, Query::kGpu, fields, &table);
  if (!read.ok()) return read;
  Seen seen;
  for (const nvsmi::Row& row : table.rows) {
    GpuReading gpu;
    Status parsed = ReadRow(row, fields, &seen, &gpu);
    if (!parsed.ok()) return parsed;
    gpus->push_back(std::move(gpu));
  }
  return Status::Ok();
}

}  // namespace

Status ParseGpuQuery(const std::string& out, const std::string& err, int exit_code,
                     const std::vector<std::string>& fields, GpuQueryResult* result) {
  *result = GpuQueryResult();
  std::vector<LostGpu> lost;
  Status run = nvsmi::CheckRun(out, err, exit_code, &result->failure, &result->tool_message, &lost);
  if (!run.ok()) {
    AddLost(lost, &result->gpus);
    return run;
  }
  std::vector<GpuReading> gpus;
  Status read = ReadRows(out, fields, &gpus);
  if (!lost.empty() && (!read.ok() || gpus.empty())) {
    // Lost GPUs and nothing else readable: the run failed as a whole.
    AddLost(lost, &result->gpus);
    return nvsmi::FailedRun(result->failure, result->tool_message);
  }
  if (!read.ok()) return read;
  if (gpus.empty()) return Status::Error(ErrorKind::kParse, "nvidia-smi output: no GPU rows");
  AddLost(lost, &gpus);
  std::stable_sort(gpus.begin(), gpus.end(), [](const GpuReading& a, const GpuReading& b) {
    return static_cast<unsigned>(a.index) < static_cast<unsigned>(b.index);
  });
  result->gpus = std::move(gpus);
  return Status::Ok();
}

}  // namespace fleetreap
