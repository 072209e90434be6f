#include "fleetreap/inventory/ansible_pattern.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

TEST(AnsiblePatternTest, SplitsAsSplitHostPatternDoes) {
  struct Row {
    const char* pattern;
    const char* terms;
  };
  const Row rows[] = {
      {"a,b[1], c[2:3] , d", "a|b[1]|c[2:3]|d"},
      {"rack1:&h100:!gpu07", "rack1|&h100|!gpu07"},
      {"gpu[01:04]", "gpu[01:04]"},
      {"fe80::1", "fe80::1"},
      {"[fe80::1]:22", "[fe80::1]:22"},
      {"gpu01:22", "gpu01:22"},
      {"a:b,c", "a:b|c"},
      {"gpu[01-04,09]", "gpu[01-04|09]"},
      {"g*:~x[1:2]", "g*|~x[1:2]"},
      {"a b:c", "a|b|c"},
      {" , ", ""},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(Join(SplitAnsiblePattern(row.pattern), "|"), row.terms) << row.pattern;
  }
}

TEST(AnsiblePatternTest, GlobsAsPythonFnmatchDoes) {
  struct Row {
    const char* glob;
    const char* name;
    bool match;
  };
  const Row rows[] = {
      {"gpu*", "gpu01", true},        {"gpu*", "gpu", true},
      {"gpu0?", "gpu01", true},       {"gpu0?", "gpu010", false},
      {"gpu0[1-3]", "gpu02", true},   {"gpu0[1-3]", "gpu04", false},
      {"gpu0[!1-3]", "gpu04", true},  {"gpu[01:04]", "gpu:", true},
      {"gpu[01:04]", "gpu01", false}, {"g[", "g[", true},
      {"g[]a]", "g]", true},          {"g[z-a]x", "gax", false},
      {"*.lab", "a.lab", true},       {"G*", "gpu", false},
      {"g\\*", "g\\x", true},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(AnsibleGlobMatch(row.glob, row.name), row.match) << row.glob << " " << row.name;
  }
}

TEST(AnsiblePatternTest, SubscriptsAsAnsibleAppliesThem) {
  struct Row {
    const char* pattern;
    const char* expression;
    size_t count;
    bool ok;
    std::vector<size_t> positions;
  };
  const Row rows[] = {
      {"g[0]", "g", 3, true, {0}},
      {"g[-1]", "g", 3, true, {2}},
      {"g[1:2]", "g", 5, true, {1, 2}},
      {"g[2:]", "g", 4, true, {2, 3}},
      {"g[1-2]", "g", 5, true, {1, 2}},
      {"g[1:9]", "g", 3, true, {1, 2}},
      {"g[2:0]", "g", 3, true, {2}},
      {"g[3]", "g", 3, false, {}},
      {"g[-4]", "g", 3, false, {}},
      {"g[4:]", "g", 3, true, {}},
      {"~g[0]", "~g[0]", 3, true, {0, 1, 2}},
      {"g[a:b]", "g[a:b]", 3, true, {0, 1, 2}},
  };
  for (const Row& row : rows) {
    std::string expression;
    Subscript sub = SplitSubscript(row.pattern, &expression);
    EXPECT_EQ(expression, row.expression) << row.pattern;
    std::vector<size_t> positions;
    if (!sub.present) {
      for (size_t i = 0; i < row.count; ++i) positions.push_back(i);
      EXPECT_EQ(positions, row.positions) << row.pattern;
      continue;
    }
    EXPECT_EQ(ApplySubscript(sub, row.count, &positions), row.ok) << row.pattern;
    EXPECT_EQ(positions, row.positions) << row.pattern;
  }
}

TEST(AnsiblePatternTest, NamesPythonOnlyRegexSyntax) {
  EXPECT_EQ(PythonRegexDifference("gpu0[1-4]"), "");
  EXPECT_EQ(PythonRegexDifference("(gpu|cpu)-(?:a|b)\\d+$"), "");
  EXPECT_EQ(PythonRegexDifference("(?P<n>gpu)"), "(?P");
  EXPECT_EQ(PythonRegexDifference("gpu\\Z"), "\\Z");
  EXPECT_EQ(PythonRegexDifference("(?i)gpu"), "(?i");
  EXPECT_EQ(PythonRegexDifference("gpu*+"), "*+");
}

}  // namespace
}  // namespace fleetreap
