#!/usr/bin/env bash
# Configures and builds fleetreap. Usage: scripts/build.sh [normal|asan]
#   normal: build/      the fleetreap binary, unit tests, the simulated fleet's tools
#   asan:   build-asan/ the same with AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-normal}
jobs=$(nproc)
case "$kind" in
  normal) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DFLEETREAP_SANITIZE=ON) ;;
  *) echo "usage: $0 [normal|asan]" >&2; exit 64 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
fi
shift || true
cmake --build "$dir" -j"$jobs" "$@"
