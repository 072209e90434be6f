// nvidia-smi's failed runs (nvidia_smi.cc): how a failure is classified
// (no driver, lost GPU, unknown field, a reset's answers), the lost GPUs it
// names, and when it stops the ladder; tables of real captures.
#include <gtest/gtest.h>

#include "fleetreap/remote/nvidia_smi.h"
#include "support/nvidia_smi_samples.h"

namespace fleetreap {
namespace {

using nvsmi_samples::kOurAppsFields;
using nvsmi_samples::ReadSample;
using nvsmi_samples::Render;
using nvsmi_samples::Split;

// Failed runs: never read as CSV; the Status and the result carry the tool's
// own words; lost GPUs named in the error become lost readings.
TEST(NvidiaSmiFailureTest, FailedRunsCarryTheToolMessage) {
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

TEST(NvidiaSmiFailureTest, ClassifiesResetAndOtherOutputs) {
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

TEST(NvidiaSmiFailureTest, LostGpuLinesInEverySpelling) {
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

TEST(NvidiaSmiFailureTest, TellsAnUnknownFieldFromOtherFailures) {
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

TEST(NvidiaSmiFailureTest, StopsTheLadderOnALostGpuOrNoDriver) {
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

// The lost line is all nvidia-smi printed. The GPU is
// named by its bus id, as printed, with the tool's words.
TEST(NvidiaSmiFailureTest, ALostLineAloneIsALostGpuWithTheToolWords) {
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

}  // namespace
}  // namespace fleetreap
