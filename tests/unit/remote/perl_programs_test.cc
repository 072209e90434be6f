// The remote steps' perl programs (the holder walk PLW and the details PLD,
// with the subs they take on, PDS and PKS: src/remote/perl_*.cc) compile
// under "use strict": they leave it out to spare a host the module's load,
// so this test holds them to it. Each is one single-quoted shell word.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "support/scratch_dir.h"
#include "support/script_runner.h"

namespace fleetreap {
namespace {

// The text of NAME='...' in "script"; "" unless its quote ends the line (a
// single quote inside a program would end the shell's word early).
std::string Program(const std::string& script, const std::string& name) {
  const std::string start = "\n" + name + "='";
  size_t at = script.find(start);
  if (at == std::string::npos) return "";
  at += start.size();
  const size_t end = script.find('\'', at);
  if (end == std::string::npos || script.compare(end, 2, "'\n") != 0) return "";
  return script.substr(at, end - at);
}

TEST(PerlProgramsTest, CompileUnderStrict) {
  if (std::system("command -v perl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no perl here";
  ScratchDir scratch{"perl-strict", {}};
  const std::string script = ScanScript(Request(), HostPaths());
  // As the host runs them: the walk with the details' sub or the kill's, the
  // details' program with its sub, the kill's own perl with its.
  for (const auto& [name, parts] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"PLW", {"PLW", "PDS", "PKS"}}, {"PLD", {"PLD", "PDS"}}, {"PKS", {"PKS"}}}) {
    std::string program;
    for (const std::string& part : parts) {
      const std::string text = Program(script, part);
      ASSERT_GT(text.size(), 100u) << part;
      program += text;
    }
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
