// GpuHealthQuery: the nvidia-smi --query-gpu fields that say whether a GPU
// can run the next job (ECC, remapped rows, retired pages, fabric,
// persistence, PCIe link) and the parser that reads them into GpuHealth
// (model/gpu_health.h). The fields ride in the scan's existing query; this
// parser reads them by header name from that answer or from a query of these
// fields alone. Pure functions; thread-safe.
//
// Values a driver or GPU does not have ("[N/A]", "N/A", "[Not Supported]",
// any bracketed text) read as not supported (std::nullopt, or "" for the
// fabric fields), never as a failure: an H200 reads retired_pages.* as
// "[N/A]" (it remaps rows instead) and fabric.* as "N/A" outside an NVSwitch
// system (tests/testdata/device-h200/readiness/). Any other value that is
// not of the field's kind is a kParse error naming the line and the field:
//   nvidia-smi output line 2: remapped_rows.pending: expected Yes or No, got "Maybe"
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_health.h"

namespace fleetreap {

/// The readiness fields, in the order fleetreap asks for them: index,
/// pci.bus_id, ecc.mode.current, ecc.mode.pending,
/// ecc.errors.uncorrected.volatile.total,
/// ecc.errors.uncorrected.aggregate.total, remapped_rows.correctable,
/// remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure,
/// retired_pages.pending, retired_pages.single_bit_ecc.count,
/// retired_pages.double_bit.count, fabric.state, fabric.status,
/// persistence_mode, pcie.link.gen.current, pcie.link.gen.max,
/// pcie.link.width.current, pcie.link.width.max. All of them are known to
/// driver 580 (its --help-query-gpu, captured beside the samples).
const std::vector<std::string>& GpuHealthFields();

/// Parses the stdout of a successful --query-gpu run that asked for
/// "fields" (any order, other fields among them ignored; "index" or
/// "pci.bus_id" must be there to tell the GPUs apart). With a header,
/// columns are found by name; without one, by position. Fills one GpuHealth
/// per row, in the order printed. Returns kParse for a value of the wrong
/// kind, a duplicate GPU index or no rows at all; "*gpus" is then empty.
Status ParseGpuHealth(const std::string& out, const std::vector<std::string>& fields,
                      std::vector<GpuHealth>* gpus);

}  // namespace fleetreap
