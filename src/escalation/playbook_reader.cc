#include "playbook_reader.h"

#include <fnmatch.h>

#include <sstream>

#include "fleetreap/base/duration.h"
#include "fleetreap/escalation/unit_properties.h"

namespace fleetreap {
namespace playbook_internal {

void PlaybookReader::Fail(const YAML::Node& at, const std::string& what) const {
  throw PlaybookError{Where(at) + ": " + what};
}

std::string PlaybookReader::Where(const YAML::Node& at) const {
  YAML::Mark mark = at.Mark();
  if (mark.is_null()) return source_;
  return source_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string PlaybookReader::Scalar(const YAML::Node& key, const YAML::Node& value) const {
  if (!value.IsScalar()) Fail(key, Key(key) + " must be a single value");
  return value.Scalar();
}

std::chrono::milliseconds PlaybookReader::Duration(const YAML::Node& key,
                                                   const YAML::Node& value) const {
  std::string text = Scalar(key, value);
  std::chrono::milliseconds out{0};
  if (!ParseDuration(text, &out)) {
    Fail(key, Key(key) + " must be a duration like \"10s\", got \"" + text + "\"");
  }
  return out;
}

int64_t PlaybookReader::Integer(const YAML::Node& key, const YAML::Node& value, int64_t min,
                                int64_t max) const {
  std::string text = Scalar(key, value);
  std::istringstream in(text);
  int64_t out = 0;
  char rest = 0;
  if (!(in >> out) || (in >> rest) || out < min || out > max) {
    Fail(key, Key(key) + " must be a whole number from " + std::to_string(min) + " to " +
                  std::to_string(max) + ", got \"" + text + "\"");
  }
  return out;
}

std::vector<std::string> PlaybookReader::List(const YAML::Node& key,
                                              const YAML::Node& value) const {
  std::vector<std::string> out;
  if (value.IsNull()) return out;
  if (!value.IsSequence()) Fail(key, Key(key) + " must be a list");
  for (const YAML::Node& item : value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      Fail(item, Key(key) + " entries must be non-empty strings");
    }
    out.push_back(item.Scalar());
  }
  return out;
}

void CheckShmPattern(const PlaybookReader& reader, const YAML::Node& at,
                     const std::string& pattern) {
  // Two literal characters at least, so that no pattern can sweep /dev/shm.
  size_t literal = pattern.find_first_of("*?[");
  if (pattern.find('/') != std::string::npos || pattern == "." || pattern == ".." || literal < 2) {
    reader.Fail(at, "shm_patterns entry \"" + pattern +
                        "\" must be a file name glob starting with at least "
                        "two literal characters");
  }
}

void CheckUnitPattern(const PlaybookReader& reader, const YAML::Node& at, const std::string& unit) {
  if (unit[0] == '-' || unit.find('/') != std::string::npos) {
    reader.Fail(at, "units entry \"" + unit + "\" is not a unit name");
  }
  size_t literal = unit.find_first_of("*?[");
  if (literal < 2) {
    reader.Fail(at, "units entry \"" + unit + "\" must start with at least two literal characters");
  }
  std::string reason = ProtectedUnitReason(unit);
  std::string match = unit;
  for (const std::string& name : ProtectedUnitNames()) {
    if (!reason.empty()) break;
    if (fnmatch(unit.c_str(), name.c_str(), 0) == 0) {
      reason = ProtectedUnitReason(name);
      match = name;
    }
  }
  if (!reason.empty()) {
    reader.Fail(at, "units entry \"" + unit + "\" would stop " +
                        (match == unit ? "" : match + ", ") + reason +
                        "; fleetreap never stops it");
  }
}

}  // namespace playbook_internal
}  // namespace fleetreap
