// The record grammars of the steps as pieces of a longer record stream
// (private to src/remote/): each step's file defines its own, and the fused
// round trips (batch.cc) read several in one reply. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/model/host_reply.h"
#include "fleetreap/remote/host_records.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"

namespace fleetreap {

/// "WORD N RC:TEXT" (reset, pgpu): the index, the exit status, the text.
[[nodiscard]] Status TakeIndexed(RecordReader& reader, const std::string& word, const char* shape,
                                 int* index, int* exit_code, std::string* text);
/// The stop-units step's "stop I RC" records, one per unit, in order, and
/// its audit record.
[[nodiscard]] Status TakeStopRecords(RecordReader& reader, const std::vector<std::string>& units,
                                     std::vector<UnitStop>* stops, AuditOutcome* audit);
/// The "audit LINES RC" record a step that handed lines to logger ends
/// with, when there is one; adds it to "audit" (may be null).
[[nodiscard]] Status TakeAuditRecord(RecordReader& reader, AuditOutcome* audit);
/// The signal step's records, from "signal 1" to its "end".
[[nodiscard]] Status TakeSignalRecords(RecordReader& reader, SignalReply* result);
/// The /dev/shm step's records, from "shm 1" to before its "end".
[[nodiscard]] Status TakeShmRecords(RecordReader& reader, ShmOutput* result);

}  // namespace fleetreap
