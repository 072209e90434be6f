// FuzzInput: splits a fuzzer's bytes into what a remote command returns, so
// that a raw captured output is itself a valid seed. Layout:
//   stdout [ '\0' stderr [ '\0' exit-code byte ] ]
// Without a third part the exit code is 0. Header-only; used by the fuzz
// targets alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace fleetreap {

struct FuzzInput {
  std::string out;
  std::string err;
  int exit_code = 0;
};

inline FuzzInput SplitFuzzInput(const uint8_t* data, size_t size) {
  FuzzInput input;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  size_t first = bytes.find('\0');
  input.out = bytes.substr(0, first);
  if (first == std::string::npos) return input;
  size_t second = bytes.find('\0', first + 1);
  input.err =
      bytes.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  if (second != std::string::npos && second + 1 < bytes.size()) {
    static const int kCodes[] = {0, 1, 2, 4, 6, 9, 15, 18, 127, 255};
    input.exit_code = kCodes[static_cast<uint8_t>(bytes[second + 1]) % 10];
  }
  return input;
}

// Aborts (a finding for libFuzzer) when an invariant does not hold.
inline void FuzzCheck(bool condition) {
  if (!condition) std::abort();
}

}  // namespace fleetreap
