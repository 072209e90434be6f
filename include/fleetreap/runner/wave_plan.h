// WavePlan: how a run is staged, as Ansible's `serial` stages a play. The
// selection is cut into waves (--canary N, --waves 1,10%,100%), in
// inventory order or by whole units of a host variable (--wave-by rack);
// after each wave the failure cap (--max-fail N|P%) decides whether the
// next one starts. Pure: parsing, planning and the stop decision, no I/O,
// no clock. Thread-compatible values.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// One wave's size: a count, or a percentage of the selection's units
/// (hosts, or --wave-by values), rounded down, at least 1 (Ansible's
/// pct_to_int).
struct WaveSize {
  int count = 0;    // > 0 when a count
  int percent = 0;  // 1-100 when a percentage
};

/// The failure cap. A failure is a host of a started wave that is not clean
/// after its run: dirty, failed or unreachable (Ansible counts unreachable
/// hosts against max_fail_percentage too). A count caps the whole run's
/// failures (NVSentinel's absolute cap): the run stops once more than
/// "count" hosts failed. A percentage caps each wave, as Ansible's
/// max_fail_percentage with serial: the run stops once more than
/// "percent"% of one wave's hosts failed. Whatever the cap, a wave whose
/// every host failed stops the run (Ansible's default).
struct FailCap {
  bool set = false;
  bool is_percent = false;
  int value = 0;  // count >= 0, or percent 0-100
};

/// Parses "1,10%,100%": counts >= 1 and percentages 1-100, comma-separated.
/// kUsage errors name the flag and the word: `--waves: "0" is not a wave
/// size (a count from 1, or a percentage 1%-100%)`.
Status ParseWaveSizes(const std::string& flag, const std::string& text, std::vector<WaveSize>* out);

/// Parses "3" or "10%" (0-100%). kUsage errors name --max-fail.
Status ParseFailCap(const std::string& text, FailCap* out);

/// The wave sizes a run uses: "--canary N" is a first wave of N before the
/// --waves sizes; --canary alone is N then 100%; neither gives one wave of
/// 100%. The last size repeats until the selection is used up.
std::vector<WaveSize> WaveSizesFor(int canary, const std::vector<WaveSize>& waves);

/// One wave: indices into the selection, ascending, and with --wave-by the
/// unit values it covers ("b1", "b2"; "" for hosts without the variable).
struct Wave {
  std::vector<size_t> hosts;
  std::vector<std::string> units;
};

/// Cuts a selection into waves. "unit_of[i]" is host i's unit: its
/// --wave-by value, or empty "by" for one host per unit. Units keep the
/// order of their first host; sizes count units. Every host is in exactly
/// one wave; an empty selection has no wave.
std::vector<Wave> PlanWaves(const std::vector<WaveSize>& sizes, const std::string& by,
                            const std::vector<std::string>& unit_of);

/// What one finished wave did: hosts run and how many of them failed.
struct WaveTally {
  int hosts = 0;
  int failed = 0;
};

/// After the waves in "done" (in order), whether the next wave may start:
/// "" when it may, else the reason, the words the reports give every host
/// left unstarted, e.g.
///   "stopped by --max-fail 2: 3 hosts failed after wave 2 of 4"
///   "stopped by --max-fail 10%: 2 of 10 hosts failed in wave 2 of 4"
///   "stopped: every host of wave 1 of 3 failed"
std::string StopReason(const FailCap& cap, const std::vector<WaveTally>& done, int waves);

/// The waves as a dry run prints them, one line each, host names folded:
///   "wave 1/3: 1 host: gpu01"
///   "wave 2/3: 2 hosts (rack b1): gpu[02-03]"
/// and a last line for the cap: "stops once more than 2 hosts fail".
std::string RenderWavePlan(const std::vector<Wave>& waves, const std::vector<std::string>& names,
                           const std::string& by, const FailCap& cap);

}  // namespace fleetreap
