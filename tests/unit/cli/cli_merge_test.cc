#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/cli/cli.h"

namespace fleetreap {
namespace {

CliResult Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fleetreap");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CliMergeTest, ReportsAndOutputFlags) {
  CliResult r =
      Parse({"merge", "a.json", "--json", "-", "b.json", "--junit", "j.xml", "--summary-md", "s.md",
             "--failed-hosts", "f.txt", "--color", "never", "c.json", "--expect", "nodes.txt"});
  ASSERT_EQ(r.action, CliAction::kMerge) << r.error;
  EXPECT_EQ(r.options.merge_reports, (std::vector<std::string>{"a.json", "b.json", "c.json"}));
  EXPECT_EQ(r.options.json, "-");
  EXPECT_EQ(r.options.junit, "j.xml");
  EXPECT_EQ(r.options.summary_md, "s.md");
  EXPECT_EQ(r.options.failed_hosts, "f.txt");
  EXPECT_EQ(r.options.color, "never");
  EXPECT_EQ(r.options.merge_expect, "nodes.txt");
  EXPECT_FALSE(r.options.local);
  EXPECT_TRUE(r.options.hosts.empty());
}

// --drain-reasons is a report flag of a run and of merge alike.
TEST(CliMergeTest, DrainReasonsOnRunAndMerge) {
  CliResult merge = Parse({"merge", "--drain-reasons", "-", "a.json"});
  ASSERT_EQ(merge.action, CliAction::kMerge) << merge.error;
  EXPECT_EQ(merge.options.drain_reasons, "-");
  CliResult run = Parse({"--local", "--drain-reasons", "r.txt", "--json", "-"});
  ASSERT_EQ(run.action, CliAction::kRun) << run.error;
  EXPECT_EQ(run.options.drain_reasons, "r.txt");
  EXPECT_EQ(
      Parse({"--local", "--drain-reasons", "-", "--json", "-"}).error,
      "only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons, --metrics, "
      "--html, --journal can be '-'");
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
      {{"merge", "--hosts", "inv.yaml", "a.json"}, "merge: unrecognised option '--hosts'"},
      {{"merge", "a.json", "--color", "pink"},
       "merge: --color: expected auto, always or never, got \"pink\""},
      {{"merge", "a.json", "--json", "-", "--junit", "-"},
       "merge: only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons, "
       "--metrics, --html, --journal can be '-'"},
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
