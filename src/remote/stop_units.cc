// The stop-units step: its script and its grammar (stop_units.h), side by
// side.
#include "fleetreap/remote/stop_units.h"

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "prelude.h"
#include "step_records.h"

namespace fleetreap {

std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout, const AuditRequest& audit) {
  return Whole(remote_script_internal::StopUnitsRecords(units, timeout, audit)) + "z end\n";
}

remote_script_internal::StepScript remote_script_internal::StopUnitsRecords(
    const std::vector<std::string>& units, std::chrono::milliseconds timeout,
    const AuditRequest& audit) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n" + AuditPrelude(audit);
  for (size_t i = 0; i < units.size(); ++i) {
    s += "timeout -k 2 " + TimeoutSeconds(timeout) + " systemctl stop -- " + ShellQuote(units[i]) +
         " </dev/null >/dev/null 2>&1\n";
    s += "r=$?; z \"stop " + std::to_string(i) + " $r\"; al " +
         ShellQuote("action=stop_unit unit=" + AuditValue(units[i])) + "\" rc=$r\"\n";
  }
  return {{}, s + "aud\n"};
}

// "stop I RC" for each unit, in order.
Status TakeStopRecords(RecordReader& reader, const std::vector<std::string>& units,
                       std::vector<UnitStop>* stops, AuditOutcome* audit) {
  for (size_t i = 0; i < units.size(); ++i) {
    const HostRecord* r = nullptr;
    Status status = reader.Take("stop", 3, false, "stop I RC", &r);
    if (!status.ok()) return status;
    int index = 0, code = 0;
    if (!ParseTagInt(r->Words()[1], &index) || index != static_cast<int>(i) ||
        !ParseTagExit(r->Words()[2], &code) || code < 0) {
      return reader.Error("bad " + QuoteForMessage(r->tag, 40));
    }
    stops->push_back({units[i], code});
  }
  return TakeAuditRecord(reader, audit);
}

Status ParseStopUnitsOutput(const std::string& out, const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops, AuditOutcome* audit) {
  stops->clear();
  if (audit != nullptr) *audit = AuditOutcome();
  return ParseHostRecords(out, "stop units", [&](RecordReader& reader) {
    Status status = TakeStopRecords(reader, units, stops, audit);
    return status.ok() ? reader.TakeEnd() : status;
  });
}

}  // namespace fleetreap
