#include "fleetreap/report_markdown.h"

#include <gtest/gtest.h>

#include "report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ExpectGolden;

TEST(ReportMarkdownTest, MixedFleetGolden) {
  ExpectGolden("summary.md", RenderMarkdown(testing_fixture::MixedFleet()));
}

TEST(ReportMarkdownTest, AllCleanHasNoAttentionSection) {
  RunReport run = testing_fixture::MixedFleet();
  run.hosts.resize(12);
  std::string md = RenderMarkdown(run);
  EXPECT_EQ(md.find("Needs attention"), std::string::npos);
  EXPECT_EQ(md.rfind("## fleetreap: READY\n", 0), 0u);
}

TEST(ReportMarkdownTest, Escape) {
  struct Row {
    const char* in;
    const char* out;
  };
  const Row rows[] = {
      {"plain text", "plain text"},
      {"a|b", "a\\|b"},
      {"<script>", "\\<script\\>"},
      {"two\nlines", "two lines"},
      {"esc\x1b[31mred", "esc?\\[31mred"},
      {"*_`[]#\\", "\\*\\_\\`\\[\\]\\#\\\\"},
  };
  for (const Row& row : rows) EXPECT_EQ(MarkdownEscape(row.in), row.out) << row.in;
}

}  // namespace
}  // namespace fleetreap
