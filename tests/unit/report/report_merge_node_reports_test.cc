// CheckNodeReports (report_merge.h) without --expect: a --local report
// named after a host holds that host alone; merged reports, SSH runs' reports
// and files not named as hosts are not a node's own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/report/report_merge.h"

namespace fleetreap {
namespace {

HostReport Reached(const std::string& name, const std::string& address, int port) {
  HostReport host;
  host.name = name;
  host.address = address;
  host.port = port;
  return host;
}

// What `fleetreap --local --json` writes on each of "names" (several: a
// merge of them, or a forged report).
RunReport Local(const std::vector<std::string>& names) {
  RunReport report;
  for (const std::string& name : names) report.hosts.push_back(Reached(name, "localhost", 0));
  return report;
}

RunReport OverSsh(const std::vector<std::string>& names) {
  RunReport report;
  report.host_key_policy = "strict";
  for (const std::string& name : names) report.hosts.push_back(Reached(name, name, 22));
  return report;
}

TEST(ReportMergeNodeReportsTest, ALocalReportNamedAfterAHostHoldsThatHostAlone) {
  struct Row {
    const char* file;
    RunReport report;
    std::string error;  // "" when the report may be merged
  };
  const std::string alone = " must hold that host alone; it holds ";
  const Row rows[] = {
      {"nodes/node03.json", Local({"node03"}), ""},
      {"nodes/node03.json.journal", Local({"node03"}), ""},
      {"node03.rack2.json", Local({"node03.rack2"}), ""},
      {"nodes/node03.json", Local({"node03", "node04"}),
       "nodes/node03.json: the report of node node03" + alone + "node03, node04"},
      {"nodes/node03.json", Local({"node04"}),
       "nodes/node03.json: the report of node node03" + alone + "node04"},
      {"node03-dry.json", Local({"node03"}),
       "node03-dry.json: the report of node node03-dry" + alone + "node03"},
      // A merged report, named after none of its hosts, merges again.
      {"fleet.json", Local({"node01", "node02"}), ""},
      // A file name no host has: not a node's report.
      {"fleet (2).json", Local({"node04"}), ""},
      {"-node03.json", Local({"node04"}), ""},
      {"node03.txt", Local({"node04"}), ""},
      // A run over SSH names its hosts by the inventory: any file name.
      {"node03.json", OverSsh({"node04"}), ""},
      {"node03.json", OverSsh({"node03", "node04"}), ""},
  };
  for (const Row& row : rows) {
    const Status status = CheckNodeReports({{row.file, row.report}}, {});
    if (row.error.empty()) {
      EXPECT_TRUE(status.ok()) << row.file << ": " << status.ToString();
      continue;
    }
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput) << row.file;
    EXPECT_EQ(status.message(), row.error);
  }
}

TEST(ReportMergeNodeReportsTest, AnExpectedNodesFileIsItsOwnReportWhoeverWroteIt) {
  const Status status = CheckNodeReports({{"node03.json", OverSsh({"node04"})}}, {"node03"});
  EXPECT_EQ(status.message(),
            "node03.json: the report of node node03 must hold that host alone; it holds node04");
}

TEST(ReportMergeNodeReportsTest, HostShapedNames) {
  for (const char* name : {"gpu07", "gpu07.rack2.example.com", "node-03", "a_b", "7"}) {
    EXPECT_TRUE(IsHostShapedName(name)) << name;
  }
  for (const char* name : {"", "-gpu07", ".gpu07", "fleet (2)", "gpu07/x", "ñode"}) {
    EXPECT_FALSE(IsHostShapedName(name)) << name;
  }
  EXPECT_FALSE(IsHostShapedName(std::string(254, 'a')));
}

}  // namespace
}  // namespace fleetreap
