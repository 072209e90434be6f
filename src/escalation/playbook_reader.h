// PlaybookReader: reads one playbook YAML value (a scalar, a duration, a
// bounded whole number, a list of names) and fails with text that names the
// source, line and column: `playbooks/x.yaml:7:3: term_grace must be ...`.
// Internal to the playbook loader (playbook.cc, playbook_ready.cc): a failure
// is a PlaybookError thrown here and caught in ParsePlaybook, where it
// becomes a Status; it never leaves that loader. Used by one thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/escalation/readiness.h"

namespace fleetreap {
namespace playbook_internal {

/// The one error of the loader's readers, caught only in ParsePlaybook.
struct PlaybookError {
  std::string message;
};

class PlaybookReader {
 public:
  explicit PlaybookReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const;
  /// "source:line:column", or "source" where the node has no mark.
  std::string Where(const YAML::Node& at) const;

  std::string Scalar(const YAML::Node& key, const YAML::Node& value) const;
  std::chrono::milliseconds Duration(const YAML::Node& key, const YAML::Node& value) const;
  /// A whole number from "min" to "max".
  int64_t Integer(const YAML::Node& key, const YAML::Node& value, int64_t min, int64_t max) const;
  /// A list of non-empty strings; null is the empty list.
  std::vector<std::string> List(const YAML::Node& key, const YAML::Node& value) const;

  static std::string Key(const YAML::Node& key) { return key.Scalar(); }

 private:
  std::string source_;
};

/// Fails unless "pattern" is a file name glob with two literal characters
/// at least, so that no shm_patterns entry can sweep /dev/shm.
void CheckShmPattern(const PlaybookReader& reader, const YAML::Node& at,
                     const std::string& pattern);

/// Fails unless "unit" names units to stop: never one that sshd, systemd,
/// the container runtime or a protected daemon runs in, and never a sweep.
void CheckUnitPattern(const PlaybookReader& reader, const YAML::Node& at, const std::string& unit);

/// Reads the "ready:" section (escalation/readiness.h, docs/readiness.md)
/// into "*ready": a mapping of checks and limits, or off.
void ReadReadyPolicy(const PlaybookReader& reader, const YAML::Node& key, const YAML::Node& value,
                     ReadyPolicy* ready);

}  // namespace playbook_internal
}  // namespace fleetreap
