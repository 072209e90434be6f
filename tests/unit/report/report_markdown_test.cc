#include "fleetreap/report/report_markdown.h"

#include <gtest/gtest.h>

#include "support/report_fixture.h"

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

TEST(ReportMarkdownTest, NamesGpusByBusIdAndKeepsTheDriversWords) {
  std::string md = RenderMarkdown(testing_fixture::DriverSignalsFleet());
  EXPECT_NE(
      md.find("| `gpu20` | 127.0.1.1 | dirty | GPU 0000:B1:00.0 lost<br>GPU 0000:B1:00.0 lost: "
              "Unable to determine the device handle for GPU0000:B1:00.0: Unknown "
              "Error\\\\x1b\\[2J | nvidia-smi: \"Unable to determine the device handle for "
              "GPU0000:B1:00.0: Unknown Error?\\[2J\" |\n"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| `gpu21` | 127.0.1.1 | dirty | GPU 3 needs recovery (Reset)<br>GPU 3 needs "
                    "recovery: driver asks for recovery: Reset (0 MiB used) |  |\n"),
            std::string::npos)
      << md;
}

TEST(ReportMarkdownTest, Escape) {
  struct Row {
    const char* in;
    const char* out;
  };
  const Row rows[] = {
      {"plain text", "plain text"},        {"a|b", "a\\|b"},
      {"<script>", "\\<script\\>"},        {"two\nlines", "two lines"},
      {"esc\x1b[31mred", "esc?\\[31mred"}, {"*_`[]#\\", "\\*\\_\\`\\[\\]\\#\\\\"},
  };
  for (const Row& row : rows) EXPECT_EQ(MarkdownEscape(row.in), row.out) << row.in;
}

}  // namespace
}  // namespace fleetreap
