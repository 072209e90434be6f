// The remote steps' perl programs (the holder walk PLW and the details PLD,
// src/remote/perl_walk.cc) compile under "use strict": they leave it out to
// spare a host the module's load, so this test holds them to it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "support/scratch_dir.h"
#include "support/script_runner.h"

namespace fleetreap {
namespace {

// The text of NAME='...' in "script" (the programs hold no single quote).
std::string Program(const std::string& script, const std::string& name) {
  const std::string start = "\n" + name + "='";
  size_t at = script.find(start);
  if (at == std::string::npos) return "";
  at += start.size();
  return script.substr(at, script.find('\'', at) - at);
}

TEST(PerlProgramsTest, CompileUnderStrict) {
  if (std::system("command -v perl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no perl here";
  ScratchDir scratch{"perl-strict", {}};
  const std::string script = ScanScript(Request(), HostPaths());
  for (const std::string name : {"PLW", "PLD"}) {
    const std::string program = Program(script, name);
    ASSERT_GT(program.size(), 100u) << name;
    EXPECT_EQ(program.find("use strict"), std::string::npos) << name << ": loaded on every run";
    const std::string file = scratch.path() + "/" + name + ".pl";
    std::ofstream(file) << program;
    const std::string cmd = "perl -Mstrict -c '" + file + "' 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[512];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(pipe), 0) << name << ": " << out;
  }
}

}  // namespace
}  // namespace fleetreap
