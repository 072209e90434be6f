// NvidiaSmiCsv (private to the nvidia_smi parsers): splits nvidia-smi's
// "--format=csv" output into lines and fields, finds the header, maps the
// requested fields to columns, and reads the value kinds every query shares.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/base/text.h"
#include "fleetreap/remote/nvidia_smi.h"

namespace fleetreap {
namespace nvsmi {

/// One non-empty line: its 1-based number in the text, CR and surrounding
/// blanks removed.
struct Line {
  int number = 0;
  std::string text;
};

/// The lines of "text" (SplitLines), numbered from 1, each trimmed; empty
/// lines are dropped but counted.
std::vector<Line> NumberedLines(const std::string& text);

/// Which --query-* option the fields belong to: the aliases differ ("name"
/// is the GPU name for --query-gpu and the process name for compute apps).
enum class Query { kGpu, kComputeApps };

/// The name nvidia-smi prints in the header for "field": the unit suffix
/// (" [MiB]") dropped and aliases resolved ("gpu_name" -> "name").
std::string CanonicalField(Query query, const std::string& field);

/// One data row; values[i] belongs to the i-th requested field.
struct Row {
  int line = 0;
  std::vector<std::string> values;
};

struct Table {
  bool has_header = false;
  std::vector<Row> rows;
};

/// True for a requested field an answer may lack (its header then has no
/// such column): gpu_recovery_action and the readiness fields
/// (GpuHealthFields() but index and pci.bus_id), which older drivers may
/// not know: the scan asks again without them.
bool IsOptionalField(Query query, const std::string& canonical);

/// Reads CSV "out" for the requested "fields". Lost-GPU lines are skipped
/// (CheckRun collects them). With kComputeApps, "No running processes found" lines
/// are skipped. Rows with more separators than columns are repaired by
/// widening the free-text column (process_name, else name, else gpu_name);
/// other mismatches are kParse errors naming the line. An optional field
/// missing from the header reads as "" in every row; without a header,
/// every field must be there.
Status ReadTable(const std::string& out, Query query, const std::vector<std::string>& fields,
                 Table* table);

/// "[N/A]", any bracketed text, "N/A" and "" are unknown values.
bool IsUnknownValue(const std::string& value);

/// Position of "canonical" among the canonical requested fields, or -1.
int FieldIndex(Query query, const std::vector<std::string>& fields, const std::string& canonical);

/// Reads a MiB value ("512", "512 MiB"); unknown values give nullopt.
Status ParseMib(const Row& row, const std::string& field, const std::string& value,
                std::optional<int64_t>* mib);

/// Reads a non-negative integer (index, pid); unknown values give nullopt.
Status ParseCount(const Row& row, const std::string& field, const std::string& value,
                  std::optional<int>* count);

/// "nvidia-smi output line N: <what>" as a kParse Status.
Status LineError(int line, const std::string& what);

/// "nvidia-smi failed (<failure name>): <message>" as a kCommandFailed Status.
Status FailedRun(NvidiaSmiFailure failure, const std::string& message);

/// The failure handling both parsers share: classifies the run, fills
/// "failure", "message" and the lost GPUs named in either stream. Returns OK
/// when stdout may be read as CSV: exit 0 with no failure text, or a failure
/// that lost-GPU lines explain (any exit code; the caller decides what the
/// remaining rows are worth). Else the kCommandFailed Status:
/// "nvidia-smi failed (driver_not_loaded): NVIDIA-SMI has failed ...".
Status CheckRun(const std::string& out, const std::string& err, int exit_code,
                NvidiaSmiFailure* failure, std::string* message, std::vector<LostGpu>* lost);

}  // namespace nvsmi
}  // namespace fleetreap
