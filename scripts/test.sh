#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test.
#  1. unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#  2. every test, unit and integration (the simulated fleet over real SSH), in build/
#  3. lint (scripts/lint.sh build): clang-format, shellcheck over every shell
#     script and the remote scripts' bodies, clang-tidy over src/
#  4. the fan-out's threads under ThreadSanitizer: fleetreap built with
#     -fsanitize=thread (build-tsan/) against the two integration suites that
#     drive the fleet runner's threads hardest and the bastion suite (its
#     pump thread) (scripts/tsan.sh; about 7 min)
# Ends with CTest's summaries; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/setup.sh || exit 1
# Leftovers of an interrupted earlier run (simulated hosts whose claiming
# process is gone) are removed first; fleets of a run going on beside this one stay.
if [ -x scripts/fleet ]; then scripts/fleet down --stale >/dev/null 2>&1 || true; fi

bash scripts/build.sh asan --target fleetreap_tests || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L unit --output-on-failure -j"$(nproc)"
asan_status=$?

# The demo may have configured build/ before setup.sh installed the test
# tools; configuring again lets CMake find them (rpmbuild: CPack's .rpm).
if [ -f build/CMakeCache.txt ]; then cmake -S . -B build >/dev/null || exit 1; fi
bash scripts/build.sh normal || exit 1
ctest --test-dir build --output-on-failure --timeout 900
status=$?

bash scripts/lint.sh build
lint_status=$?

bash scripts/tsan.sh '^integration\.(test_transport|test_escalation|test_bastion)$'
tsan_status=$?

if [ $asan_status -ne 0 ]; then
  echo "unit tests under AddressSanitizer/UBSan failed (see above)" >&2
  exit $asan_status
fi
if [ $lint_status -ne 0 ]; then
  echo "lint found problems (see above: clang-format, shellcheck, clang-tidy)" >&2
  [ $status -ne 0 ] || status=$lint_status
fi
if [ $tsan_status -ne 0 ]; then
  echo "integration tests under ThreadSanitizer failed (see above, build-tsan/tsan-logs/)" >&2
  [ $status -ne 0 ] || status=$tsan_status
fi
exit $status
