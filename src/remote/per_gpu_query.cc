// The per-GPU query after a lost GPU (scan_script.h): its script, one
// bounded GPU query per index, and its grammar ("pgpu N RC:TEXT" each).
#include "fleetreap/base/time_format.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/scan_script.h"
#include "prelude.h"
#include "step_records.h"

namespace fleetreap {

namespace {

using remote_script_internal::LibraryPiece;
using remote_script_internal::LibraryText;
using remote_script_internal::PreludeSettings;

// The command's arguments after "nvidia-smi ".
std::string Arguments(const std::string& command) { return command.substr(command.find(' ') + 1); }

}  // namespace

std::string PerGpuQueryScript(const std::vector<int>& indexes, std::chrono::milliseconds timeout) {
  std::string s = LibraryText({LibraryPiece::kPrelude}) + PreludeSettings(HostPaths());
  s += "T=" + TimeoutSeconds(timeout) + "\n";
  for (int index : indexes) {
    s += "q " + Arguments(GpuQueryCommandForGpu(index)) + "\n";
    s += "printf 'pgpu " + std::to_string(index) + " %s:%s\\0' \"$r\" \"$o\"\n";
  }
  s += "z end\n";
  return s;
}

Status ParsePerGpuQueryOutput(const std::string& out, std::vector<PerGpuQuery>* queries) {
  queries->clear();
  return ParseHostRecords(out, "per-GPU query", [&](RecordReader& reader) {
    while (reader.PeekWord() == "pgpu") {
      PerGpuQuery q;
      Status status = TakeIndexed(reader, "pgpu", "pgpu N RC:TEXT", &q.index, &q.exit_code, &q.out);
      if (!status.ok()) return status;
      queries->push_back(q);
    }
    return reader.TakeEnd();
  });
}

}  // namespace fleetreap
