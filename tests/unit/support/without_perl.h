// WithoutPerl: a remote step's script as a host without perl runs it (the
// holder walk and the details by the shell path: find, stat, grep, sort),
// for the tests that prove both paths. Pure.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace fleetreap {

/// "script" with every "perl found" check (PL=1) made false.
inline std::string WithoutPerl(std::string script) {
  const std::string check = "command -v perl >/dev/null 2>&1 && PL=1";
  size_t n = 0;
  for (size_t at = script.find(check); at != std::string::npos; at = script.find(check, at)) {
    script.replace(at, check.size(), "PL=");
    ++n;
  }
  EXPECT_GT(n, 0u) << "no perl check in the script";
  return script;
}

}  // namespace fleetreap
