#!/usr/bin/env bash
# Runs the integration suite with fleetreap built under ThreadSanitizer
# (build-tsan/), for the fan-out's threads. scripts/test.sh runs it on two
# suites only (the whole suite is a full extra build and the suite again). A race
# report makes the run fail: TSan exits 66 and the test that ran fleetreap
# sees it; every report is also kept under build-tsan/tsan-logs/.
# Usage: scripts/tsan.sh [ctest -R regex]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Only the C++ (fleetreap) is built and linked with -fsanitize=thread (CMake
# links C++ targets with CMAKE_CXX_FLAGS). The simulated hosts' C tools stay
# plain: linked with libtsan, every worker and daemon keeps a deleted
# /tmp/tsan.rodata.PID mapped (about 512 KiB), and a container daemon's /tmp
# lies on its host's 4 MiB /run, which 12 of them filled (gpu_operator_node).
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="" >/dev/null
cmake --build build-tsan -j"$(nproc)" --target fleetreap sim_tools
rm -rf build-tsan/tsan-logs && mkdir -p build-tsan/tsan-logs
export TSAN_OPTIONS="log_path=$PWD/build-tsan/tsan-logs/log second_deadlock_stack=1"
status=0
ctest --test-dir build-tsan -L integration ${1:+-R "$1"} --output-on-failure || status=$?
reports=$(cat build-tsan/tsan-logs/log.* 2>/dev/null | grep -c '^SUMMARY: ThreadSanitizer' || true)
echo "ThreadSanitizer reports: $reports (build-tsan/tsan-logs/)"
[ "$reports" = 0 ] || status=1
exit "$status"
