// The GPU reset step: its script (remote_script.h) and its grammar
// (remote_script_output.h), side by side.
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/remote/remote_script.h"
#include "fleetreap/remote/remote_script_output.h"
#include "remote_script_prelude.h"
#include "step_records.h"

namespace fleetreap {

std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                           const AuditRequest& audit) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n" + remote_script_internal::AuditPrelude(audit);
  for (int gpu : gpus) {
    std::string index = std::to_string(gpu);
    s += "o=$(timeout -k 2 " + TimeoutSeconds(per_gpu) + " nvidia-smi --gpu-reset -i " + index +
         " 2>&1 </dev/null); r=$?\n";
    s += "printf 'reset " + index + " %s:%s\\0' \"$r\" \"$o\"\n";
    s += "al 'action=gpu_reset gpu=" + index + "'\" rc=$r\"\n";
  }
  s += "aud\nz end\n";
  return s;
}

Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets,
                           AuditOutcome* audit) {
  resets->clear();
  if (audit != nullptr) *audit = AuditOutcome();
  return ParseHostRecords(out, "GPU reset", [&](RecordReader& reader) {
    while (reader.PeekWord() == "reset") {
      GpuReset reset;
      std::string text;
      Status status =
          TakeIndexed(reader, "reset", "reset N RC:TEXT", &reset.gpu, &reset.exit_code, &text);
      if (!status.ok()) return status;
      for (const std::string& line : SplitLines(text)) {
        std::string trimmed = Trim(line);
        if (trimmed.empty()) continue;
        reset.message += (reset.message.empty() ? "" : "; ") + trimmed;
      }
      resets->push_back(reset);
    }
    Status status = TakeAuditRecord(reader, audit);
    return status.ok() ? reader.TakeEnd() : status;
  });
}

}  // namespace fleetreap
