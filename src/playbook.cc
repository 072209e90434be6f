#include "fleetreap/playbook.h"

namespace fleetreap {

Status ParsePlaybook(const std::string&, const std::string& source,
                     Playbook* playbook) {
  playbook->source = source;
  return Status::Ok();
}

Status LoadPlaybookFile(const std::string& path, Playbook* playbook) {
  return ParsePlaybook("", path, playbook);
}

const Playbook& DefaultPlaybook() {
  static const Playbook playbook;
  return playbook;
}

}  // namespace fleetreap
