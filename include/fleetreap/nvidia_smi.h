// NvidiaSmi: the nvidia-smi commands fleetreap runs and the parsers that turn
// what they print (stdout, stderr, exit code) into data or a precise error.
// Pure functions of their arguments; thread-safe.
//
// Rules every parser here follows:
//  - Output is never parsed as CSV when the exit code says the tool failed,
//    unless lost-GPU lines explain the failure (the answering GPUs are then
//    read); the tool's own message is returned (see NvidiaSmiFailure).
//  - "[N/A]", "[Not Supported]", "[Insufficient Permissions]", "[Unknown
//    Error]", any other bracketed text and a bare "N/A" read as "unknown"
//    (std::nullopt), never 0.
//  - Header present or absent, units present or absent, trailing spaces, a
//    missing final newline and CRLF line endings give identical results.
//  - Errors are kParse Statuses whose message names the line and the field:
//    "nvidia-smi output line 3: expected 6 fields, got 4".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/report.h"
#include "fleetreap/status.h"

namespace fleetreap {

/// Why nvidia-smi failed, as far as its own words tell.
enum class NvidiaSmiFailure {
  kNone,
  kDriverNotLoaded,          // "couldn't communicate with the NVIDIA driver" (exit 9)
  kVersionMismatch,          // "Failed to initialize NVML: Driver/library version mismatch"
  kNoDevices,                // "No devices were found" (exit 6)
  kInsufficientPermissions,  // "Failed to initialize NVML: Insufficient Permissions"
  kNvmlUnknownError,         // "Failed to initialize NVML: Unknown Error"
  kGpuLost,                  // "Unable to determine the device handle for GPU ..."
  kOther,                    // non-zero exit with text we do not recognise
};

/// Stable snake_case name: "driver_not_loaded", "gpu_lost"...
const char* NvidiaSmiFailureName(NvidiaSmiFailure failure);

/// One GPU that nvidia-smi named as unreachable ("... GPU is lost", "...:
/// Unknown Error"). "bus_id" is as printed ("0000:0B:00.0").
struct LostGpu {
  std::string bus_id;
  std::string message;  // the whole line, trimmed
};

/// Recognises a lost-GPU line in every spelling seen: "GPU 0000:0B:00.0",
/// "GPU0000:0B:00.0" and lower-case "gpu 0000:...". Returns false for any
/// other line.
bool ParseLostGpuLine(const std::string& line, LostGpu* lost);

/// Classifies a finished nvidia-smi run from both streams and the exit code.
/// Returns kNone when exit_code is 0 and no line starts with failure text
/// (lost-GPU lines among good rows give kGpuLost). Sets "message" to the
/// tool's own words: the lines that name the failure (stderr then stdout,
/// trimmed, duplicates dropped, joined with "; "); with none, every line it
/// printed on a non-zero exit; with nothing printed, "nvidia-smi exited with
/// status N". Capped near 2000 characters. "message" may be null.
NvidiaSmiFailure ClassifyNvidiaSmiFailure(const std::string& out,
                                          const std::string& err,
                                          int exit_code, std::string* message);

/// Normalises a PCI bus id for comparison: upper-case hex, domain widened to
/// 8 digits ("0000:0b:00.0" -> "00000000:0B:00.0").
std::string NormalizeBusId(const std::string& bus_id);

// ---------------------------------------------------------------- query-gpu

/// The fields fleetreap asks --query-gpu for, in order:
/// index, uuid, name, pci.bus_id, memory.used, memory.total.
const std::vector<std::string>& GpuQueryFields();

/// The exact command fleetreap runs to read GPU memory:
/// "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total
///  --format=csv,nounits". The header is kept on purpose: it proves the
/// columns are the ones asked for (a driver that renamed or reordered them is
/// a parse error, not a silent misreading) and it tells a real answer from an
/// error message printed on stdout. nounits keeps values bare; the parser
/// accepts units anyway. memory.used is not the last column, so output cut
/// short inside it (a capped or killed transfer) is a field-count error, never
/// a smaller number.
std::string GpuQueryCommand();

/// The same query restricted to one GPU ("-i INDEX"), for the per-GPU
/// fallback when the whole-host query fails on a lost GPU.
std::string GpuQueryCommandForGpu(int index);

struct GpuQueryResult {
  /// One reading per GPU row, sorted by index, plus one reading per lost GPU
  /// (state kLost, index -1 unless known, bus_id and detail set). Every other
  /// reading has state kUnknown: gpu_state.h classifies them. A reading's
  /// index is -1 when "index" was not among the fields.
  std::vector<GpuReading> gpus;
  NvidiaSmiFailure failure = NvidiaSmiFailure::kNone;
  std::string tool_message;  // the tool's own words when failure != kNone
};

/// Parses the output of a --query-gpu run that asked for "fields" (as passed
/// to --query-gpu, any order; must contain "index" or "uuid" to match rows,
/// else rows get index -1). With a header, columns are found by name (units
/// and known aliases such as gpu_name/name ignored); without one, by
/// position. Known columns fill GpuReading (index, uuid, name or gpu_name,
/// pci.bus_id or gpu_bus_id, memory.used, memory.total); others are checked
/// for count only.
///
/// Returns OK with rows when the run succeeded. Returns OK with the rows
/// that answered plus one kLost reading per lost GPU when lost-GPU lines are
/// mixed with good rows (result->failure is then kGpuLost), whatever the exit
/// code: the lost lines explain the failure, and the other rows are the
/// tool's own answer for their GPUs. Otherwise a failed run (non-zero exit or
/// a host-wide failure message, or lost GPUs with no readable row) gives a
/// kCommandFailed Status carrying the tool's message, with result->failure
/// and result->tool_message set and result->gpus holding only the lost GPUs
/// the error named; stdout is then not read as CSV. Returns kParse for a
/// successful run's output it cannot read.
Status ParseGpuQuery(const std::string& out, const std::string& err,
                     int exit_code, const std::vector<std::string>& fields,
                     GpuQueryResult* result);

// ------------------------------------------------------- query-compute-apps

/// One row of --query-compute-apps: a process with a CUDA context.
struct ComputeApp {
  std::optional<int> pid;          // nullopt: "[Not Supported]" (old drivers)
  std::string process_name;        // may hold spaces and commas
  std::string gpu_uuid;
  std::string gpu_bus_id;
  std::optional<int64_t> used_mib;  // nullopt: "[N/A]" (WDDM, MIG)
};

/// gpu_uuid, gpu_bus_id, pid, used_gpu_memory, process_name.
const std::vector<std::string>& ComputeAppsFields();

/// "nvidia-smi --query-compute-apps=gpu_uuid,gpu_bus_id,pid,used_gpu_memory,
/// process_name --format=csv,nounits". process_name comes last so that commas
/// inside it cannot shift any other column.
std::string ComputeAppsCommand();

/// Parses a --query-compute-apps run that asked for "fields". A process name
/// containing ", " is kept whole: the extra separators go to the
/// process_name column (or, without one, to name/gpu_name). Header only, no
/// output, or "No running processes found" give an empty list. Failure
/// handling as ParseGpuQuery (kCommandFailed carrying the tool's message,
/// "failure" may be null), except that a lost-GPU line is always a failure
/// here: the process list of a lost GPU cannot be known.
Status ParseComputeApps(const std::string& out, const std::string& err,
                        int exit_code, const std::vector<std::string>& fields,
                        std::vector<ComputeApp>* apps,
                        NvidiaSmiFailure* failure);

}  // namespace fleetreap
