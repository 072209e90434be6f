#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/cli.h"

namespace fleetreap {
namespace {

CliResult Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fleetreap");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CliMergeTest, ReportsAndOutputFlags) {
  CliResult r = Parse({"merge", "a.json", "--json", "-", "b.json", "--junit", "j.xml",
                       "--summary-md", "s.md", "--failed-hosts", "f.txt", "--color",
                       "never", "c.json"});
  ASSERT_EQ(r.action, CliAction::kMerge) << r.error;
  EXPECT_EQ(r.options.merge_reports, (std::vector<std::string>{"a.json", "b.json", "c.json"}));
  EXPECT_EQ(r.options.json, "-");
  EXPECT_EQ(r.options.junit, "j.xml");
  EXPECT_EQ(r.options.summary_md, "s.md");
  EXPECT_EQ(r.options.failed_hosts, "f.txt");
  EXPECT_EQ(r.options.color, "never");
  EXPECT_FALSE(r.options.local);
  EXPECT_TRUE(r.options.hosts_file.empty());
}

TEST(CliMergeTest, Help) {
  EXPECT_EQ(Parse({"merge", "--help"}).action, CliAction::kHelp);
  EXPECT_NE(MergeHelpText().find("Usage: fleetreap merge [options] REPORT.json..."),
            std::string::npos);
  EXPECT_NE(HelpText().find("fleetreap merge"), std::string::npos);
}

TEST(CliMergeTest, UsageErrors) {
  struct Case {
    std::vector<const char*> args;
    std::string error;
  };
  const Case cases[] = {
      {{"merge"}, "merge: no reports given (fleetreap merge REPORT.json...)"},
      {{"merge", "--json", "m.json"}, "merge: no reports given (fleetreap merge REPORT.json...)"},
      {{"merge", "--hosts", "inv.yaml", "a.json"},
       "merge: unrecognised option '--hosts'"},
      {{"merge", "a.json", "--color", "pink"},
       "merge: --color: expected auto, always or never, got \"pink\""},
      {{"merge", "a.json", "--json", "-", "--junit", "-"},
       "merge: only one of --json, --junit, --summary-md, --failed-hosts can be '-'"},
  };
  for (const Case& c : cases) {
    CliResult r = Parse(c.args);
    EXPECT_EQ(r.action, CliAction::kUsageError);
    EXPECT_EQ(r.error, c.error);
  }
}

// "merge" is a subcommand only as the first word.
TEST(CliMergeTest, MergeLaterIsAStrayWord) {
  CliResult r = Parse({"--local", "merge"});
  EXPECT_EQ(r.action, CliAction::kUsageError);
}

}  // namespace
}  // namespace fleetreap
