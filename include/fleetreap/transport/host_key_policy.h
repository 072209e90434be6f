// HostKeyPolicy: how SshTransport judges a host key that the known_hosts
// files do not vouch for (--host-key-policy). A value type; thread-safe.
#pragma once

namespace fleetreap {

enum class HostKeyPolicy { kStrict, kAcceptNew, kOff };

/// "strict", "accept-new" or "off", as --host-key-policy spells it.
inline const char* HostKeyPolicyName(HostKeyPolicy policy) {
  switch (policy) {
    case HostKeyPolicy::kAcceptNew: return "accept-new";
    case HostKeyPolicy::kOff: return "off";
    case HostKeyPolicy::kStrict: break;
  }
  return "strict";
}

}  // namespace fleetreap
