// Fuzzes the inventory loaders (YAML and INI, and through them
// host ranges and variable resolution), folding the names back, and --limit
// selection with a pattern taken from the input's second part.
#include <cstddef>
#include <cstdint>

#include "fleetreap/inventory/host_pattern.h"
#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/inventory/inventory.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  for (int plain = 0; plain < 2; ++plain) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status status = plain ? ParseIniInventory(input.out, "fuzz.ini", &inventory, &warnings)
                          : ParseYamlInventory(input.out, "fuzz.yaml", &inventory, &warnings);
    FuzzCheck(status.ok() || status.kind() == ErrorKind::kInvalidInput);
    if (!status.ok()) continue;
    std::vector<std::string> names;
    for (const Host& host : inventory.hosts()) {
      FuzzCheck(host.port >= 1 && host.port <= 65535);
      names.push_back(host.name);
    }
    FoldHostNames(names);
    std::vector<Host> selected;
    status = SelectHosts(inventory, input.err, &selected);
    FuzzCheck(status.ok() || status.kind() == ErrorKind::kUsage ||
              status.kind() == ErrorKind::kInvalidInput);
    FuzzCheck(selected.size() <= inventory.hosts().size());
  }
  std::vector<std::string> expanded;
  ExpandHostPattern(input.err, &expanded);
  return 0;
}
