// The nvidia-smi commands fleetreap runs (nvidia_smi.cc) and the tool's
// words a failed run carries: every line kept, escaped and bounded.
#include "fleetreap/remote/nvidia_smi.h"

#include <gtest/gtest.h>

#include "support/nvidia_smi_samples.h"

namespace fleetreap {
namespace {

using nvsmi_samples::kOurFields;
using nvsmi_samples::kOurOldFields;
using nvsmi_samples::ReadSample;
using nvsmi_samples::Split;

TEST(NvidiaSmiTest, CommandsAreTheDocumentedOnes) {
  EXPECT_EQ(GpuQueryCommand(),
            "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total,"
            "gpu_recovery_action --format=csv,nounits");
  EXPECT_EQ(GpuQueryCommandWithoutRecovery(),
            "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total"
            " --format=csv,nounits");
  EXPECT_EQ(GpuQueryCommandForGpu(5),
            "nvidia-smi -i 5 --query-gpu=index,uuid,name,pci.bus_id,memory.used,"
            "memory.total,gpu_recovery_action --format=csv,nounits");
  EXPECT_EQ(GpuQueryCommandForGpu(5, false),
            "nvidia-smi -i 5 --query-gpu=index,uuid,name,pci.bus_id,memory.used,"
            "memory.total --format=csv,nounits");
  EXPECT_EQ(GpuQueryFields(), Split(kOurFields));
  EXPECT_EQ(GpuQueryFieldsWithoutRecovery(), Split(kOurOldFields));
}

// Every line the tool printed reaches tool_message, escaped and bounded.
TEST(NvidiaSmiTest, KeepsEveryLineOfTheToolWords) {
  struct Row {
    std::string out;
    std::string err;
    int exit_code;
    const char* message;
  };
  std::string many;
  for (int i = 0; i < 40; ++i)
    many += "WARNING: line " + std::to_string(i) + std::string(60, '.') + "\n";
  const std::string rows_ok = ReadSample("55-h200-query-recovery-action-idle.txt");
  const Row rows[] = {
      // A warning on stderr beside a good answer: kept, the answer read.
      {rows_ok, "WARNING: infoROM is corrupted at gpu 0000:18:00.0\n", 0,
       "\"WARNING: infoROM is corrupted at gpu 0000:18:00.0\""},
      {rows_ok, "", 0, ""},
      // Control characters and quotes escaped, nothing dropped.
      {"", "Failed to initialize NVML: Unknown Error\x1b[2J\n\tsecond \"line\"\\\x01\n", 255,
       "\"Failed to initialize NVML: Unknown Error\\x1b[2J\"; \"second \\\"line\\\"\\\\\\x01\""},
      // A lost GPU and the lines around it on stderr.
      {"",
       "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n"
       "Some other text\n",
       15,
       "\"Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\"; "
       "\"Some other text\""},
  };
  for (const Row& row : rows) {
    GpuQueryResult result;
    (void)ParseGpuQuery(row.out, row.err, row.exit_code, GpuQueryFields(), &result);
    EXPECT_EQ(result.tool_message, row.message) << row.err;
  }
  GpuQueryResult result;
  (void)ParseGpuQuery("", many, 3, GpuQueryFields(), &result);
  EXPECT_LE(result.tool_message.size(), kMaxToolMessage + 20);
  EXPECT_EQ(result.tool_message.substr(0, 20), "\"WARNING: line 0....");
  EXPECT_EQ(result.tool_message.substr(result.tool_message.size() - 15), "(15 more lines)");
}

TEST(NvidiaSmiTest, EscapesAndCapsTheToolWords) {
  struct Row {
    std::string line;
    std::string escaped;
  };
  const Row rows[] = {
      {"Unable to determine the device handle for GPU0000:B1:00.0: Unknown Error",
       "Unable to determine the device handle for GPU0000:B1:00.0: Unknown Error"},
      {"a\tb\rc\nd", "a\\tb\\rc\\nd"},
      {"\x1b[31mred\x1b[0m\x7f\x01", "\\x1b[31mred\\x1b[0m\\x7f\\x01"},
      {"back\\slash \"quoted\"", "back\\\\slash \"quoted\""},
      {"caf\xc3\xa9 \xff", "caf\xc3\xa9 \xff"},
      {std::string(kMaxToolLine, 'x'), std::string(kMaxToolLine, 'x')},
      {std::string(kMaxToolLine + 1, 'x'), std::string(kMaxToolLine, 'x') + "..."},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(EscapeToolLine(row.line), row.escaped) << row.line;
  }
  EXPECT_EQ(QuoteToolLine("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
}

}  // namespace
}  // namespace fleetreap
