// Fuzzes the playbook loader: any text either loads into settings the ladder
// can run with, or fails with an invalid-input error naming file and line.
#include <cstddef>
#include <cstdint>

#include "fleetreap/escalation/playbook.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  Playbook playbook;
  Status status = ParsePlaybook(input.out, "fuzz.yaml", &playbook);
  FuzzCheck(status.ok() || status.kind() == ErrorKind::kInvalidInput);
  if (!status.ok()) {
    FuzzCheck(status.message().rfind("fuzz.yaml", 0) == 0);
  } else {
    FuzzCheck(playbook.term_grace.count() >= 0 && playbook.kill_grace.count() >= 0);
    FuzzCheck(playbook.max_rounds >= 1);
  }
  return 0;
}
