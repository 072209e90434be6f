// The playbook loader: walks a playbook document's keys into a Playbook
// (playbook.h); the readers of single values are in playbook_reader.h.
#include "fleetreap/escalation/playbook.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fleetreap/base/closest_name.h"
#include "fleetreap/base/text.h"
#include "playbook_reader.h"

namespace fleetreap {

extern const char kDefaultPlaybookYaml[];

namespace {

using playbook_internal::CheckShmPattern;
using playbook_internal::CheckUnitPattern;
using playbook_internal::PlaybookError;
using playbook_internal::PlaybookReader;
using playbook_internal::ReadReadyPolicy;

// Reads all of "path" into "*text"; returns 0, or the errno that stopped it
// (a directory is EISDIR, not an empty playbook).
int ReadWholeFile(const std::string& path, std::string* text) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buffer[8192];
  int error = 0;
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text->append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      error = errno;
      break;
    }
  }
  close(fd);
  return error;
}

// "unknown setting "kil_grace" (did you mean kill_grace?)", or with the
// settings listed when none is near.
std::string UnknownSetting(const std::string& name) {
  static const std::vector<std::string> kSettings = {"name",
                                                     "description",
                                                     "steps",
                                                     "units",
                                                     "unit_stop_timeout",
                                                     "term_grace",
                                                     "kill_grace",
                                                     "poll_interval",
                                                     "settle",
                                                     "settle_if_clean",
                                                     "respawn_wait",
                                                     "max_rounds",
                                                     "shm_patterns",
                                                     "shm_under_scope",
                                                     "threshold_mib",
                                                     "protect",
                                                     "daemon_allowance_mib",
                                                     "reset_stops_daemons",
                                                     "ready"};
  const std::string best = ClosestName(name, kSettings);
  if (!best.empty()) return "unknown setting \"" + name + "\" (did you mean " + best + "?)";
  return "unknown setting \"" + name + "\"; settings are " + Join(kSettings, ", ");
}

void ApplyKey(const PlaybookReader& reader, const YAML::Node& key, const YAML::Node& value,
              Playbook* p) {
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
    ReadReadyPolicy(reader, key, value, &p->ready);
  } else {
    reader.Fail(key, UnknownSetting(name));
  }
}

}  // namespace

Status ParsePlaybook(const std::string& yaml, const std::string& source, Playbook* playbook) {
  PlaybookReader reader(source);
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

std::vector<std::string> ShippedPlaybookDirs(const std::string& exe) {
  const size_t slash = exe.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  const std::string up = exe.substr(0, slash) + "/..";
  return {up + "/share/fleetreap/playbooks", up + "/playbooks"};
}

Status LoadPlaybookFile(const std::string& path, Playbook* playbook) {
  std::string text;
  const int error = ReadWholeFile(path, &text);
  std::string searched;  // the folders a bare name was looked up in
  if (error == ENOENT && path.find('/') == std::string::npos) {
    char exe[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    searched = "this folder";
    for (const std::string& dir : ShippedPlaybookDirs(n > 0 ? std::string(exe, n) : "")) {
      text.clear();
      if (ReadWholeFile(dir + "/" + path, &text) == 0) {
        return ParsePlaybook(text, dir + "/" + path, playbook);
      }
      searched += ", " + dir;
    }
  }
  if (error != 0) {
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": cannot read the playbook file: " + std::strerror(error) +
                             (searched.empty() ? "" : " (looked in " + searched + ")"));
  }
  return ParsePlaybook(text, path, playbook);
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
