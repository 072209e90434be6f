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

// The Error column of a host with ghost memory says what frees it; the
// details say how much.
TEST(ReportMarkdownTest, GhostMemorySaysWhatFreesIt) {
  RunReport run = testing_fixture::MixedFleet();
  HostReport ghost = testing_fixture::CleanHost("gpu08", 8);
  ghost.status = HostStatus::kDirty;
  ghost.gpus_after[2].state = GpuState::kGhost;
  ghost.gpus_after[2].used_mib = 10151;
  run.hosts = {ghost};
  std::string md = RenderMarkdown(run);
  EXPECT_NE(md.find("| `gpu08` | 127.0.1.8 | dirty | GPU 2 ghost memory (10151 MiB) | ghost memory "
                    "needs a GPU reset: run with --playbook reset.yaml |\n"),
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
