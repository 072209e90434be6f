#include "fleetreap/base/status.h"

namespace fleetreap {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone: return "none";
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kInvalidInput: return "invalid_input";
    case ErrorKind::kParse: return "parse";
    case ErrorKind::kDns: return "dns";
    case ErrorKind::kRefused: return "refused";
    case ErrorKind::kConnectTimeout: return "connect_timeout";
    case ErrorKind::kBannerTimeout: return "banner_timeout";
    case ErrorKind::kKex: return "kex";
    case ErrorKind::kHostKey: return "host_key";
    case ErrorKind::kAuth: return "auth";
    case ErrorKind::kSudo: return "sudo";
    case ErrorKind::kCommandTimeout: return "command_timeout";
    case ErrorKind::kConnectionLost: return "connection_lost";
    case ErrorKind::kCommandFailed: return "command_failed";
    case ErrorKind::kHostTimeout: return "host_timeout";
    case ErrorKind::kInterrupted: return "interrupted";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

bool IsUnreachable(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kDns:
    case ErrorKind::kRefused:
    case ErrorKind::kConnectTimeout:
    case ErrorKind::kBannerTimeout:
    case ErrorKind::kKex:
    case ErrorKind::kHostKey:
    case ErrorKind::kAuth:
    case ErrorKind::kConnectionLost: return true;
    default: return false;
  }
}

bool IsTransient(ErrorKind kind) {
  return kind == ErrorKind::kRefused || kind == ErrorKind::kConnectTimeout ||
         kind == ErrorKind::kBannerTimeout || kind == ErrorKind::kConnectionLost;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(ErrorKindName(kind_)) + ": " + message_;
}

}  // namespace fleetreap
