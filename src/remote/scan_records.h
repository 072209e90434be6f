// The scan's record grammar as a step of a longer record stream (private to
// src/remote/: scan_output.cc, shm_clean.cc, batch.cc): the fused steps (shm +
// verify, re-scan + shm (+ verify), a dry run's shm + inspect) read a scan
// beside other steps' records. Pure; thread-safe.
#pragma once

#include "fleetreap/remote/host_records.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"

namespace fleetreap {

/// Reads ScanScript's records, from "scan 1" to its "end", into "scan".
[[nodiscard]] Status ParseScanRecords(RecordReader& reader, ScanOutput* scan);

}  // namespace fleetreap
