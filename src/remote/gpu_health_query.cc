// ParseGpuHealth: the readiness fields of --query-gpu into GpuHealth.
#include "fleetreap/remote/gpu_health_query.h"

#include <set>

#include "fleetreap/remote/nvidia_smi.h"
#include "nvidia_smi_csv.h"

namespace fleetreap {
namespace {

using nvsmi::Query;
using nvsmi::Row;

// The longest fabric status kept; the driver's longest is an NVML error name.
constexpr size_t kMaxFabricText = 64;

class RowReader {
 public:
  RowReader(const Row& row, const std::vector<std::string>& fields) : row_(row), fields_(fields) {}

  // The value of "field", or nullptr when it was not asked for or is unknown.
  const std::string* Value(const char* field) const {
    int at = nvsmi::FieldIndex(Query::kGpu, fields_, field);
    if (at < 0) return nullptr;
    const std::string& value = row_.values[static_cast<size_t>(at)];
    return nvsmi::IsUnknownValue(value) ? nullptr : &value;
  }

  // "yes"/"no" words of the field's kind ("Yes"/"No", "Enabled"/"Disabled").
  Status Flag(const char* field, const char* yes, const char* no, std::optional<bool>* out) const {
    const std::string* value = Value(field);
    if (!value) return Status::Ok();
    if (*value == yes) {
      *out = true;
    } else if (*value == no) {
      *out = false;
    } else {
      return Wrong(field, std::string("expected ") + yes + " or " + no, *value);
    }
    return Status::Ok();
  }

  Status Count(const char* field, std::optional<int64_t>* out) const {
    const std::string* value = Value(field);
    if (!value) return Status::Ok();
    int64_t number = 0;
    if (!ParseDigits(*value, 18, &number)) return Wrong(field, "expected a count", *value);
    *out = number;
    return Status::Ok();
  }

  Status Small(const char* field, std::optional<int>* out) const {
    std::optional<int64_t> wide;
    Status read = Count(field, &wide);
    if (!read.ok()) return read;
    if (wide && *wide > 1024) return Wrong(field, "expected a small number", *Value(field));
    if (wide) *out = static_cast<int>(*wide);
    return Status::Ok();
  }

  Status Wrong(const char* field, const std::string& want, const std::string& got) const {
    return nvsmi::LineError(row_.line, std::string(field) + ": " + want + ", got " +
                                           QuoteToolLine(got.substr(0, kMaxFabricText)));
  }

 private:
  const Row& row_;
  const std::vector<std::string>& fields_;
};

Status ReadFabricState(const RowReader& reader, std::string* state) {
  const std::string* value = reader.Value("fabric.state");
  if (!value) return Status::Ok();
  static const std::set<std::string> kStates = {"Completed", "In Progress", "Not Started",
                                                "Not Supported"};
  if (!kStates.count(*value)) {
    return reader.Wrong("fabric.state", "expected Completed, In Progress or Not Started", *value);
  }
  if (*value != "Not Supported") *state = *value;
  return Status::Ok();
}

Status ReadRow(const Row& row, const std::vector<std::string>& fields, GpuHealth* gpu) {
  RowReader reader(row, fields);
  if (const std::string* index = reader.Value("index")) {
    int number = 0;
    if (!ParseDigits(*index, 4, &number)) {
      return reader.Wrong("index", "expected a GPU index", *index);
    }
    gpu->index = number;
  }
  if (const std::string* bus = reader.Value("pci.bus_id")) gpu->bus_id = EscapeToolLine(*bus);
  Status checks[] = {
      reader.Flag("ecc.mode.current", "Enabled", "Disabled", &gpu->ecc_enabled),
      reader.Flag("ecc.mode.pending", "Enabled", "Disabled", &gpu->ecc_pending_enabled),
      reader.Count("ecc.errors.uncorrected.volatile.total", &gpu->ecc_uncorrected_volatile),
      reader.Count("ecc.errors.uncorrected.aggregate.total", &gpu->ecc_uncorrected_aggregate),
      reader.Count("remapped_rows.correctable", &gpu->remapped_rows_correctable),
      reader.Count("remapped_rows.uncorrectable", &gpu->remapped_rows_uncorrectable),
      reader.Flag("remapped_rows.pending", "Yes", "No", &gpu->remapped_rows_pending),
      reader.Flag("remapped_rows.failure", "Yes", "No", &gpu->remapped_rows_failure),
      reader.Flag("retired_pages.pending", "Yes", "No", &gpu->retired_pages_pending),
      reader.Count("retired_pages.single_bit_ecc.count", &gpu->retired_pages_sbe),
      reader.Count("retired_pages.double_bit.count", &gpu->retired_pages_dbe),
      ReadFabricState(reader, &gpu->fabric_state),
      reader.Flag("persistence_mode", "Enabled", "Disabled", &gpu->persistence_mode),
      reader.Small("pcie.link.gen.current", &gpu->pcie_gen_current),
      reader.Small("pcie.link.gen.max", &gpu->pcie_gen_max),
      reader.Small("pcie.link.width.current", &gpu->pcie_width_current),
      reader.Small("pcie.link.width.max", &gpu->pcie_width_max),
  };
  for (const Status& check : checks) {
    if (!check.ok()) return check;
  }
  if (const std::string* status = reader.Value("fabric.status")) {
    gpu->fabric_status = EscapeToolLine(status->substr(0, kMaxFabricText));
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& GpuHealthFields() {
  static const std::vector<std::string> kFields = {
      "index",
      "pci.bus_id",
      "ecc.mode.current",
      "ecc.mode.pending",
      "ecc.errors.uncorrected.volatile.total",
      "ecc.errors.uncorrected.aggregate.total",
      "remapped_rows.correctable",
      "remapped_rows.uncorrectable",
      "remapped_rows.pending",
      "remapped_rows.failure",
      "retired_pages.pending",
      "retired_pages.single_bit_ecc.count",
      "retired_pages.double_bit.count",
      "fabric.state",
      "fabric.status",
      "persistence_mode",
      "pcie.link.gen.current",
      "pcie.link.gen.max",
      "pcie.link.width.current",
      "pcie.link.width.max",
  };
  return kFields;
}

Status ParseGpuHealth(const std::string& out, const std::vector<std::string>& fields,
                      std::vector<GpuHealth>* gpus) {
  gpus->clear();
  if (nvsmi::FieldIndex(Query::kGpu, fields, "index") < 0 &&
      nvsmi::FieldIndex(Query::kGpu, fields, "pci.bus_id") < 0) {
    return Status::Error(ErrorKind::kInternal, "GPU health query: neither index nor pci.bus_id");
  }
  nvsmi::Table table;
  Status read = nvsmi::ReadTable(out, Query::kGpu, fields, &table);
  if (!read.ok()) return read;
  std::vector<GpuHealth> parsed;
  std::set<int> indexes;
  for (const Row& row : table.rows) {
    GpuHealth gpu;
    Status status = ReadRow(row, fields, &gpu);
    if (status.ok() && gpu.index >= 0 && !indexes.insert(gpu.index).second) {
      status = nvsmi::LineError(row.line, "duplicate GPU index " + std::to_string(gpu.index));
    }
    if (!status.ok()) return status;
    parsed.push_back(std::move(gpu));
  }
  if (parsed.empty()) return Status::Error(ErrorKind::kParse, "nvidia-smi output: no GPU rows");
  *gpus = std::move(parsed);
  return Status::Ok();
}

}  // namespace fleetreap
