// Playbook: the escalation ladder and its settings for one run, loaded from
// YAML (playbooks/*.yaml) or from the built-in default. Plain value type.
// (Placeholder; the escalation issue fills in the settings.)
#pragma once

#include <string>

#include "fleetreap/status.h"

namespace fleetreap {

struct Playbook {
  std::string name = "default";
  std::string source;   // file path, or "<built-in default>"
};

/// Parses "yaml" read from "source" (a path, for error messages).
Status ParsePlaybook(const std::string& yaml, const std::string& source,
                     Playbook* playbook);

/// Reads and parses the playbook at "path".
Status LoadPlaybookFile(const std::string& path, Playbook* playbook);

/// The built-in default playbook (the text of playbooks/default.yaml).
const Playbook& DefaultPlaybook();

}  // namespace fleetreap
