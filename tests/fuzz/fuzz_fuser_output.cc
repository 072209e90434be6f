// Fuzzes ParseFuserOutput.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fleetreap/fuser_output.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  FuserResult result;
  Status status = ParseFuserOutput(input.out, input.err, input.exit_code, &result);
  FuzzCheck(status.ok() || result.pids.empty());
  FuzzCheck(std::is_sorted(result.pids.begin(), result.pids.end()));
  for (int pid : result.pids) FuzzCheck(pid > 0);
  return 0;
}
