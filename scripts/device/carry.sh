#!/usr/bin/env bash
# Prepares build/device/: a stripped fleetreap and the shared libraries it
# needs beyond glibc (libssh, Boost.Program_options, yaml-cpp, spdlog, fmt and
# their own), so the binary built here runs on the device machine:
#   FLEETREAP=build/device/fleetreap LD_LIBRARY_PATH=build/device/lib
# Carry build/device with the device run (under 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf build/device && mkdir -p build/device/lib
strip -o build/device/fleetreap build/fleetreap
ldd build/fleetreap | awk '/=> \//{print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    *) cp -L "$lib" build/device/lib/ ;;
  esac
done
du -sh build/device
