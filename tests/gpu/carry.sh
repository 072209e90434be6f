#!/usr/bin/env bash
# Prepares build/device/: a stripped fleetreap and the shared libraries it
# needs beyond glibc (libssh, Boost.Program_options, yaml-cpp, spdlog, fmt and
# their own), so the binary built here runs on the device machine, through
# FLEETREAP=build/device/run-fleetreap. The device tool sends the session's
# own checkout: copy build/device and the scripts into an ignored folder of
# it (build-*/ is ignored) and carry that (13 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf build/device && mkdir -p build/device/lib
strip -o build/device/fleetreap build/fleetreap
ldd build/fleetreap | awk '/=> \//{print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    *) cp -L "$lib" build/device/lib/ ;;
  esac
done
# run-fleetreap: the binary with its libraries (LD_LIBRARY_PATH for it
# alone, so python3 and nvidia-smi keep the machine's own).
# shellcheck disable=SC2016  # the wrapper expands them, not this script
printf '#!/bin/sh\nd=$(dirname "$0")\nLD_LIBRARY_PATH=$d/lib exec "$d/fleetreap" "$@"\n' \
  > build/device/run-fleetreap
chmod +x build/device/run-fleetreap
du -sh build/device
