// ParseGpuQuery (nvidia_smi_gpu_query.cc): nvidia-smi --query-gpu answers
// to GpuReadings, each test a table of real captures (tests/testdata/nvsmi)
// or of the shapes they take.
#include <gtest/gtest.h>

#include "fleetreap/remote/nvidia_smi.h"
#include "support/nvidia_smi_samples.h"

namespace fleetreap {
namespace {

using nvsmi_samples::HeaderFields;
using nvsmi_samples::kOurFields;
using nvsmi_samples::kOurOldFields;
using nvsmi_samples::kSample02Fields;
using nvsmi_samples::kTitanFields;
using nvsmi_samples::Mib;
using nvsmi_samples::ReadSample;
using nvsmi_samples::Render;
using nvsmi_samples::Split;

// Every query-gpu sample: file, the fields its run asked for ("" = the
// header's own names), exit code, expected readings.
TEST(NvidiaSmiGpuQueryTest, ParsesEveryQueryGpuSample) {
  struct Row {
    const char* file;
    std::string fields;
    const char* expected;
  };
  const std::string h200 = "05-h200-query-gpu-all-fields-idle-driver580.txt";
  const Row rows[] = {
      {"02-exporter-fixture-two-gpus-wddm-na-serial.txt", kSample02Fields,
       "0 GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa 00000000:01:00.0 used=575 total=? unknown\n"
       "1 GPU-04757e3e-3077-4e2e-b988-7e2d647b52e9 00000000:02:00.0 used=1234 total=? unknown\n"},
      {"41-crlf-query-gpu-from-02.txt", kSample02Fields,
       "0 GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa 00000000:01:00.0 used=575 total=? unknown\n"
       "1 GPU-04757e3e-3077-4e2e-b988-7e2d647b52e9 00000000:02:00.0 used=1234 total=? unknown\n"},
      {"05-h200-query-gpu-all-fields-idle-driver580.txt", "",
       "0 GPU-00000000-0000-0000-0000-000000000000 00000000:83:00.0 used=0 total=143771 unknown\n"},
      // Asked for gpu_name; the header says name.
      {"09-a100-mig-query-gpu-insufficient-permissions.txt",
       "gpu_name,driver_version,temperature.gpu,utilization.gpu,utilization.memory,"
       "memory.total,memory.free,memory.used",
       "-1   used=? total=? unknown (memory.used is [Insufficient Permissions])\n"},
      {"11-8x-titanx-query-gpu-noheader-nounits.txt", kTitanFields,
       "0 GPU-004f693d-767b-b215-b4a9-a18af0ffd643  used=802 total=12206 unknown\n"
       "1 GPU-86fe97db-bf54-a056-4e8d-9b07e1a298e7  used=10032 total=12206 unknown\n"
       "2 GPU-2090c509-a97a-e2fe-68f4-cf9e874c36f2  used=6442 total=12206 unknown\n"
       "3 GPU-f0e47078-b19f-a3ff-bf2e-03a4c5fe3c2a  used=6442 total=12206 unknown\n"
       "4 GPU-637ac0be-f0e1-b056-bf28-b2c046e5e17e  used=6459 total=12206 unknown\n"
       "5 GPU-4168500a-bee8-3b4d-ba1b-75289a4afdcd  used=6440 total=12206 unknown\n"
       "6 GPU-92ce5025-17c0-7c83-d2eb-a697262d4c46  used=6451 total=12206 unknown\n"
       "7 GPU-f199c9ea-65d8-5382-aefe-a9e8fb48057b  used=6442 total=12206 unknown\n"},
      // Asked for clocks.gr...; the header says clocks.current.graphics.
      {"14-tesla-p100-query-gpu-nounits-no-trailing-newline.txt",
       "name,uuid,fan.speed,pstate,memory.reserved,memory.used,memory.free,"
       "utilization.gpu,utilization.memory,temperature.gpu,power.draw,clocks.gr,"
       "clocks.sm,clocks.mem,clocks.video",
       "-1 GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6  used=0 total=? unknown\n"},
      {"18-query-gpu-noheader-nounits-fan-na-newer-driver.txt",
       "memory.total,memory.free,memory.used,temperature.gpu,fan.speed,"
       "utilization.gpu,utilization.memory",
       "-1   used=0 total=2004 unknown\n"},
      // Fields inferred from the values (a clock, memory.total, the name).
      {"32-vgpu-h100-profile-clock-na-noheader-nounits.txt", "clocks.max.sm,memory.total,name",
       "-1   used=? total=24576 unknown (memory.used was not queried)\n"},
      {"44-fleetreap-query-8x-h200-one-lost.txt", kOurFields,
       "0 GPU-11111111-0000-0000-0000-000000000000 00000000:18:00.0 used=0 total=143771 unknown\n"
       "1 GPU-11111111-0000-0000-0000-000000000001 00000000:2A:00.0 used=0 total=143771 unknown\n"
       "2 GPU-11111111-0000-0000-0000-000000000002 00000000:3A:00.0 used=0 total=143771 unknown\n"
       "4 GPU-11111111-0000-0000-0000-000000000004 00000000:9A:00.0 used=70214 total=143771 "
       "unknown\n"
       "5 GPU-11111111-0000-0000-0000-000000000005 00000000:AB:00.0 used=0 total=143771 unknown\n"
       "6 GPU-11111111-0000-0000-0000-000000000006 00000000:BA:00.0 used=0 total=143771 unknown\n"
       "7 GPU-11111111-0000-0000-0000-000000000007 00000000:DB:00.0 used=0 total=143771 unknown\n"
       "-1  00000000:5D:00.0 used=? total=? lost (Unable to determine the device handle for GPU "
       "00000000:5D:00.0: GPU is lost. Reboot the system to recover this GPU)\n"},
      {"47-fleetreap-query-noheader-units-out-of-order.txt", kOurOldFields,
       "0 GPU-22222222-0000-0000-0000-000000000000 00000000:18:00.0 used=0 total=143771 unknown\n"
       "1 GPU-22222222-0000-0000-0000-000000000001 00000000:2A:00.0 used=? total=143771 unknown"
       " (memory.used is [N/A])\n"
       "3 GPU-22222222-0000-0000-0000-000000000003 00000000:5D:00.0 used=512 total=143771 "
       "unknown\n"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> fields =
        row.fields.empty() ? HeaderFields(row.file) : Split(row.fields);
    GpuQueryResult result;
    Status status = ParseGpuQuery(ReadSample(row.file), "", 0, fields, &result);
    ASSERT_TRUE(status.ok()) << row.file << ": " << status.ToString();
    EXPECT_EQ(Render(result.gpus), row.expected) << row.file;
  }
}

// Some GPUs answer, one is lost: the good rows plus a lost entry, whatever
// the exit code, and the tool's words for the lost one.
TEST(NvidiaSmiGpuQueryTest, LostGpuAmongGoodRowsKeepsTheToolMessage) {
  const std::string mixed = ReadSample("44-fleetreap-query-8x-h200-one-lost.txt");
  const std::string lost_line =
      "Unable to determine the device handle for GPU 00000000:5D:00.0: GPU is lost. "
      "Reboot the system to recover this GPU";
  for (int exit_code : {0, 15, 255}) {
    GpuQueryResult result;
    Status status = ParseGpuQuery(mixed, "", exit_code, GpuQueryFields(), &result);
    ASSERT_TRUE(status.ok()) << exit_code << ": " << status.ToString();
    EXPECT_EQ(result.failure, NvidiaSmiFailure::kGpuLost);
    EXPECT_EQ(result.tool_message, "\"" + lost_line + "\"");
    ASSERT_EQ(result.gpus.size(), 8u);
    EXPECT_EQ(result.gpus[0].name, "NVIDIA H200");
    EXPECT_EQ(result.gpus[7].state, GpuState::kLost);
    EXPECT_EQ(result.gpus[7].detail, lost_line);
  }
  // The lost line on stderr, the rows on stdout.
  std::string rows = mixed;
  rows.erase(rows.find("Unable"), lost_line.size() + 1);
  GpuQueryResult result;
  ASSERT_TRUE(ParseGpuQuery(rows, lost_line + "\n", 15, GpuQueryFields(), &result).ok());
  EXPECT_EQ(Render(result.gpus), Render([&] {
              GpuQueryResult expected;
              (void)ParseGpuQuery(mixed, "", 0, GpuQueryFields(), &expected);
              return expected.gpus;
            }()));
  // A lost GPU's bus id that matches a row marks that row.
  ASSERT_TRUE(ParseGpuQuery("0, GPU-a, H200, 00000000:18:00.0, 5, 10\n"
                            "Unable to determine the device handle for GPU 0000:18:00.0: x\n",
                            "", 15, GpuQueryFieldsWithoutRecovery(), &result)
                  .ok());
  EXPECT_EQ(Render(result.gpus),
            "0 GPU-a 00000000:18:00.0 used=? total=10 lost (Unable to determine the device "
            "handle for GPU 0000:18:00.0: x)\n");
  // Lost lines beside unreadable text: nothing is read but the lost GPU.
  Status status = ParseGpuQuery("garbage\n" + lost_line + "\n", "", 15, GpuQueryFields(), &result);
  EXPECT_EQ(status.ToString(),
            "command_failed: nvidia-smi failed (gpu_lost): \"" + lost_line + "\"");
  EXPECT_EQ(Render(result.gpus), "-1  00000000:5D:00.0 used=? total=? lost (" + lost_line + ")\n");
  // A host-wide cause outranks the lost lines: nothing is read.
  status = ParseGpuQuery(mixed, "Failed to initialize NVML: Unknown Error\n", 255, GpuQueryFields(),
                         &result);
  EXPECT_EQ(status.ToString(),
            "command_failed: nvidia-smi failed (nvml_unknown_error): "
            "\"Failed to initialize NVML: Unknown Error\"; \"" +
                lost_line + "\"");
  EXPECT_EQ(Render(result.gpus), "-1  00000000:5D:00.0 used=? total=? lost (" + lost_line + ")\n");
}

// Header or not, units or not, CRLF, trailing blanks, final newline or not:
// one answer.
TEST(NvidiaSmiGpuQueryTest, EveryShapeOfTheSameAnswerParsesTheSame) {
  const std::string expected =
      "0 GPU-a 00000000:18:00.0 used=0 total=81920 unknown\n"
      "1 GPU-b 00000000:2A:00.0 used=? total=81920 unknown (memory.used is [Not Supported])\n";
  const char* outputs[] = {
      "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\n"
      "0, GPU-a, A100, 00000000:18:00.0, 0, 81920\n"
      "1, GPU-b, A100, 00000000:2A:00.0, [Not Supported], 81920\n",
      "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\r\n"
      "0, GPU-a, A100, 00000000:18:00.0, 0 MiB, 81920 MiB\r\n"
      "1, GPU-b, A100, 00000000:2A:00.0, [Not Supported], 81920 MiB\r\n",
      "1, GPU-b, A100, 00000000:2A:00.0, [Not Supported], 81920  \n"
      "0, GPU-a, A100, 00000000:18:00.0, 0, 81920",
      "\n0,GPU-a,A100,00000000:18:00.0,0 MiB,81920 MiB\n\n"
      "1,GPU-b,A100,00000000:2A:00.0,[Not Supported],81920 MiB\n\n",
  };
  for (const char* out : outputs) {
    GpuQueryResult result;
    ASSERT_TRUE(ParseGpuQuery(out, "", 0, GpuQueryFieldsWithoutRecovery(), &result).ok()) << out;
    EXPECT_EQ(Render(result.gpus), expected) << out;
  }
}

// Columns in any order: matched by name with a header, by request without.
TEST(NvidiaSmiGpuQueryTest, ColumnsFollowTheRequestedOrder) {
  const std::vector<std::string> fields = {"memory.used", "name", "index", "memory.total"};
  const char* outputs[] = {
      "memory.used [MiB], name, index, memory.total [MiB]\n7, H200, 3, 100\n",
      "7, H200, 3, 100\n",
  };
  for (const char* out : outputs) {
    GpuQueryResult result;
    ASSERT_TRUE(ParseGpuQuery(out, "", 0, fields, &result).ok()) << out;
    EXPECT_EQ(Render(result.gpus), "3   used=7 total=100 unknown\n") << out;
  }
}

TEST(NvidiaSmiGpuQueryTest, UnknownValuesAreNeverZero) {
  const char* values[] = {"[N/A]",
                          "[Not Supported]",
                          "[Insufficient Permissions]",
                          "[Unknown Error]",
                          "N/A",
                          "",
                          "[Requested functionality has been deprecated]"};
  for (const char* value : values) {
    GpuQueryResult result;
    std::string out = std::string("0, GPU-a, H200, 00000000:18:00.0, ") + value + ", " + value;
    ASSERT_TRUE(ParseGpuQuery(out, "", 0, GpuQueryFieldsWithoutRecovery(), &result).ok()) << value;
    ASSERT_EQ(result.gpus.size(), 1u);
    EXPECT_FALSE(result.gpus[0].used_mib.has_value()) << value;
    EXPECT_FALSE(result.gpus[0].total_mib.has_value()) << value;
  }
}

// Output nvidia-smi "succeeded" with that we cannot read: exact errors.
TEST(NvidiaSmiGpuQueryTest, RejectsMalformedOutputWithExactErrors) {
  struct Row {
    std::string out;
    const char* error;
  };
  const Row rows[] = {
      {ReadSample("42-truncated-query-gpu-from-11.txt"),
       "parse: nvidia-smi output line 4: expected 7 fields, got 2"},
      {ReadSample("43-garbage-binary.txt"),
       "parse: nvidia-smi output line 1: expected 7 fields, got 1"},
      {ReadSample("24-reset-in-use-by-another-client.txt"),
       "parse: nvidia-smi output line 1: expected 7 fields, got 1"},
      {"", "parse: nvidia-smi output: no GPU rows"},
      {" \r\n\n", "parse: nvidia-smi output: no GPU rows"},
      {"index, uuid, name, temperature.gpu, utilization.gpu [%], memory.used [MiB], memory.total "
       "[MiB]\n",
       "parse: nvidia-smi output: no GPU rows"},
      {"index, uuid\n0, GPU-a\n",
       "parse: nvidia-smi output line 1: header has 2 columns, expected 7"},
      {"index, uuid, name, temperature.gpu, utilization.gpu, memory.free, memory.total\n",
       "parse: nvidia-smi output line 1: header has no column \"memory.used\""},
      {"0, GPU-a, TITAN X, 25, 0, 802\n",
       "parse: nvidia-smi output line 1: expected 7 fields, got 6"},
      {"x, GPU-a, TITAN X, 25, 0, 802, 12206\n",
       "parse: nvidia-smi output line 1: index: expected an integer, got \"x\""},
      {"[N/A], GPU-a, TITAN X, 25, 0, 802, 12206\n",
       "parse: nvidia-smi output line 1: index: expected an integer, got \"[N/A]\""},
      {"-1, GPU-a, TITAN X, 25, 0, 802, 12206\n",
       "parse: nvidia-smi output line 1: index: expected an integer, got \"-1\""},
      {"0, GPU-a, TITAN X, 25, 0, 802, 12206\n\n0, GPU-b, TITAN X, 25, 0, 802, 12206\n",
       "parse: nvidia-smi output line 3: duplicate GPU index 0"},
      {"0, GPU-a, TITAN X, 25, 0, 12x, 12206\n",
       "parse: nvidia-smi output line 1: memory.used: expected a number of MiB, got \"12x\""},
      {"0, GPU-a, TITAN X, 25, 0, -5 MiB, 12206\n",
       "parse: nvidia-smi output line 1: memory.used: expected a number of MiB, got \"-5 MiB\""},
      {"0, GPU-a, TITAN X, 25, 0, 99999999999999999999, 12206\n",
       "parse: nvidia-smi output line 1: memory.used: expected a number of MiB, got "
       "\"99999999999999999999\""},
      {"0, GPU-a, TITAN X, 25, 0, 1, 0 GiB\n",
       "parse: nvidia-smi output line 1: memory.total: expected a number of MiB, got \"0 GiB\""},
  };
  for (const Row& row : rows) {
    GpuQueryResult result;
    Status status = ParseGpuQuery(row.out, "", 0, Split(kTitanFields), &result);
    EXPECT_EQ(status.ToString(), row.error) << row.out;
    EXPECT_TRUE(result.gpus.empty()) << row.out;
  }
}

// gpu_recovery_action: real 580 answers with the column, the six-column
// answer of an older driver (or the retry) read with the same fields, and
// the values the driver prints when it asks for an action.
TEST(NvidiaSmiGpuQueryTest, ReadsTheRecoveryActionWhenTheAnswerHasIt) {
  struct Row {
    std::string out;
    const char* expected;  // "INDEX used=U action=A" per GPU
  };
  const char kHeader[] =
      "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB], gpu_recovery_action\n";
  const Row rows[] = {
      {ReadSample("55-h200-query-recovery-action-idle.txt"), "0 used=0 action=None\n"},
      {ReadSample("56-h200-query-recovery-action-load.txt"), "0 used=4635 action=None\n"},
      // The six-field answer: no recovery column, no action.
      {ReadSample("44-fleetreap-query-8x-h200-one-lost.txt"),
       "0 used=0 action=\n1 used=0 action=\n2 used=0 action=\n4 used=70214 action=\n"
       "5 used=0 action=\n6 used=0 action=\n7 used=0 action=\n-1 used=? action=\n"},
      {std::string(kHeader) + "0, GPU-a, H200, 00000000:18:00.0, 1, 143771, Reset\n"
                              "1, GPU-b, H200, 00000000:2A:00.0, 0, 143771, Drain and Reset\n"
                              "2, GPU-c, H200, 00000000:3A:00.0, 0, 143771, [N/A]\n"
                              "3, GPU-d, H200, 00000000:5D:00.0, 0, 143771, N/A\n"
                              "4, GPU-e, H200, 00000000:9A:00.0, 0, 143771, Drain P2P\n",
       "0 used=1 action=Reset\n1 used=0 action=Drain and Reset\n2 used=0 action=\n"
       "3 used=0 action=\n4 used=0 action=Drain P2P\n"},
      // Columns found by name, in any order; hostile text escaped.
      {"gpu_recovery_action, memory.total [MiB], memory.used [MiB], pci.bus_id, name, uuid, index\n"
       "Reboot\x1b[31m, 10, 3, 00000000:18:00.0, H200, GPU-a, 0\n",
       "0 used=3 action=Reboot\\x1b[31m\n"},
  };
  for (const Row& row : rows) {
    GpuQueryResult result;
    Status status = ParseGpuQuery(row.out, "", 0, GpuQueryFields(), &result);
    ASSERT_TRUE(status.ok()) << row.out << status.ToString();
    std::string text;
    for (const GpuReading& gpu : result.gpus) {
      text += std::to_string(gpu.index) + " used=" + Mib(gpu.used_mib) +
              " action=" + gpu.recovery_action + "\n";
    }
    EXPECT_EQ(text, row.expected) << row.out;
  }
  // Without a header every requested field must be there.
  GpuQueryResult result;
  EXPECT_EQ(ParseGpuQuery("0, GPU-a, H200, 00000000:18:00.0, 0, 143771\n", "", 0, GpuQueryFields(),
                          &result)
                .ToString(),
            "parse: nvidia-smi output line 1: expected 7 fields, got 6");
  EXPECT_EQ(ParseGpuQuery("index, uuid, name, pci.bus_id, memory.used [MiB], gpu_recovery_action\n",
                          "", 0, GpuQueryFields(), &result)
                .ToString(),
            "parse: nvidia-smi output line 1: header has 6 columns, expected 7");
}

}  // namespace
}  // namespace fleetreap
