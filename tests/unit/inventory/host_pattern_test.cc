#include "fleetreap/inventory/host_pattern.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

TEST(HostPatternTest, ExpandsAnsibleAndClusterShellRanges) {
  struct Row {
    const char* pattern;
    const char* names;
  };
  const Row rows[] = {
      {"login1", "login1"},
      {"gpu[01:04]", "gpu01 gpu02 gpu03 gpu04"},
      {"gpu[1:4]", "gpu1 gpu2 gpu3 gpu4"},
      {"gpu[08:11]", "gpu08 gpu09 gpu10 gpu11"},
      {"gpu[1:7:3]", "gpu1 gpu4 gpu7"},
      {"gpu[:2]", "gpu0 gpu1 gpu2"},
      {"rack[a:c]-node[1:2]",
       "racka-node1 racka-node2 rackb-node1 rackb-node2 rackc-node1 rackc-node2"},
      {"db-[X:Z].lab", "db-X.lab db-Y.lab db-Z.lab"},
      {"gpu[01-04]", "gpu01 gpu02 gpu03 gpu04"},
      {"gpu[01-03,09]", "gpu01 gpu02 gpu03 gpu09"},
      {"gpu[7,1-2]", "gpu7 gpu1 gpu2"},
      {"gpu[1-9/4]", "gpu1 gpu5 gpu9"},
      {"gpu[098-101]", "gpu098 gpu099 gpu100 gpu101"},
      {"n[1-2]x[1-2]", "n1x1 n1x2 n2x1 n2x2"},
      {"[1-2]gpu", "1gpu 2gpu"},
      {"gpu[5]", "gpu5"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> names;
    Status s = ExpandHostPattern(row.pattern, &names);
    ASSERT_TRUE(s.ok()) << row.pattern << ": " << s.message();
    EXPECT_EQ(Join(names, " "), row.names) << row.pattern;
  }
}

TEST(HostPatternTest, RejectsMalformedRangesWithExactText) {
  struct Row {
    const char* pattern;
    const char* error;
  };
  const Row rows[] = {
      {"gpu[09:01]", "host range \"gpu[09:01]\": start 09 is after end 01"},
      {"gpu[01:", "host range \"gpu[01:\": missing \"]\""},
      {"gpu01]", "host range \"gpu01]\": \"]\" without \"[\""},
      {"gpu[[1:2]]", "host range \"gpu[[1:2]]\": \"[\" inside a range"},
      {"gpu[]", "host range \"gpu[]\": empty range"},
      {"gpu[1:]", "host range \"gpu[1:]\": missing end in \"1:\""},
      {"gpu[1:2:3:4]", "host range \"gpu[1:2:3:4]\": \"1:2:3:4\" is not a range"},
      {"gpu[a:5]",
       "host range \"gpu[a:5]\": \"a:5\" is neither a number range nor a letter "
       "range"},
      {"gpu[f:a]", "host range \"gpu[f:a]\": start f is after end a"},
      {"gpu[1:5:0]", "host range \"gpu[1:5:0]\": step \"0\" must be a positive number"},
      {"gpu[1-x]", "host range \"gpu[1-x]\": \"1-x\" is not a number range"},
      {"gpu[1,,2]", "host range \"gpu[1,,2]\": empty range"},
      {"gpu[5-2]", "host range \"gpu[5-2]\": start 5 is after end 2"},
      {"g[0-9999][0-9999]", "host range \"g[0-9999][0-9999]\": expands to more than 100000 names"},
      {"g[0-99999999999]", "host range \"g[0-99999999999]\": expands to more than 100000 names"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> names = {"kept"};
    Status s = ExpandHostPattern(row.pattern, &names);
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidInput) << row.pattern;
    EXPECT_EQ(s.message(), row.error);
    EXPECT_EQ(Join(names, " "), "kept") << row.pattern;
  }
}

TEST(HostPatternTest, FoldsNamesForDisplay) {
  struct Row {
    std::vector<std::string> names;
    const char* folded;
  };
  const Row rows[] = {
      {{}, ""},
      {{"login1"}, "login1"},
      {{"gpu01", "gpu02", "gpu03"}, "gpu[01-03]"},
      {{"login1", "gpu14", "gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06", "gpu07", "gpu08",
        "gpu09", "gpu10", "gpu11", "gpu12"},
       "gpu[01-12,14],login1"},
      {{"gpu3", "gpu1", "gpu3", "gpu2"}, "gpu[1-3]"},
      {{"gpu9", "gpu10", "gpu11"}, "gpu[9-11]"},
      {{"gpu1", "gpu01", "gpu02"}, "gpu[01-02],gpu1"},
      {{"gpu098", "gpu099", "gpu100"}, "gpu[098-100]"},
      {{"rack1-node1", "rack1-node2", "rack2-node1", "rack2-node2"}, "rack[1-2]-node[1-2]"},
      {{"rack1-node1", "rack1-node2", "rack2-node1"}, "rack1-node[1-2],rack2-node1"},
      {{"node1.dc2.lab", "node2.dc2.lab", "node1.dc3.lab"}, "node1.dc[2-3].lab,node2.dc2.lab"},
      {{"bastion", "alpha", "gpu2"}, "alpha,bastion,gpu2"},
      {{"gpu1", "gpu3", "gpu5"}, "gpu[1,3,5]"},
      {{"a1b", "a2b", "a1c"}, "a[1-2]b,a1c"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(FoldHostNames(row.names), row.folded) << Join(row.names, " ");
  }
}

TEST(HostPatternTest, FoldThenExpandGivesTheNamesBack) {
  const char* patterns[] = {"gpu[01:64]", "rack[1:4]-node[01:16]", "gpu[1-9,11,13-20]",
                            "gpu[0098-0102],login[1-2]"};
  for (const char* pattern : patterns) {
    std::vector<std::string> names;
    for (const std::string& part : SplitHostList(pattern)) {
      ASSERT_TRUE(ExpandHostPattern(part, &names).ok()) << part;
    }
    std::vector<std::string> again;
    for (const std::string& part : SplitHostList(FoldHostNames(names))) {
      ASSERT_TRUE(ExpandHostPattern(part, &again).ok()) << part;
    }
    std::sort(names.begin(), names.end());
    std::sort(again.begin(), again.end());
    EXPECT_EQ(again, names) << pattern;
  }
}

TEST(HostPatternTest, SplitsListsOutsideBrackets) {
  EXPECT_EQ(SplitHostList("gpu[01-04,09],login1"),
            (std::vector<std::string>{"gpu[01-04,09]", "login1"}));
  EXPECT_EQ(SplitHostList("a,,b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(HasHostRange("gpu[1:2]"));
  EXPECT_FALSE(HasHostRange("gpu1"));
}

}  // namespace
}  // namespace fleetreap
