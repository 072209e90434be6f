// PCI bus ids as the kernel and nvidia-smi write them ("0000:3b:00" in an Xid
// line, "00000000:3B:00.0" from nvidia-smi): whether two name the same
// device. Pure functions; thread-safe.
#pragma once

#include <string>

namespace fleetreap {

/// Whether "a" and "b" name the same PCI domain, bus and device: case, the
/// domain's width and a one-digit function (".0") aside. False when either
/// is not a bus id (three hex fields of at most 8 digits, separated by ':').
bool SamePciDevice(const std::string& a, const std::string& b);

}  // namespace fleetreap
