#include "fleetreap/escalation/playbook.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "fleetreap/base/duration.h"
#include "fleetreap/escalation/unit_properties.h"

namespace fleetreap {

extern const char kDefaultPlaybookYaml[];

namespace {

constexpr Step kAllSteps[] = {Step::kInspect, Step::kStopUnits, Step::kTerm,   Step::kKill,
                              Step::kRescan,  Step::kCleanShm,  Step::kVerify, Step::kResetGhosts};

// Thrown only inside this file and caught in ParsePlaybook.
struct PlaybookError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const {
    throw PlaybookError{Where(at) + ": " + what};
  }

  std::string Where(const YAML::Node& at) const {
    YAML::Mark mark = at.Mark();
    if (mark.is_null()) return source_;
    return source_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }

  std::string Scalar(const YAML::Node& key, const YAML::Node& value) const {
    if (!value.IsScalar()) Fail(key, Key(key) + " must be a single value");
    return value.Scalar();
  }

  std::chrono::milliseconds Duration(const YAML::Node& key, const YAML::Node& value) const {
    std::string text = Scalar(key, value);
    std::chrono::milliseconds out{0};
    if (!ParseDuration(text, &out)) {
      Fail(key, Key(key) + " must be a duration like \"10s\", got \"" + text + "\"");
    }
    return out;
  }

  int64_t Integer(const YAML::Node& key, const YAML::Node& value, int64_t min, int64_t max) const {
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

  std::vector<std::string> List(const YAML::Node& key, const YAML::Node& value) const {
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

  static std::string Key(const YAML::Node& key) { return key.Scalar(); }

 private:
  std::string source_;
};

bool StepFromName(const std::string& name, Step* step) {
  for (Step candidate : kAllSteps) {
    if (name == StepName(candidate)) {
      *step = candidate;
      return true;
    }
  }
  return false;
}

void CheckShmPattern(const Reader& reader, const YAML::Node& at, const std::string& pattern) {
  // Two literal characters at least, so that no pattern can sweep /dev/shm.
  size_t literal = pattern.find_first_of("*?[");
  if (pattern.find('/') != std::string::npos || pattern == "." || pattern == ".." || literal < 2) {
    reader.Fail(at, "shm_patterns entry \"" + pattern +
                        "\" must be a file name glob starting with at least "
                        "two literal characters");
  }
}

// A unit pattern names units to stop: never one that sshd, systemd, the
// container runtime or a protected daemon runs in, and never a sweep.
void CheckUnitPattern(const Reader& reader, const YAML::Node& at, const std::string& unit) {
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

CheckMode Mode(const Reader& reader, const YAML::Node& key, const YAML::Node& value) {
  std::string text = reader.Scalar(key, value);
  if (text == "off" || text == "false") return CheckMode::kOff;
  if (text == "warn") return CheckMode::kWarn;
  if (text == "block" || text == "true") return CheckMode::kBlock;
  reader.Fail(key,
              "ready." + Reader::Key(key) + " must be off, warn or block, got \"" + text + "\"");
}

std::vector<int> XidList(const Reader& reader, const YAML::Node& key, const YAML::Node& value) {
  std::vector<int> codes;
  if (value.IsNull()) return codes;
  if (!value.IsSequence()) reader.Fail(key, "ready." + Reader::Key(key) + " must be a list");
  for (const YAML::Node& item : value) {
    int code = static_cast<int>(reader.Integer(key, item, 1, 999));
    if (std::count(codes.begin(), codes.end(), code)) {
      reader.Fail(item,
                  "ready." + Reader::Key(key) + " lists Xid " + std::to_string(code) + " twice");
    }
    codes.push_back(code);
  }
  return codes;
}

// The "ready:" section (escalation/readiness.h, docs/readiness.md).
void ApplyReady(const Reader& reader, const YAML::Node& key, const YAML::Node& value,
                ReadyPolicy* ready) {
  if (value.IsScalar()) {
    if (value.Scalar() != "off" && value.Scalar() != "false") {
      reader.Fail(key, "ready must be a mapping of checks, or off");
    }
    for (CheckMode* mode :
         {&ready->ecc, &ready->remapped_rows, &ready->retired_pages, &ready->fabric,
          &ready->persistence, &ready->pcie_link, &ready->xid, &ready->gpu_count}) {
      *mode = CheckMode::kOff;
    }
    return;
  }
  if (!value.IsMap()) reader.Fail(key, "ready must be a mapping of checks, or off");
  const std::map<std::string, CheckMode*> modes = {{"ecc", &ready->ecc},
                                                   {"remapped_rows", &ready->remapped_rows},
                                                   {"retired_pages", &ready->retired_pages},
                                                   {"fabric", &ready->fabric},
                                                   {"persistence", &ready->persistence},
                                                   {"pcie_link", &ready->pcie_link},
                                                   {"xid", &ready->xid},
                                                   {"gpu_count", &ready->gpu_count},
                                                   {"xid_unlisted", &ready->xid_unlisted}};
  YAML::Node fatal_key;
  for (const auto& entry : value) {
    const YAML::Node& k = entry.first;
    const YAML::Node& v = entry.second;
    if (!k.IsScalar()) reader.Fail(k, "keys must be names");
    const std::string& name = k.Scalar();
    auto mode = modes.find(name);
    if (mode != modes.end()) {
      *mode->second = Mode(reader, k, v);
    } else if (name == "ecc_volatile_max") {
      ready->ecc_volatile_max = reader.Integer(k, v, 0, 1 << 30);
    } else if (name == "ecc_aggregate_max") {
      ready->ecc_aggregate_max = reader.Integer(k, v, 0, 1 << 30);
    } else if (name == "retired_pages_max") {
      ready->retired_pages_max = reader.Integer(k, v, 0, 1 << 20);
    } else if (name == "pcie_gen") {
      std::string text = reader.Scalar(k, v);
      if (text != "true" && text != "false") {
        reader.Fail(k, "ready.pcie_gen must be true or false, got \"" + text + "\"");
      }
      ready->pcie_gen = text == "true";
    } else if (name == "xid_fatal") {
      ready->xid_fatal = XidList(reader, k, v);
      fatal_key = k;
    } else if (name == "xid_informational") {
      ready->xid_informational = XidList(reader, k, v);
    } else {
      reader.Fail(k, "unknown ready setting \"" + name +
                         "\"; they are ecc, remapped_rows, retired_pages, fabric, persistence, "
                         "pcie_link, xid, gpu_count, ecc_volatile_max, ecc_aggregate_max, "
                         "retired_pages_max, pcie_gen, xid_fatal, xid_informational, "
                         "xid_unlisted");
    }
  }
  for (int code : ready->xid_fatal) {
    if (std::count(ready->xid_informational.begin(), ready->xid_informational.end(), code)) {
      reader.Fail(fatal_key.IsDefined() ? fatal_key : key,
                  "Xid " + std::to_string(code) + " is in both xid_fatal and xid_informational");
    }
  }
}

void ApplyKey(const Reader& reader, const YAML::Node& key, const YAML::Node& value, Playbook* p) {
  const std::string& name = key.Scalar();
  if (name == "name") {
    p->name = reader.Scalar(key, value);
  } else if (name == "description") {
    p->description = reader.Scalar(key, value);
  } else if (name == "steps") {
    if (!value.IsSequence()) reader.Fail(key, "steps must be a list");
    std::vector<Step> steps = {Step::kInspect};
    for (const YAML::Node& item : value) {
      Step step;
      std::string text = item.IsScalar() ? item.Scalar() : "";
      if (!StepFromName(text, &step)) {
        reader.Fail(item, "unknown step \"" + text +
                              "\"; steps are inspect, stop_units, term, kill, "
                              "rescan, clean_shm, verify, reset_ghosts");
      }
      if (std::count(steps.begin(), steps.end(), step) && step != Step::kInspect) {
        reader.Fail(item, "step \"" + text + "\" is listed twice");
      }
      if (!std::count(steps.begin(), steps.end(), step)) steps.push_back(step);
    }
    std::sort(steps.begin(), steps.end());
    p->steps = steps;
  } else if (name == "units") {
    p->units = reader.List(key, value);
    size_t i = 0;
    for (const YAML::Node& item : value) CheckUnitPattern(reader, item, p->units[i++]);
  } else if (name == "unit_stop_timeout") {
    p->unit_stop_timeout = reader.Duration(key, value);
  } else if (name == "term_grace") {
    p->term_grace = reader.Duration(key, value);
  } else if (name == "kill_grace") {
    p->kill_grace = reader.Duration(key, value);
  } else if (name == "poll_interval") {
    p->poll_interval = reader.Duration(key, value);
    if (p->poll_interval.count() < 10 || p->poll_interval.count() > 5000) {
      reader.Fail(key, "poll_interval must be from 10ms to 5s");
    }
  } else if (name == "settle") {
    p->settle = reader.Duration(key, value);
  } else if (name == "settle_if_clean") {
    p->settle_if_clean = reader.Duration(key, value);
  } else if (name == "respawn_wait") {
    p->respawn_wait = reader.Duration(key, value);
  } else if (name == "max_rounds") {
    p->max_rounds = static_cast<int>(reader.Integer(key, value, 1, 20));
  } else if (name == "shm_patterns") {
    p->shm_patterns = reader.List(key, value);
    for (const std::string& pattern : p->shm_patterns) {
      CheckShmPattern(reader, key, pattern);
    }
  } else if (name == "shm_under_scope") {
    std::string text = reader.Scalar(key, value);
    if (text != "owned" && text != "none") {
      reader.Fail(key, "shm_under_scope must be owned or none, got \"" + text + "\"");
    }
    p->shm_under_scope = text == "owned" ? ShmUnderScope::kOwned : ShmUnderScope::kNone;
  } else if (name == "threshold_mib") {
    p->threshold_mib = reader.Integer(key, value, 0, 1 << 24);
  } else if (name == "protect") {
    p->protect = reader.List(key, value);
  } else if (name == "daemon_allowance_mib") {
    if (!value.IsMap()) reader.Fail(key, "daemon_allowance_mib must map daemon names to MiB");
    p->daemon_allowance_mib.clear();
    for (const auto& entry : value) {
      if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
        reader.Fail(entry.first, "daemon_allowance_mib keys must be daemon names");
      }
      p->daemon_allowance_mib[entry.first.Scalar()] =
          reader.Integer(entry.first, entry.second, 0, 1 << 20);
    }
  } else if (name == "reset_stops_daemons") {
    std::string text = reader.Scalar(key, value);
    if (text != "true" && text != "false") {
      reader.Fail(key, "reset_stops_daemons must be true or false, got \"" + text + "\"");
    }
    p->reset_stops_daemons = text == "true";
  } else if (name == "ready") {
    ApplyReady(reader, key, value, &p->ready);
  } else {
    reader.Fail(key, "unknown setting \"" + name + "\"");
  }
}

}  // namespace

const char* StepName(Step step) {
  switch (step) {
    case Step::kInspect: return "inspect";
    case Step::kStopUnits: return "stop_units";
    case Step::kTerm: return "term";
    case Step::kKill: return "kill";
    case Step::kRescan: return "rescan";
    case Step::kCleanShm: return "clean_shm";
    case Step::kVerify: return "verify";
    case Step::kResetGhosts: return "reset_ghosts";
  }
  return "inspect";
}

bool Playbook::Runs(Step step) const {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

Status ParsePlaybook(const std::string& yaml, const std::string& source, Playbook* playbook) {
  Reader reader(source);
  Playbook parsed;
  parsed.source = source;
  try {
    YAML::Node root = YAML::Load(yaml);
    const YAML::Node& croot = root;
    if (croot.IsNull()) {
      return Status::Error(ErrorKind::kInvalidInput, source + ": empty playbook");
    }
    if (!croot.IsMap()) reader.Fail(croot, "a playbook must be a mapping");
    bool has_steps = false;
    YAML::Node units_key;
    for (const auto& entry : croot) {
      if (!entry.first.IsScalar()) reader.Fail(entry.first, "keys must be names");
      if (entry.first.Scalar() == "steps") has_steps = true;
      if (entry.first.Scalar() == "units") units_key = entry.first;
      ApplyKey(reader, entry.first, entry.second, &parsed);
    }
    // No steps: the default ladder, not an inspect that changes nothing.
    if (!has_steps) parsed.steps = DefaultPlaybookSteps();
    if (!parsed.units.empty() && !parsed.Runs(Step::kStopUnits)) {
      reader.Fail(units_key,
                  "units are listed but the steps have no stop_units; add "
                  "stop_units to steps, or remove units");
    }
    if (parsed.reset_stops_daemons && !parsed.Runs(Step::kResetGhosts)) {
      return Status::Error(ErrorKind::kInvalidInput,
                           source + ": reset_stops_daemons needs step reset_ghosts");
    }
    if (parsed.Runs(Step::kResetGhosts) && !parsed.Runs(Step::kVerify)) {
      return Status::Error(ErrorKind::kInvalidInput,
                           source + ": step reset_ghosts needs step verify");
    }
  } catch (const PlaybookError& e) {
    return Status::Error(ErrorKind::kInvalidInput, e.message);
  } catch (const YAML::Exception& e) {
    std::string where = source;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::Error(ErrorKind::kInvalidInput, where + ": " + e.msg);
  }
  *playbook = std::move(parsed);
  return Status::Ok();
}

Status LoadPlaybookFile(const std::string& path, Playbook* playbook) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": cannot read the playbook file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParsePlaybook(text.str(), path, playbook);
}

std::vector<Step> DefaultPlaybookSteps() {
  return {Step::kInspect, Step::kStopUnits, Step::kTerm,  Step::kKill,
          Step::kRescan,  Step::kCleanShm,  Step::kVerify};
}

const char* DefaultPlaybookText() { return kDefaultPlaybookYaml; }

const Playbook& DefaultPlaybook() {
  static const Playbook playbook = [] {
    Playbook parsed;
    Status status = ParsePlaybook(kDefaultPlaybookYaml, "<built-in default>", &parsed);
    // The text is tested in playbook_test.cc; a broken build fails there.
    if (!status.ok()) parsed.description = status.ToString();
    return parsed;
  }();
  return playbook;
}

}  // namespace fleetreap
