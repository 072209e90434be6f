#include "fleetreap/inventory/python_literal.h"

#include <gtest/gtest.h>

#include <string>

namespace fleetreap {
namespace {

using Kind = PythonLiteral::Kind;

TEST(PythonLiteralTest, ReadsWhatLiteralEvalReads) {
  struct Row {
    const char* source;
    Kind kind;
    const char* text;
  };
  const Row rows[] = {
      {"2222", Kind::kInt, "2222"},
      {"  22 # ssh", Kind::kInt, "22"},
      {"-0", Kind::kInt, "0"},
      {"0x1F", Kind::kInt, "31"},
      {"0o17", Kind::kInt, "15"},
      {"0b101", Kind::kInt, "5"},
      {"1_000", Kind::kInt, "1000"},
      {"000", Kind::kInt, "0"},
      {"1.5", Kind::kFloat, "1.5"},
      {"1e3", Kind::kFloat, "1000.0"},
      {"1e16", Kind::kFloat, "1e+16"},
      {".5", Kind::kFloat, "0.5"},
      {"-2.", Kind::kFloat, "-2.0"},
      {"0.0001", Kind::kFloat, "0.0001"},
      {"0.00001", Kind::kFloat, "1e-05"},
      {"2j", Kind::kComplex, "2j"},
      {"True", Kind::kBool, "True"},
      {"False", Kind::kBool, "False"},
      {"None", Kind::kNone, "None"},
      {"'ops'", Kind::kString, "ops"},
      {"\"a\\tb\"", Kind::kString, "a\tb"},
      {"r'a\\tb'", Kind::kString, "a\\tb"},
      {"'a' \"b\"", Kind::kString, "ab"},
      {"u'x'", Kind::kString, "x"},
      {"b'x'", Kind::kBytes, "x"},
      {"'\\x41\\u00e9'", Kind::kString, "A\xc3\xa9"},
      {"'''tri'''", Kind::kString, "tri"},
      {"[1, 'a']", Kind::kList, "[1, 'a']"},
      {"(1,)", Kind::kTuple, "(1,)"},
      {"(1)", Kind::kInt, "1"},
      {"{'a': 1}", Kind::kDict, "{'a': 1}"},
      {"{1, 2}", Kind::kSet, "{1, 2}"},
      {"[\"it's\"]", Kind::kList, "[\"it's\"]"},
  };
  for (const Row& row : rows) {
    PythonLiteral value;
    ASSERT_TRUE(ParsePythonLiteral(row.source, &value)) << row.source;
    EXPECT_EQ(value.kind, row.kind) << row.source;
    EXPECT_EQ(value.text, row.text) << row.source;
  }
}

TEST(PythonLiteralTest, LeavesWhatLiteralEvalRefuses) {
  const char* rows[] = {
      "ops",
      "true",
      "yes",
      "10.0.0.1",
      "01",
      "1_",
      "0x",
      "1abc",
      "'open",
      "f'x'",
      "ur'x'",
      "b'\xc3\xa9'",
      "1 2",
      "[1,",
      "{'a': 1, 2}",
      "--1",
      "1+2j",
      "a.b",
      "'\\N{BULLET}'",
      "{[1]: 2}",
      "-o ProxyCommand=\"ssh -W %h:%p\"",
      "",
  };
  for (const char* source : rows) {
    PythonLiteral value;
    EXPECT_FALSE(ParsePythonLiteral(source, &value)) << source;
  }
}

TEST(PythonLiteralTest, ContainersKeepTheirItems) {
  PythonLiteral value;
  ASSERT_TRUE(ParsePythonLiteral("['dcgm-exporter', '/opt/agent', 3]", &value));
  ASSERT_EQ(value.items.size(), 3u);
  EXPECT_EQ(value.items[0].text, "dcgm-exporter");
  EXPECT_EQ(value.items[2].kind, Kind::kInt);
}

}  // namespace
}  // namespace fleetreap
