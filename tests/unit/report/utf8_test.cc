#include "fleetreap/report/utf8.h"

#include <gtest/gtest.h>

#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

TEST(Utf8Test, ReplacesEachBadByte) {
  const std::string r = "\xEF\xBF\xBD";
  struct Row {
    std::string in;
    std::string out;
  };
  const Row rows[] = {
      {"plain", "plain"},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
      {"a\xFFz", "a" + r + "z"},
      {"\xC0\xAF", r + r},                  // overlong '/'
      {"\xED\xA0\x80", r + r + r},          // a surrogate
      {"\xF4\x90\x80\x80", r + r + r + r},  // past U+10FFFF
      {"cut \xE2\x82", "cut " + r + r},     // truncated at the end
      {"\x80x", r + "x"},                   // a stray continuation byte
  };
  for (const Row& row : rows) EXPECT_EQ(ReplaceInvalidUtf8(row.in), row.out) << row.in;
}

TEST(Utf8Test, JunitAndMarkdownStayValidWhateverBytesNamesHold) {
  RunReport run = testing_fixture::MixedFleet();
  // gpu13's unkillable holder: its comm appears in JUnit's failure text.
  run.hosts[12].holders.back().comm = "bad\xFF\xC0name";
  run.hosts[12].error_message = "pid 5007 (bad\xFF) stuck";
  for (const std::string& doc : {RenderJunit(run), RenderMarkdown(run)}) {
    EXPECT_EQ(ReplaceInvalidUtf8(doc), doc);
    EXPECT_NE(doc.find("bad\xEF\xBF\xBD"), std::string::npos);
  }
}

}  // namespace
}  // namespace fleetreap
