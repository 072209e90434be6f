#include "fleetreap/remote/nvidia_smi.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fleetreap {
namespace {

std::string ReadSample(const std::string& name) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/nvsmi/" + name, std::ios::binary);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> Split(const std::string& csv) {
  std::vector<std::string> fields;
  std::stringstream in(csv);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

std::string Mib(const std::optional<int64_t>& mib) { return mib ? std::to_string(*mib) : "?"; }

// One line per GPU: "INDEX UUID BUS used=U total=T STATE (DETAIL)".
std::string Render(const std::vector<GpuReading>& gpus) {
  std::string text;
  for (const GpuReading& gpu : gpus) {
    text += std::to_string(gpu.index) + " " + gpu.uuid + " " + gpu.bus_id +
            " used=" + Mib(gpu.used_mib) + " total=" + Mib(gpu.total_mib) + " " +
            GpuStateName(gpu.state);
    if (!gpu.detail.empty()) text += " (" + gpu.detail + ")";
    text += "\n";
  }
  return text;
}

std::string Render(const std::vector<ComputeApp>& apps) {
  std::string text;
  for (const ComputeApp& app : apps) {
    text += (app.pid ? std::to_string(*app.pid) : "?") + " " + app.gpu_uuid + " " + app.gpu_bus_id +
            " used=" + Mib(app.used_mib) + " [" + app.process_name + "]\n";
  }
  return text;
}

// The header line's names, units dropped: the fields that run asked for.
std::vector<std::string> HeaderFields(const std::string& sample) {
  std::string text = ReadSample(sample);
  std::vector<std::string> fields;
  for (std::string field : Split(text.substr(0, text.find('\n')))) {
    size_t unit = field.find(" [");
    if (unit != std::string::npos) field.resize(unit);
    size_t begin = field.find_first_not_of(' ');
    fields.push_back(field.substr(begin));
  }
  return fields;
}

const char kSample02Fields[] =
    "uuid,name,driver_model.current,driver_model.pending,vbios_version,"
    "driver_version,fan.speed,memory.used,pci.bus_id,serial,compute_cap,"
    "pci.sub_device_id,index";
const char kTitanFields[] =
    "index,uuid,name,temperature.gpu,utilization.gpu,memory.used,memory.total";
const char kAppsFields[] =
    "timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory";
const char kOurFields[] = "index,uuid,name,pci.bus_id,memory.used,memory.total,gpu_recovery_action";
const char kOurOldFields[] = "index,uuid,name,pci.bus_id,memory.used,memory.total";
// The fields of the captures that asked for a process name (no command of
// fleetreap's does: remote_script_test's NoQueryAsksForAUserField).
const char kOurAppsFields[] = "gpu_uuid,gpu_bus_id,pid,used_gpu_memory,process_name";

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

// Every query-gpu sample: file, the fields its run asked for ("" = the
// header's own names), exit code, expected readings.
TEST(NvidiaSmiTest, ParsesEveryQueryGpuSample) {
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
TEST(NvidiaSmiTest, LostGpuAmongGoodRowsKeepsTheToolMessage) {
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
TEST(NvidiaSmiTest, EveryShapeOfTheSameAnswerParsesTheSame) {
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
TEST(NvidiaSmiTest, ColumnsFollowTheRequestedOrder) {
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

TEST(NvidiaSmiTest, UnknownValuesAreNeverZero) {
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

TEST(NvidiaSmiTest, ParsesEveryComputeAppsSample) {
  struct Row {
    const char* file;
    std::string fields;
    const char* expected;
  };
  const std::string uuid0 = "GPU-00000000-0000-0000-0000-000000000000 ";
  const std::string wddm = "00000000:0C:00.0 used=? [";
  const std::string windows =
      "12444 " + uuid0 + wddm +
      "C:\\Windows\\SystemApps\\MicrosoftWindows.Client.CBS_cw5n1h2txyewy\\TextInputHost.exe]\n"
      "15076 " +
      uuid0 + wddm +
      "C:\\Windows\\SystemApps\\ShellExperienceHost_cw5n1h2txyewy\\ShellExperienceHost.exe]\n"
      "2056 " +
      uuid0 + wddm +
      "C:\\Windows\\System32\\dwm.exe]\n"
      "12332 " +
      uuid0 + wddm +
      "C:\\Windows\\explorer.exe]\n"
      "20372 " +
      uuid0 + wddm +
      "C:\\Program Files\\NZXT CAM\\NZXT CAM.exe]\n"
      "4680 " +
      uuid0 + wddm +
      "C:\\Program Files\\NVIDIA Corporation\\NVIDIA GeForce Experience\\NVIDIA Share.exe]\n"
      "14160 " +
      uuid0 + wddm +
      "C:\\Windows\\SystemApps\\MicrosoftWindows.Client.CBS_cw5n1h2txyewy\\SearchHost.exe]\n"
      "14184 " +
      uuid0 + wddm +
      "C:\\Windows\\SystemApps\\Microsoft.Windows.StartMenuExperienceHost_"
      "cw5n1h2txyewy\\StartMenuExperienceHost.exe]\n"
      "16280 " +
      uuid0 + wddm +
      "C:\\Program Files\\Controller Companion\\ControllerCompanion.exe]\n"
      "24804 " +
      uuid0 + wddm + "C:\\Windows\\ImmersiveControlPanel\\SystemSettings.exe]\n";
  const std::string l40s = uuid0 + "00000000:01:00.0 used=? []\n";
  const std::string accounted =
      "15727 " + l40s + "17439 " + l40s + "18679 " + l40s + "20037 " + l40s + "20038 " + l40s;
  const Row rows[] = {
      {"01-h200-mig-compute-apps-load-3procs.txt", kAppsFields,
       "12249 GPU-00000000-0000-0000-0000-000000000000 00000000:83:00.0 used=2194 "
       "[/root/tools/memhog]\n"
       "12250 GPU-00000000-0000-0000-0000-000000000000 00000000:83:00.0 used=1170 "
       "[/root/tools/memhog]\n"
       "12267 GPU-00000000-0000-0000-0000-000000000000 00000000:83:00.0 used=13526 [./gpu_burn]\n"},
      {"04-h200-compute-apps-idle-header-only.txt", kAppsFields, ""},
      {"15-windows-wddm-compute-apps-na-memory-paths-with-spaces.txt", kAppsFields,
       windows.c_str()},
      {"40-crlf-compute-apps-from-15.txt", kAppsFields, windows.c_str()},
      {"20-l40s-compute-apps-load-bare-process-names.txt", kAppsFields,
       "20037 GPU-00000000-0000-0000-0000-000000000000 00000000:01:00.0 used=538 [ffmpeg]\n"
       "20038 GPU-00000000-0000-0000-0000-000000000000 00000000:01:00.0 used=681 [ffmpeg]\n"},
      // Accounted apps read with the same reader; they list exited PIDs and
      // are never a kill list (research notes 3.4).
      {"21-l40s-accounted-apps-includes-exited-pids.txt", "", accounted.c_str()},
      {"23-rtx4080-compute-apps-idle-only-c-plus-g-listed.txt", kAppsFields,
       "2165 GPU-00000000-0000-0000-0000-000000000000 00000000:01:00.0 used=25 "
       "[/usr/bin/kwin_wayland]\n"},
      {"48-compute-apps-names-with-commas.txt", kOurAppsFields,
       "4242 GPU-22222222-0000-0000-0000-000000000003 00000000:5D:00.0 used=70210 [python3 -m "
       "vllm, serve --tp 8]\n"
       "? GPU-22222222-0000-0000-0000-000000000003 00000000:5D:00.0 used=? [Unknown Error]\n"
       "4250 GPU-22222222-0000-0000-0000-000000000001 00000000:2A:00.0 used=1024 [/opt/my "
       "app/bin/worker,x]\n"},
      {"49-compute-apps-no-running-processes.txt", kOurAppsFields, ""},
  };
  for (const Row& row : rows) {
    std::vector<std::string> fields =
        row.fields.empty() ? HeaderFields(row.file) : Split(row.fields);
    std::vector<ComputeApp> apps;
    NvidiaSmiFailure failure = NvidiaSmiFailure::kOther;
    Status status = ParseComputeApps(ReadSample(row.file), "", 0, fields, &apps, &failure);
    ASSERT_TRUE(status.ok()) << row.file << ": " << status.ToString();
    EXPECT_EQ(failure, NvidiaSmiFailure::kNone) << row.file;
    EXPECT_EQ(Render(apps), row.expected) << row.file;
  }
}

// Failed runs: never read as CSV; the Status and the result carry the tool's
// own words; lost GPUs named in the error become lost readings.
TEST(NvidiaSmiTest, FailedRunsCarryTheToolMessage) {
  struct Row {
    std::string out;
    std::string err;
    int exit_code;
    NvidiaSmiFailure failure;
    const char* status;
    const char* gpus;
  };
  const std::string driver = ReadSample("12-error-failed-to-communicate-with-driver.txt");
  const std::string driver_text =
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
      "Make sure that the latest NVIDIA driver is installed and running.";
  const std::string lost_08 = ReadSample("08-error-device-handle-gpu-is-lost.txt");
  const Row rows[] = {
      {driver, "", 9, NvidiaSmiFailure::kDriverNotLoaded, "", ""},
      {driver, driver, 9, NvidiaSmiFailure::kDriverNotLoaded, "", ""},
      {"", driver, 0, NvidiaSmiFailure::kDriverNotLoaded, "", ""},
      {ReadSample("17-error-nvml-version-mismatch-oneline.txt"), "", 18,
       NvidiaSmiFailure::kVersionMismatch,
       "command_failed: nvidia-smi failed (version_mismatch): \"Failed to initialize NVML: "
       "Driver/library version mismatch\"",
       ""},
      {ReadSample("28-error-nvml-unknown-error.txt"), "", 255, NvidiaSmiFailure::kNvmlUnknownError,
       "command_failed: nvidia-smi failed (nvml_unknown_error): \"Failed to initialize NVML: "
       "Unknown Error\"",
       ""},
      {"", ReadSample("30-error-nvml-insufficient-permissions.txt"), 4,
       NvidiaSmiFailure::kInsufficientPermissions,
       "command_failed: nvidia-smi failed (insufficient_permissions): \"Failed to initialize NVML: "
       "Insufficient Permissions\"",
       ""},
      {ReadSample("45-no-devices-trailing-spaces.txt"), "", 6, NvidiaSmiFailure::kNoDevices,
       "command_failed: nvidia-smi failed (no_devices): \"No devices were found\"", ""},
      {ReadSample("45-no-devices-trailing-spaces.txt"), "", 0, NvidiaSmiFailure::kNoDevices,
       "command_failed: nvidia-smi failed (no_devices): \"No devices were found\"", ""},
      {ReadSample("06-error-device-handle-unknown-error.txt"), "", 255, NvidiaSmiFailure::kGpuLost,
       "command_failed: nvidia-smi failed (gpu_lost): \"Unable to determine the device handle for "
       "GPU 0000:0B:00.0: Unknown Error\"",
       "-1  0000:0B:00.0 used=? total=? lost (Unable to determine the device handle for "
       "GPU 0000:0B:00.0: Unknown Error)\n"},
      {"", lost_08, 15, NvidiaSmiFailure::kGpuLost,
       "command_failed: nvidia-smi failed (gpu_lost): \"Unable to determine the device handle for "
       "GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU\"",
       "-1  0000:02:00.0 used=? total=? lost (Unable to determine the device handle for "
       "GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU)\n"},
      {ReadSample("46-error-lost-spellings.txt"), "", 15, NvidiaSmiFailure::kGpuLost,
       "command_failed: nvidia-smi failed (gpu_lost): \"Unable to determine the device handle for "
       "GPU0000:3B:00.0: Unknown Error\"; \"Unable to determine the device handle for gpu "
       "0000:86:00.0: GPU is lost. Reboot the system to recover this GPU\"",
       "-1  0000:3B:00.0 used=? total=? lost (Unable to determine the device handle for "
       "GPU0000:3B:00.0: Unknown Error)\n"
       "-1  0000:86:00.0 used=? total=? lost (Unable to determine the device handle for gpu "
       "0000:86:00.0: GPU is lost. Reboot the system to recover this GPU)\n"},
      // Good-looking CSV after a failing exit is not read.
      {"0, GPU-a, H200, 00000000:18:00.0, 0, 81920\n", "", 3, NvidiaSmiFailure::kOther,
       "command_failed: nvidia-smi failed (other): \"0, GPU-a, H200, 00000000:18:00.0, 0, 81920\"",
       ""},
      {"", "", 2, NvidiaSmiFailure::kOther,
       "command_failed: nvidia-smi failed (other): nvidia-smi exited with status 2", ""},
      {"", "", 9, NvidiaSmiFailure::kDriverNotLoaded,
       "command_failed: nvidia-smi failed (driver_not_loaded): nvidia-smi exited with status 9",
       ""},
  };
  for (const Row& row : rows) {
    GpuQueryResult result;
    Status status = ParseGpuQuery(row.out, row.err, row.exit_code, GpuQueryFields(), &result);
    std::string expected =
        *row.status
            ? row.status
            : "command_failed: nvidia-smi failed (driver_not_loaded): \"" + driver_text + "\"";
    EXPECT_EQ(status.ToString(), expected) << row.out << row.err;
    EXPECT_EQ(result.failure, row.failure) << row.out << row.err;
    EXPECT_EQ(status.message(), std::string("nvidia-smi failed (") +
                                    NvidiaSmiFailureName(row.failure) +
                                    "): " + result.tool_message);
    EXPECT_EQ(Render(result.gpus), row.gpus) << row.out << row.err;

    std::vector<ComputeApp> apps;
    NvidiaSmiFailure failure = NvidiaSmiFailure::kNone;
    Status apps_status =
        ParseComputeApps(row.out, row.err, row.exit_code, Split(kOurAppsFields), &apps, &failure);
    EXPECT_EQ(apps_status.ToString(), expected) << row.out << row.err;
    EXPECT_EQ(failure, row.failure);
    EXPECT_TRUE(apps.empty());
  }
}

TEST(NvidiaSmiTest, ClassifiesResetAndOtherOutputs) {
  struct Row {
    const char* file;
    int exit_code;
    NvidiaSmiFailure failure;
  };
  const Row rows[] = {
      {"24-reset-in-use-by-another-client.txt", 255, NvidiaSmiFailure::kOther},
      {"25-reset-in-use-older-wording.txt", 255, NvidiaSmiFailure::kOther},
      {"26-reset-success.txt", 0, NvidiaSmiFailure::kNone},
      {"11-8x-titanx-query-gpu-noheader-nounits.txt", 0, NvidiaSmiFailure::kNone},
      {"12-error-failed-to-communicate-with-driver.txt", 9, NvidiaSmiFailure::kDriverNotLoaded},
  };
  for (const Row& row : rows) {
    std::string message;
    EXPECT_EQ(ClassifyNvidiaSmiFailure(ReadSample(row.file), "", row.exit_code, &message),
              row.failure)
        << row.file;
    EXPECT_EQ(message.empty(), row.failure == NvidiaSmiFailure::kNone) << row.file << message;
  }
  std::string message;
  ClassifyNvidiaSmiFailure(ReadSample("25-reset-in-use-older-wording.txt"), "", 255, &message);
  EXPECT_EQ(message,
            "\"GPU 00000000:C1:00.0 is currently in use by another process.\"; \"1 device is "
            "currently being used by one or more other processes (e.g., Fabric Manager, CUDA "
            "application, graphics application such as an X server, or a monitoring application "
            "such as another instance of nvidia-smi). Please first kill all processes using this "
            "device and all compute applications running in the system.\"");
}

TEST(NvidiaSmiTest, LostGpuLinesInEverySpelling) {
  struct Row {
    const char* line;
    const char* bus_id;  // nullptr: not a lost-GPU line
  };
  const Row rows[] = {
      {"Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error", "0000:0B:00.0"},
      {"Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.", "0000:3B:00.0"},
      {"unable to determine the device handle for gpu 0000:86:00.0: GPU is lost", "0000:86:00.0"},
      {"  Unable to determine the device handle for GPU 00000000:5D:00.0: x\r", "00000000:5D:00.0"},
      {"Unable to determine the device handle for GPU: Unknown Error", nullptr},
      {"Unable to determine the device handle for GPU 0000:0B:00: Unknown Error", nullptr},
      {"0, Unable to determine the device handle for GPU 0000:0B:00.0: x", nullptr},
      {"", nullptr},
  };
  for (const Row& row : rows) {
    LostGpu lost;
    EXPECT_EQ(ParseLostGpuLine(row.line, &lost), row.bus_id != nullptr) << row.line;
    if (row.bus_id != nullptr) {
      EXPECT_EQ(lost.bus_id, row.bus_id);
    }
  }
  EXPECT_EQ(NormalizeBusId("0000:0b:00.0"), "00000000:0B:00.0");
  EXPECT_EQ(NormalizeBusId("00000000:83:00.0"), "00000000:83:00.0");
  EXPECT_EQ(NormalizeBusId("weird"), "WEIRD");
}

// Output nvidia-smi "succeeded" with that we cannot read: exact errors.
TEST(NvidiaSmiTest, RejectsMalformedOutputWithExactErrors) {
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

TEST(NvidiaSmiTest, RejectsMalformedComputeAppsWithExactErrors) {
  struct Row {
    std::string out;
    const char* error;
  };
  const Row rows[] = {
      {"GPU-a, 00000000:18:00.0, abc, 12, python\n",
       "parse: nvidia-smi output line 1: pid: expected an integer, got \"abc\""},
      {"GPU-a, 00000000:18:00.0, 12, 1.5, python\n",
       "parse: nvidia-smi output line 1: used_gpu_memory: expected a number of MiB, got \"1.5\""},
      {"GPU-a, 00000000:18:00.0, 12\n",
       "parse: nvidia-smi output line 1: expected 5 fields, got 3"},
      {"GPU-a, 00000000:18:00.0, 12, 5, python\n"
       "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n",
       "command_failed: nvidia-smi failed (gpu_lost): \"Unable to determine the device handle for "
       "GPU 0000:0B:00.0: Unknown Error\""},
  };
  for (const Row& row : rows) {
    std::vector<ComputeApp> apps;
    Status status = ParseComputeApps(row.out, "", 0, Split(kOurAppsFields), &apps, nullptr);
    EXPECT_EQ(status.ToString(), row.error) << row.out;
    EXPECT_TRUE(apps.empty()) << row.out;
  }
}

// gpu_recovery_action: real 580 answers with the column, the six-column
// answer of an older driver (or the retry) read with the same fields, and
// the values the driver prints when it asks for an action.
TEST(NvidiaSmiTest, ReadsTheRecoveryActionWhenTheAnswerHasIt) {
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

TEST(NvidiaSmiTest, TellsAnUnknownFieldFromOtherFailures) {
  struct Row {
    std::string out;
    std::string err;
    int exit_code;
    const char* field;
    bool unknown;
  };
  const std::string refusal = "Field \"gpu_recovery_action\" is not a valid field to query.\n\n";
  const Row rows[] = {
      {refusal, "", 2, "gpu_recovery_action", true},
      {"", refusal, 2, "gpu_recovery_action", true},
      {refusal, "", 0, "gpu_recovery_action", false},
      {refusal, "", 2, "memory.used", false},
      // The real capture (driver 580), for another field.
      {ReadSample("57-h200-bad-field-exit2.txt"), "", 2, "gpu_recovery_actions", true},
      {ReadSample("57-h200-bad-field-exit2.txt"), "", 2, "gpu_recovery_action", false},
      {"x Field \"gpu_recovery_action\" is not a valid field to query.", "", 2,
       "gpu_recovery_action", false},
      {ReadSample("12-error-failed-to-communicate-with-driver.txt"), "", 9, "gpu_recovery_action",
       false},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(IsUnknownFieldError(row.out, row.err, row.exit_code, row.field), row.unknown)
        << row.out << row.err << row.exit_code;
  }
  // The refusal is a failed run whose message is the tool's line.
  GpuQueryResult result;
  Status status = ParseGpuQuery(refusal, "", 2, GpuQueryFields(), &result);
  EXPECT_EQ(status.ToString(),
            "command_failed: nvidia-smi failed (other): \"Field "
            "\\\"gpu_recovery_action\\\" is not a valid field to query.\"");
}

TEST(NvidiaSmiTest, StopsTheLadderOnALostGpuOrNoDriver) {
  struct Row {
    std::string out;
    int exit_code;
    bool stops;
  };
  const Row rows[] = {
      {ReadSample("55-h200-query-recovery-action-idle.txt"), 0, false},
      {ReadSample("06-error-device-handle-unknown-error.txt"), 15, true},
      {ReadSample("06-error-device-handle-unknown-error.txt"), 255, true},
      {ReadSample("44-fleetreap-query-8x-h200-one-lost.txt"), 0, true},
      {ReadSample("12-error-failed-to-communicate-with-driver.txt"), 9, true},
      {ReadSample("12-error-failed-to-communicate-with-driver.txt"), 255, true},
      {"", 9, true},
      {"", 15, true},
      {ReadSample("17-error-nvml-version-mismatch-oneline.txt"), 18, false},
      {ReadSample("45-no-devices-trailing-spaces.txt"), 6, false},
      {"Field \"gpu_recovery_action\" is not a valid field to query.\n", 2, false},
  };
  for (const Row& row : rows) {
    GpuQueryResult result;
    (void)ParseGpuQuery(row.out, "", row.exit_code, GpuQueryFields(), &result);
    EXPECT_EQ(StopsTheLadder(result, row.exit_code), row.stops) << row.out << row.exit_code;
  }
}

// The case of issue 11: the lost line is all nvidia-smi printed. The GPU is
// named by its bus id, as printed, with the tool's words.
TEST(NvidiaSmiTest, ALostLineAloneIsALostGpuWithTheToolWords) {
  const std::string line =
      "Unable to determine the device handle for GPU0000:B1:00.0: Unknown Error";
  for (const std::string& out : {line + "\n", std::string()}) {
    GpuQueryResult result;
    Status status =
        ParseGpuQuery(out, out.empty() ? line + "\n" : "", 15, GpuQueryFields(), &result);
    EXPECT_EQ(status.ToString(), "command_failed: nvidia-smi failed (gpu_lost): \"" + line + "\"");
    EXPECT_EQ(result.failure, NvidiaSmiFailure::kGpuLost);
    EXPECT_EQ(result.tool_message, "\"" + line + "\"");
    ASSERT_EQ(result.gpus.size(), 1u);
    EXPECT_EQ(result.gpus[0].index, -1);
    EXPECT_EQ(result.gpus[0].bus_id, "0000:B1:00.0");
    EXPECT_EQ(result.gpus[0].state, GpuState::kLost);
    EXPECT_EQ(result.gpus[0].detail, line);
    EXPECT_TRUE(StopsTheLadder(result, 15));
  }
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
