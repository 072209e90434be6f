// Batch (batch.h): the steps of one round trip joined into one script, and
// their reply walked with each step's record grammar.
#include "fleetreap/remote/batch.h"

#include <set>

#include "fleetreap/remote/scan.h"
#include "fleetreap/remote/signal.h"
#include "prelude.h"
#include "scan_records.h"
#include "step_records.h"

namespace fleetreap {

using remote_script_internal::LibraryPiece;
using remote_script_internal::LibraryText;
using remote_script_internal::ScanParts;
using remote_script_internal::ShmCleanRecords;
using remote_script_internal::SignalParts;
using remote_script_internal::StepScript;
using remote_script_internal::StopUnitsRecords;
using remote_script_internal::Whole;

namespace {

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// The step's script as parts; "last": it ends the batch, so it keeps its
// "end". A per-GPU query and a reset run alone: their whole script is their
// own part.
StepScript PartsOf(const StepRequest& step, bool last, const HostPaths& paths) {
  const std::string end = last ? "z end\n" : "";
  return std::visit(
      Overload{
          [&](const ScanRequest& r) { return ScanParts(r, paths); },
          [&](const GpuQueryRequest& r) {
            return StepScript{{}, PerGpuQueryScript(r.indexes, r.timeout)};
          },
          [&](const SignalRequest& r) {
            return SignalParts(r.signal, r.targets, r.wait, r.poll, paths, r.parents, r.audit,
                               r.scan_start);
          },
          [&](const StopUnitsRequest& r) {
            StepScript script = StopUnitsRecords(r.units, r.unit_timeout, r.audit);
            script.own += end;
            return script;
          },
          [&](const ShmRequest& r) {
            StepScript script = ShmCleanRecords(r.patterns, r.dry_run, paths, r.audit, r.selection);
            script.own += end;
            return script;
          },
          [&](const ResetRequest& r) {
            return StepScript{{},
                              GpuResetScript(r.gpus, r.per_gpu, r.units, r.unit_timeout, r.audit,
                                             r.query_timeout)};
          },
      },
      step);
}

// A dry run's /dev/shm listing walked every fd where it ran: a holder scan
// right after it takes that walk as its own (ScanScript's RW).
bool LendsFdWalk(const StepRequest& before, const StepRequest& step) {
  const auto* shm = std::get_if<ShmRequest>(&before);
  const auto* scan = std::get_if<ScanRequest>(&step);
  return shm != nullptr && shm->dry_run && scan != nullptr && scan->holders;
}

// The step's name in a parse error: a scan alone is the "scan"; among
// several steps, one first or right after a wave the "rescan", any other
// (after a clean) the "verify".
std::string ParseName(const std::vector<StepRequest>& batch, size_t i) {
  const bool rescan = i == 0 || std::holds_alternative<SignalRequest>(batch[i - 1]);
  return std::visit(Overload{
                        [&](const ScanRequest&) -> std::string {
                          if (batch.size() == 1) return "scan";
                          return rescan ? "rescan" : "verify";
                        },
                        [](const GpuQueryRequest&) -> std::string { return "per-GPU query"; },
                        [](const SignalRequest&) -> std::string { return "signal"; },
                        [](const StopUnitsRequest&) -> std::string { return "stop units"; },
                        [](const ShmRequest&) -> std::string { return "shm"; },
                        [](const ResetRequest&) -> std::string { return "GPU reset"; },
                    },
                    batch[i]);
}

// "a", "a and b", "a, b and c".
std::string ParseName(const std::vector<StepRequest>& batch) {
  std::string name;
  for (size_t i = 0; i < batch.size(); ++i) {
    const char* sep = i == 0 ? "" : i + 1 == batch.size() ? " and " : ", ";
    name += sep + ParseName(batch, i);
  }
  return name;
}

// A step that ends with its own "end" record takes it; the others take the
// batch's when they are last.
Status TakeStep(RecordReader& reader, const StepRequest& step, bool last, StepReply* reply,
                ScanOutput* scan) {
  Status status = std::visit(
      Overload{
          [&](const ScanRequest&) { return ParseScanRecords(reader, scan); },
          [&](const SignalRequest&) {
            SignalReply signal;
            Status s = TakeSignalRecords(reader, &signal);
            *reply = signal;
            return s;
          },
          [&](const StopUnitsRequest& r) {
            UnitStops stops;
            Status s = TakeStopRecords(reader, r.units, &stops.stops, &stops.audit);
            if (s.ok() && last) s = reader.TakeEnd();
            *reply = stops;
            return s;
          },
          [&](const ShmRequest&) {
            ShmOutput shm;
            Status s = TakeShmRecords(reader, &shm);
            if (s.ok() && last) s = reader.TakeEnd();
            *reply = shm;
            return s;
          },
          [&](const auto&) {
            return Status::Error(ErrorKind::kInternal, "a per-GPU query or a reset runs alone");
          },
      },
      step);
  return status;
}

// The steps that run alone, read by their own parsers.
Status ParseAlone(const std::string& out, const StepRequest& step, StepReply* reply) {
  if (std::holds_alternative<GpuQueryRequest>(step)) {
    std::vector<GpuReading> gpus;
    Status status = ReadPerGpuQuery(out, &gpus);
    *reply = gpus;
    return status;
  }
  GpuResetReply reset;
  Status status = ParseGpuResetOutput(out, &reset);
  *reply = reset;
  return status;
}

bool RunsAlone(const StepRequest& step) {
  return std::holds_alternative<GpuQueryRequest>(step) ||
         std::holds_alternative<ResetRequest>(step);
}

}  // namespace

std::string SignalScriptFor(const SignalRequest& wave, const HostPaths& paths) {
  return Whole(SignalParts(wave.signal, wave.targets, wave.wait, wave.poll, paths, wave.parents,
                           wave.audit, wave.scan_start));
}

std::string BatchScript(const std::vector<StepRequest>& batch, const HostPaths& paths) {
  std::set<LibraryPiece> library;
  std::string own;
  bool after_wave = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    StepScript step = PartsOf(batch[i], i + 1 == batch.size(), paths);
    library.insert(step.library.begin(), step.library.end());
    if (i > 0 && LendsFdWalk(batch[i - 1], batch[i])) own += "RW=1\n";
    // The steps after a wave run only when it left nothing (WL empty).
    if (!after_wave && i > 0 && std::holds_alternative<SignalRequest>(batch[i - 1])) {
      after_wave = true;
      own += "if [ -z \"$WL\" ]; then\n";
    }
    own += step.own;
  }
  return LibraryText(library) + own + (after_wave ? "fi\n" : "");
}

std::string BatchName(const std::vector<StepRequest>& batch) {
  std::string name;
  for (const StepRequest& step : batch) {
    name += name.empty() ? "" : ", ";
    name += std::visit(
        Overload{
            [](const ScanRequest&) { return "scan"; },
            [](const GpuQueryRequest&) { return "nvidia-smi per GPU"; },
            [](const SignalRequest&) { return "signal"; },
            [](const StopUnitsRequest&) { return "stop units"; },
            [](const ShmRequest& r) { return r.dry_run ? "/dev/shm listing" : "/dev/shm clean"; },
            [](const ResetRequest&) { return "GPU reset"; },
        },
        step);
  }
  return name;
}

Status ParseBatch(const std::string& out, const std::vector<StepRequest>& batch,
                  std::vector<StepReply>* replies) {
  replies->clear();
  if (batch.empty()) return Status::Error(ErrorKind::kInternal, "an empty batch");
  std::vector<StepReply> read(batch.size());
  if (batch.size() == 1 && RunsAlone(batch[0])) {
    Status status = ParseAlone(out, batch[0], &read[0]);
    if (status.ok()) *replies = std::move(read);
    return status;
  }
  std::vector<ScanOutput> scans(batch.size());
  size_t taken = 0;
  Status status = ParseHostRecords(out, ParseName(batch), [&](RecordReader& reader) {
    Status s;
    for (; s.ok() && taken < batch.size(); ++taken) {
      // A wave that left something ends the reply: the steps after it did not run.
      if (taken > 0 && reader.AtEnd() && std::holds_alternative<SignalRequest>(batch[taken - 1])) {
        break;
      }
      s = TakeStep(reader, batch[taken], taken + 1 == batch.size(), &read[taken], &scans[taken]);
    }
    return s;
  });
  if (!status.ok()) return status;
  read.resize(taken);
  *replies = std::move(read);
  for (size_t i = 0; i < taken; ++i) {
    if (!std::holds_alternative<ScanRequest>(batch[i])) continue;
    HostSnapshot snapshot;
    status = ReadScan(scans[i], std::get<ScanRequest>(batch[i]).units, &snapshot);
    if (!status.ok()) return status;
    (*replies)[i] = std::move(snapshot);
  }
  return Status::Ok();
}

}  // namespace fleetreap
