#!/bin/sh
# Builds fleetreap's libFuzzer targets (one per parser) with clang in a
# separate build directory and runs each for a bounded time, then prints the
# executions and seconds of every run. Not part of the test suite.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# Environment: FLEETREAP_FUZZ_BUILD (build dir, default build-fuzz),
#              FLEETREAP_FUZZ_JOBS (build jobs, default 2).
# Exit status: 0 when no target found a crash, leak, hang or sanitizer
# report; 1 otherwise (the reproducer is left in the build dir).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${FLEETREAP_FUZZ_BUILD:-$root/build-fuzz}
jobs=${FLEETREAP_FUZZ_JOBS:-2}
targets="gpu_query compute_apps holder_scan script_output gpu_health xid_log inventory playbook"

cmake -S "$root" -B "$build" -G Ninja -DFLEETREAP_FUZZ=ON -DFLEETREAP_TESTS=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
set --
for t in $targets; do set -- "$@" "fuzz_$t"; done
cmake --build "$build" -j "$jobs" --target "$@"

# Seeds: every captured output (a raw capture is a valid input: stdout
# only, exit 0), and records of each remote step (tests/fuzz/seeds).
seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds/gpu_query" "$seeds/holder_scan" "$seeds/inventory" "$seeds/playbook" \
  "$seeds/script_output" "$seeds/gpu_health" "$seeds/xid_log"
cp "$root"/inventory/*.yaml "$root"/inventory/*.ini "$seeds/inventory/"
cp "$root"/playbooks/*.yaml "$seeds/playbook/"
cp "$root"/tests/testdata/nvsmi/*.txt "$seeds/gpu_query/"
cp "$root"/tests/fuzz/seeds/holder_scan/* "$seeds/holder_scan/"
cp "$root"/tests/fuzz/seeds/script_output/* "$seeds/script_output/"
cp "$root"/tests/testdata/readiness/*.csv "$root"/tests/testdata/device-h200/readiness/*.csv \
  "$seeds/gpu_health/"
cp "$root"/tests/testdata/readiness/xid/*.txt "$seeds/xid_log/"

status=0
summary=""
for t in $targets; do
  corpus=$build/fuzz-corpus/$t
  mkdir -p "$corpus"
  case $t in
    compute_apps) seed=$seeds/gpu_query;;
    *) seed=$seeds/$t;;
  esac
  # A pattern may expand to kMaxExpandedHosts names: legitimately slow
  # under ASan, so the inventory target gets a longer per-input timeout.
  timeout=10
  [ "$t" = inventory ] && timeout=60
  log=$build/fuzz-$t.log
  start=$(date +%s)
  rc=0
  (cd "$build" && "./tests/fuzz/fuzz_$t" "$corpus" "$seed" \
      -dict="$root/tests/fuzz/nvidia_smi.dict" -max_total_time="$seconds" \
      -timeout="$timeout" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1) \
      > "$log" 2>&1 || rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  result=clean
  if [ "$rc" -ne 0 ]; then result="FAILED (exit $rc, see $log)"; status=1; fi
  summary="$summary$(printf '%-14s %12s executions %6s s  %s' "$t" "${execs:-?}" "$elapsed" "$result")
"
done
printf '\nfleetreap fuzz run, %s s per target, %s\n%s' "$seconds" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$summary"
exit $status
