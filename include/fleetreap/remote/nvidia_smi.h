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
//  - nvidia-smi's own words are kept, never dropped nor paraphrased: every
//    line it printed on stderr, and every stdout line that names a failure,
//    reaches GpuQueryResult::tool_message (and a lost GPU's line its
//    reading's detail), made safe by EscapeToolLine.
//
// Memory, the threshold and the driver's reservation: "memory.used" is what
// processes (and, on a desktop, the display) hold. The memory the driver
// itself reserves is not in it on current drivers: on an idle H200 with
// driver 580, memory.used reads 0 MiB while memory.reserved reads 616 MiB
// (tests/testdata/nvsmi/58-h200-memory-reserved-idle.txt; memory.total =
// reserved + used + free). Older drivers and other GPUs may read a few MiB
// used when idle (an RTX 4000 Ada reads 1 MiB, desktop GPUs more with a
// display). The playbook's threshold_mib (default 0, playbook.h) is the
// allowance for that: a GPU is clean at or under it. 0 suits data-center
// GPUs on current drivers; a fleet whose idle GPUs read a few MiB sets it
// to that reading, well under any real workload's context (about 500 MiB
// on an H200 for the smallest PyTorch process).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"

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
NvidiaSmiFailure ClassifyNvidiaSmiFailure(const std::string& out, const std::string& err,
                                          int exit_code, std::string* message);

/// The longest line of nvidia-smi's words kept whole; longer ones are cut
/// and end in "...". The longest real line seen, the reset refusal's
/// "1 device is currently being used ..." (samples 24, 25), is 319.
constexpr size_t kMaxToolLine = 400;
/// The bound on GpuQueryResult::tool_message; lines past it are counted
/// ("(3 more lines)"), not silently lost.
constexpr size_t kMaxToolMessage = 2000;

/// One line of nvidia-smi's words made safe to print on one line: a
/// backslash doubled, '\t', '\r', '\n' and every other control byte escaped
/// C-style ("\x1b"), UTF-8 and other printable bytes kept as they are. Past
/// kMaxToolLine bytes of "line" it is cut and "..." added. Text without
/// control characters or backslashes comes back verbatim.
std::string EscapeToolLine(const std::string& line);

/// EscapeToolLine in double quotes, with '"' escaped: the form the tool's
/// words take inside tool_message and Status messages.
std::string QuoteToolLine(const std::string& line);

/// True when nvidia-smi refused "field" as unknown to its driver: a non-zero
/// exit (2 in every capture) and, on either stream, the line
/// 'Field "FIELD" is not a valid field to query.' (driver 580's wording, on
/// stdout; tests/testdata/nvsmi/57-h200-bad-field-exit2.txt). A refusal
/// of another field, or that text on a successful run, is not.
bool IsUnknownFieldError(const std::string& out, const std::string& err, int exit_code,
                         const std::string& field);

// ---------------------------------------------------------------- query-gpu

/// The fields fleetreap asks --query-gpu for, in order: index, uuid, name,
/// pci.bus_id, memory.used, memory.total, gpu_recovery_action.
/// gpu_recovery_action is the driver's own verdict on the GPU's health
/// ("None" when healthy; "Reset", "Reboot", "Drain P2P", "Drain and Reset"
/// when it asks for that action); older drivers reject the field.
const std::vector<std::string>& GpuQueryFields();

/// The same without gpu_recovery_action (the six fields older drivers know).
const std::vector<std::string>& GpuQueryFieldsWithoutRecovery();

/// The exact command fleetreap runs to read GPU memory:
/// "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total,
///  gpu_recovery_action --format=csv,nounits". The header is kept on purpose: it
/// proves the columns are the ones asked for (a driver that renamed or
/// reordered them is a parse error, not a silent misreading), it tells a real
/// answer from an error message printed on stdout, and it says whether the
/// answer has the recovery column. nounits keeps values bare; the parser
/// accepts units anyway. memory.used is not the last column, so output cut
/// short inside it (a capped or killed transfer) is a field-count error, never
/// a smaller number; a cut recovery action reads as an action ("Non"), which
/// keeps the GPU from being called clean.
std::string GpuQueryCommand();

/// The six-field command ("...,memory.used,memory.total --format=csv,nounits")
/// for the retry when IsUnknownFieldError(out, err, exit_code,
/// "gpu_recovery_action") says the driver predates that field. Its answer is
/// parsed with GpuQueryFields() all the same (the header says which columns
/// came); every reading's recovery_action is then "".
std::string GpuQueryCommandWithoutRecovery();

/// The same query restricted to one GPU ("-i INDEX"), for the per-GPU
/// fallback when the whole-host query fails on a lost GPU; without
/// gpu_recovery_action when "with_recovery" is false.
std::string GpuQueryCommandForGpu(int index, bool with_recovery = true);

struct GpuQueryResult {
  /// One reading per GPU row, sorted by index, plus one reading per lost GPU
  /// (state kLost, index -1 unless a row names its bus id, bus_id as the
  /// tool printed it, detail the tool's line through EscapeToolLine). Every
  /// other reading has state kUnknown: gpu_state.h classifies them. A
  /// reading's index is -1 when "index" was not among the fields.
  std::vector<GpuReading> gpus;
  NvidiaSmiFailure failure = NvidiaSmiFailure::kNone;
  /// The tool's own words, each line through QuoteToolLine, joined with
  /// "; ": the lines that name the failure, then every other line it
  /// printed on stderr, then (on a failed run where nothing named the cause)
  /// every stdout line. Bounded by kMaxToolMessage, with the count of lines
  /// left out. Set whenever the tool said something besides its answer,
  /// even on success (a stderr warning); empty otherwise.
  std::string tool_message;
};

/// True when nothing may be signalled on the host: nvidia-smi exited 15 (a
/// GPU fell off the bus) or 9 (no driver), or its words say a GPU is lost or
/// the driver is not loaded (result.failure kGpuLost or kDriverNotLoaded),
/// whatever the exit code. Killing processes cannot help such a host, and a
/// process on a lost GPU may be stuck in the driver; the escalation reports
/// the host (with the rows that still answered, see ParseGpuQuery) and stops
/// before any signal. Pure.
bool StopsTheLadder(const GpuQueryResult& result, int exit_code);

/// Parses the output of a --query-gpu run that asked for "fields" (as passed
/// to --query-gpu, any order; must contain "index" or "uuid" to match rows,
/// else rows get index -1). With a header, columns are found by name (units
/// and known aliases such as gpu_name/name ignored); without one, by
/// position. Known columns fill GpuReading (index, uuid, name or gpu_name,
/// pci.bus_id or gpu_bus_id, memory.used, memory.total, gpu_recovery_action);
/// others are checked for count only. gpu_recovery_action is optional: a
/// header without it is read as the six-field answer (recovery_action ""),
/// so the retry's answer parses with the same fields; without a header every
/// requested field must be there.
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
Status ParseGpuQuery(const std::string& out, const std::string& err, int exit_code,
                     const std::vector<std::string>& fields, GpuQueryResult* result);

// ------------------------------------------------------- query-compute-apps

// ComputeApp, one row of --query-compute-apps, is a model value
// (model/gpu_reading.h).
// The scan's own query is ScanAppsFields (scan_script.h): no field a
// user controls (process_name, name) is ever asked for, because real
// nvidia-smi prints a process name's newlines raw and a forged line would
// read as a row. There is no builder for such a query.

/// Parses a --query-compute-apps run that asked for "fields" (or a capture
/// that did: the samples ask for process_name). A process name
/// containing ", " is kept whole: the extra separators go to the
/// process_name column (or, without one, to name/gpu_name). Header only, no
/// output, or "No running processes found" give an empty list. Failure
/// handling as ParseGpuQuery (kCommandFailed carrying the tool's message,
/// "failure" may be null), except that a lost-GPU line is always a failure
/// here: the process list of a lost GPU cannot be known.
Status ParseComputeApps(const std::string& out, const std::string& err, int exit_code,
                        const std::vector<std::string>& fields, std::vector<ComputeApp>* apps,
                        NvidiaSmiFailure* failure);

// --------------------------------------------------- default table processes

/// One row of the "Processes:" section of plain `nvidia-smi`. It is the only
/// place that lists graphics clients (Type "G", "C+G"): driver 580 has no
/// query for them, and --query-compute-apps lists "C" and "C+G" only.
struct TableProcess {
  int gpu = 0;            // nvidia-smi's GPU index
  std::optional<int> gi;  // GPU instance (MIG); nullopt: "N/A"
  std::optional<int> ci;  // compute instance (MIG); nullopt: "N/A"
  int pid = 0;
  std::string type;  // "C", "G" or "C+G"
  /// As printed: may hold spaces, and nvidia-smi cuts long names from the
  /// left ("...ut-somewhere/venv/bin/python3"). Never a safe key for a
  /// process; match on pid.
  std::string process_name;
  std::optional<int64_t> used_mib;  // nullopt: "N/A" (WDDM, some MIG)
};

/// Parses the "Processes:" section of the default `nvidia-smi` table (the
/// layout of drivers 580 to 595 in the samples: a 91-column box, header lines "GPU   GI   CI
/// PID   Type   Process name   GPU Memory" and "ID   ID   Usage", a "===="
/// rule, one "|" row per process or "No running processes found", a closing
/// "+---+" rule). Everything before "Processes:" (the GPU boxes, the MIG
/// devices box) is skipped. Returns kParse naming the line for a section that
/// is missing, unclosed, or has a row that is not exactly GPU, GI, CI, PID,
/// Type, name and memory ("nvidia-smi table line 19: expected a process row,
/// got ..."); "procs" is then empty.
Status ParseProcessTable(const std::string& out, std::vector<TableProcess>* procs);

}  // namespace fleetreap
