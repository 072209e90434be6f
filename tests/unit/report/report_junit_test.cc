#include "fleetreap/report/report_junit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ExpectGolden;

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(ReportJunitTest, MixedFleetGolden) {
  ExpectGolden("report.xml", RenderJunit(testing_fixture::MixedFleet()));
}

TEST(ReportJunitTest, PiecesAreOneTestCaseEach) {
  RunReport run = testing_fixture::MixedFleet();
  run.not_started = {"gpu17"};
  std::vector<std::string> pieces;
  RenderJunitPieces(run, [&pieces](const std::string& piece) { pieces.push_back(piece); });
  ASSERT_EQ(pieces.size(), run.hosts.size() + 3);  // header, 16 hosts, gpu17, footer
  EXPECT_EQ(Count(pieces.front(), "<testcase "), 0);
  for (size_t i = 1; i + 1 < pieces.size(); ++i) EXPECT_EQ(Count(pieces[i], "<testcase "), 1);
  std::string joined;
  for (const std::string& piece : pieces) joined += piece;
  EXPECT_EQ(joined, RenderJunit(run));
  ExpectGolden("report.xml", RenderJunit(testing_fixture::MixedFleet()));
}

TEST(ReportJunitTest, DirtyIsAFailureUnreachableFailedAndNotStartedAreErrors) {
  RunReport run = testing_fixture::MixedFleet();
  run.not_started = {"gpu17"};
  std::string xml = RenderJunit(run);
  EXPECT_EQ(Count(xml, "<testcase "), 17);
  // gpu13 dirty: a failure; gpu14 and gpu16 unreachable, gpu15 failed, gpu17
  // not started: errors (Jenkins and GitLab read <error> as infrastructure).
  EXPECT_EQ(Count(xml, "<failure "), 1);
  EXPECT_EQ(Count(xml, "<error "), 4);
  EXPECT_NE(xml.find("tests=\"17\" failures=\"1\" errors=\"4\""), std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"dirty\""), std::string::npos);
  EXPECT_NE(xml.find("<error type=\"connect_timeout\""), std::string::npos);
  EXPECT_NE(xml.find("<error type=\"sudo\""), std::string::npos);
  EXPECT_NE(xml.find("<error type=\"not_started\""), std::string::npos);
}

TEST(ReportJunitTest, DryRunDirtyIsNoFailure) {
  std::string xml = RenderJunit(testing_fixture::DryRunFleet());
  EXPECT_EQ(Count(xml, "<failure "), 0);
  EXPECT_EQ(Count(xml, "<error "), 1);  // only the unreachable host
}

TEST(ReportJunitTest, XmlEscape) {
  struct Row {
    const char* in;
    const char* out;
  };
  const Row rows[] = {
      {"plain", "plain"},
      {"a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c&apos;"},
      {"tab\tnew\nline", "tab\tnew\nline"},
      {"bell\x07"
       "esc\x1b",
       "bell?esc?"},
  };
  for (const Row& row : rows) EXPECT_EQ(XmlEscape(row.in), row.out) << row.in;
}

}  // namespace
}  // namespace fleetreap
