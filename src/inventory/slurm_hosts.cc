#include "fleetreap/inventory/slurm_hosts.h"

#include <set>
#include <sstream>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

constexpr char kPrefix[] = "slurm:";
constexpr size_t kQuoteCap = 120;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

bool IsName(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

}  // namespace

bool IsSlurmHostsSpec(const std::string& hosts) { return hosts.rfind(kPrefix, 0) == 0; }

std::string SinfoCommand(const std::string& partition) {
  return "sinfo --noheader --Node --partition=" + ShellQuote(partition) + " --format=%N";
}

Status ParseSinfoNodes(const std::string& spec, const std::string& text,
                       std::vector<std::string>* nodes) {
  nodes->clear();
  std::set<std::string> seen;
  for (const std::string& raw : SplitLines(text)) {
    std::string line = Trim(raw);
    if (line.empty()) continue;
    if (!IsName(line)) {
      return Status::Error(
          ErrorKind::kInvalidInput,
          spec + ": sinfo printed " + QuoteForMessage(line, kQuoteCap) + ", not a node name");
    }
    if (seen.insert(line).second) nodes->push_back(line);
  }
  if (nodes->empty()) {
    return Status::Error(ErrorKind::kInvalidInput, spec + ": sinfo lists no node in partition " +
                                                       spec.substr(sizeof kPrefix - 1));
  }
  return Status::Ok();
}

Status SlurmPartition(const std::string& spec, std::string* partition) {
  *partition = spec.substr(sizeof kPrefix - 1);
  if (!IsName(*partition) || *partition == "all" || *partition == "ungrouped") {
    return Status::Error(ErrorKind::kUsage, "--hosts " + spec +
                                                ": expected slurm:PARTITION (letters, digits, "
                                                "'-', '_', '.')");
  }
  return Status::Ok();
}

Inventory SlurmInventory(const std::string& spec, const std::vector<std::string>& nodes) {
  const std::string partition = spec.substr(sizeof kPrefix - 1);
  Inventory inventory;
  inventory.set_path(spec);
  inventory.AddGroup("all");
  inventory.AddGroup("ungrouped");
  Inventory::GroupLinks members;
  for (const std::string& node : nodes) {
    Host host;
    host.name = node;
    host.address = node;
    host.groups = {"all", partition};
    host.source = spec;
    size_t index = inventory.AddHost(std::move(host));
    inventory.AddToGroup("all", index);
    inventory.AddToGroup(partition, index);
    members.hosts.push_back(index);
  }
  inventory.SetGroupLinks("all", {{"ungrouped", partition}, {}});
  inventory.SetGroupLinks("ungrouped", {});
  inventory.SetGroupLinks(partition, members);
  return inventory;
}

}  // namespace fleetreap
