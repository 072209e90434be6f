#include "fleetreap/report/report_merge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_table.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// One node's --local report: the fleet fixture's host "index" alone.
RunReport NodeReport(const RunReport& fleet, size_t index) {
  RunReport node = fleet;
  node.hosts = {fleet.hosts[index]};
  node.not_started.clear();
  node.host_key_policy.clear();
  return node;
}

std::vector<SourcedReport> SplitPerNode(const RunReport& fleet) {
  std::vector<SourcedReport> inputs;
  for (size_t i = 0; i < fleet.hosts.size(); ++i) {
    inputs.push_back({fleet.hosts[i].name + ".json", NodeReport(fleet, i)});
  }
  return inputs;
}

// The per-node reports of a fleet merge back into the fleet's report:
// same table, same JSON (but for the SSH-only host key policy), same exit.
TEST(ReportMergeTest, PerNodeReportsMergeIntoTheFleetReport) {
  for (const RunReport& fleet : {testing_fixture::MixedFleet(), testing_fixture::DryRunFleet(),
                                 testing_fixture::DriverSignalsFleet()}) {
    RunReport expected = fleet;
    expected.host_key_policy.clear();
    expected.not_started.clear();
    RunReport merged;
    Status status = MergeReports(SplitPerNode(fleet), &merged);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(RenderJson(merged), RenderJson(expected));
    EXPECT_EQ(RenderTable(merged, TableStyle()), RenderTable(expected, TableStyle()));
    EXPECT_EQ(ExitCodeFor(merged), ExitCodeFor(expected));
  }
}

TEST(ReportMergeTest, JoinsRunFields) {
  RunReport a = NodeReport(testing_fixture::MixedFleet(), 0);
  RunReport b = NodeReport(testing_fixture::MixedFleet(), 1);
  RunReport c = NodeReport(testing_fixture::MixedFleet(), 2);
  b.start_time = a.start_time - milliseconds(1000);
  b.duration = milliseconds(500);
  c.start_time = a.start_time + milliseconds(20000);
  c.duration = milliseconds(3000);
  c.tool_version = "0.2.0";
  b.playbook = "inspect";
  c.interrupted = true;
  c.not_started = {"gpu99"};
  a.scope.slurm_job = "41";
  a.scope.gpus = std::vector<int>{0, 1};
  a.scope.source = "slurm";
  b.scope = a.scope;
  c.scope = a.scope;
  c.scope.gpus = std::vector<int>{2};
  RunReport merged;
  ASSERT_TRUE(MergeReports({{"a", a}, {"b", b}, {"c", c}}, &merged).ok());
  EXPECT_EQ(merged.start_time, b.start_time);
  EXPECT_EQ(merged.duration, milliseconds(1000 + 20000 + 3000));
  EXPECT_EQ(merged.tool_version, "0.1.0, 0.2.0");
  EXPECT_EQ(merged.playbook, "default, inspect");
  EXPECT_TRUE(merged.interrupted);
  EXPECT_EQ(merged.not_started, std::vector<std::string>{"gpu99"});
  ASSERT_EQ(merged.hosts.size(), 3u);
  EXPECT_EQ(merged.hosts[2].name, c.hosts[0].name);
  EXPECT_EQ(merged.scope.slurm_job, "41");
  EXPECT_FALSE(merged.scope.gpus.has_value());
  EXPECT_EQ(merged.scope.source, "slurm");
  EXPECT_EQ(ExitCodeFor(merged), 2);  // a host never started
}

TEST(ReportMergeTest, ScopesThatShareNothingLeaveAWholeHostScope) {
  RunReport a = NodeReport(testing_fixture::MixedFleet(), 0);
  RunReport b = NodeReport(testing_fixture::MixedFleet(), 1);
  a.scope.gpus = std::vector<int>{0};
  a.scope.source = "flags";
  RunReport merged;
  ASSERT_TRUE(MergeReports({{"a", a}, {"b", b}}, &merged).ok());
  EXPECT_TRUE(merged.scope.empty());
  EXPECT_EQ(merged.scope.source, "");
}

TEST(ReportMergeTest, Errors) {
  RunReport fleet = testing_fixture::MixedFleet();
  RunReport a = NodeReport(fleet, 0);
  RunReport dry = NodeReport(fleet, 1);
  dry.dry_run = true;
  RunReport twice = a;
  twice.hosts.push_back(a.hosts[0]);
  RunReport a_not_started = NodeReport(fleet, 1);
  a_not_started.not_started = {a.hosts[0].name};
  struct Case {
    std::vector<SourcedReport> inputs;
    ErrorKind kind;
    std::string error;
  };
  const Case cases[] = {
      {{}, ErrorKind::kUsage, "merge: no reports given"},
      {{{"a.json", a}, {"b.json", a}},
       ErrorKind::kInvalidInput,
       "b.json: host gpu01 is also in a.json"},
      {{{"a.json", a}, {"a.json", a}},
       ErrorKind::kInvalidInput,
       "a.json: host gpu01 is also in a.json"},
      {{{"a.json", twice}}, ErrorKind::kInvalidInput, "a.json: host gpu01 appears twice"},
      {{{"a.json", a}, {"c.json", a_not_started}},
       ErrorKind::kInvalidInput,
       "c.json: host gpu01 is also in a.json"},
      {{{"a.json", a}, {"d.json", dry}},
       ErrorKind::kInvalidInput,
       "d.json: a dry run cannot be merged with a real run (d.json is a dry run, a.json is "
       "not)"},
      {{{"d.json", dry}, {"a.json", a}},
       ErrorKind::kInvalidInput,
       "a.json: a dry run cannot be merged with a real run (d.json is a dry run, a.json is "
       "not)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    RunReport merged;
    Status status = MergeReports(c.inputs, &merged);
    EXPECT_EQ(status.kind(), c.kind);
    EXPECT_EQ(status.message(), c.error);
  }
}

std::vector<std::string> NoReportNames(const RunReport& report) {
  std::vector<std::string> names;
  for (const MissingReport& host : report.no_report) {
    EXPECT_EQ(host.why, kNoReportAmongMerged);
    names.push_back(host.name);
  }
  return names;
}

TEST(ReportMergeTest, ExpectedHostsWithoutAReportSaySo) {
  RunReport merged;
  ASSERT_TRUE(MergeReports({{"a", NodeReport(testing_fixture::MixedFleet(), 0)}}, &merged).ok());
  merged.not_started = {"gpu20"};
  ExpectHosts({"gpu01", "gpu30", "gpu20", "gpu21", "gpu30"}, &merged);
  EXPECT_EQ(merged.not_started, (std::vector<std::string>{"gpu20"}));
  EXPECT_EQ(NoReportNames(merged), (std::vector<std::string>{"gpu30", "gpu21"}));
  EXPECT_EQ(ExitCodeFor(merged), 2);
  // The table's label says what is missing, not "not started  interrupted".
  std::vector<OutcomeGroup> groups = GroupOutcomes(merged);
  auto missing = std::find_if(groups.begin(), groups.end(), [](const OutcomeGroup& g) {
    return g.kind == OutcomeKind::kNoReport;
  });
  ASSERT_NE(missing, groups.end());
  EXPECT_STREQ(OutcomeKindLabel(missing->kind), "no report");
  EXPECT_EQ(missing->detail, "no report among the merged files");
  EXPECT_EQ(missing->names, (std::vector<std::string>{"gpu30", "gpu21"}));
}

class ReportMergeFilesTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-merge-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& path : written_) std::remove(path.c_str());
    rmdir(dir_.c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    written_.push_back(path);
    return path;
  }
  std::string dir_;
  std::vector<std::string> written_;
};

TEST_F(ReportMergeFilesTest, MergesFilesInOrder) {
  RunReport fleet = testing_fixture::MixedFleet();
  std::string a = Write("a.json", RenderJson(NodeReport(fleet, 3)));
  std::string b = Write("b.json", RenderJson(NodeReport(fleet, 0)));
  RunReport merged;
  Status status = MergeReportFiles({a, b}, &merged);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(merged.hosts.size(), 2u);
  EXPECT_EQ(merged.hosts[0].name, fleet.hosts[3].name);
  EXPECT_EQ(merged.hosts[1].name, fleet.hosts[0].name);
}

TEST_F(ReportMergeFilesTest, ExpectedHostsFile) {
  RunReport merged;
  ASSERT_TRUE(MergeReports({{"a", NodeReport(testing_fixture::MixedFleet(), 0)}}, &merged).ok());
  std::string path = Write("hosts.txt", "gpu01\n\n# spares\ngpu02  # rack b\n gpu03\n");
  ASSERT_TRUE(ExpectHostsFromFile(path, &merged).ok());
  EXPECT_EQ(NoReportNames(merged), (std::vector<std::string>{"gpu02", "gpu03"}));
  Status status = ExpectHostsFromFile(dir_ + "/absent.txt", &merged);
  EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(status.message(), dir_ + "/absent.txt: cannot read: No such file or directory");
}

TEST_F(ReportMergeFilesTest, ErrorsNameTheFile) {
  RunReport fleet = testing_fixture::MixedFleet();
  std::string good = Write("good.json", RenderJson(NodeReport(fleet, 0)));
  std::string text = Write("table.json", "gpu01 clean\n");
  std::string v3 = Write("v3.json", R"({"schema_version": 3})");
  std::string missing = dir_ + "/absent.json";
  struct Case {
    std::vector<std::string> paths;
    std::string error;
  };
  const Case cases[] = {
      {{good, text}, text + ": not JSON (parse error at byte 1)"},
      {{v3, good}, v3 + ": schema_version 3 is not supported (this fleetreap reads 1 to 2)"},
      {{good, missing}, missing + ": cannot read: No such file or directory"},
      {{good, good}, good + ": host gpu01 is also in " + good},
  };
  for (const Case& c : cases) {
    RunReport merged;
    Status status = MergeReportFiles(c.paths, &merged);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(status.message(), c.error);
  }
}

TEST_F(ReportMergeFilesTest, AReportNamedAfterAnExpectedNodeHoldsThatNodeAlone) {
  RunReport fleet = testing_fixture::MixedFleet();
  const std::string first = fleet.hosts[0].name, second = fleet.hosts[1].name;
  RunReport two = NodeReport(fleet, 0);
  two.hosts.push_back(fleet.hosts[1]);
  std::string own = Write(first + ".json", RenderJson(NodeReport(fleet, 0)));
  std::string forged = Write("nodes-" + first + ".json", RenderJson(two));
  std::string both = Write(second + ".json", RenderJson(two));
  std::string other = Write(first + ".json.journal", RenderJson(NodeReport(fleet, 1)));
  RunReport merged;
  EXPECT_TRUE(MergeReportFiles({own}, &merged, {first, second}).ok());
  // Not named after an expected node: a report of any hosts, as before.
  EXPECT_TRUE(MergeReportFiles({forged}, &merged, {first, second}).ok());
  EXPECT_TRUE(MergeReportFiles({both}, &merged).ok());
  Status status = MergeReportFiles({own, both}, &merged, {first, second});
  EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(status.message(), both + ": the report of node " + second +
                                  " must hold that host alone; it holds " + first + ", " + second);
  status = MergeReportFiles({other}, &merged, {first});
  EXPECT_EQ(status.message(), other + ": the report of node " + first +
                                  " must hold that host alone; it holds " + second);
}

TEST(ReportMergeTest, NodeOfReportFile) {
  EXPECT_EQ(NodeOfReportFile("nodes/gpu07.json"), "gpu07");
  EXPECT_EQ(NodeOfReportFile("gpu07.rack2.example.com.json"), "gpu07.rack2.example.com");
  EXPECT_EQ(NodeOfReportFile("/var/tmp/gpu07.json.journal"), "gpu07");
  EXPECT_EQ(NodeOfReportFile("gpu07.xml"), "");
  EXPECT_EQ(NodeOfReportFile(".json"), "");
}

}  // namespace
}  // namespace fleetreap
