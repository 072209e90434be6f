// ParseComputeApps (nvidia_smi_compute_apps.cc): nvidia-smi
// --query-compute-apps answers to ComputeApps, tables of real captures
// (tests/testdata/nvsmi) and of malformed answers with their exact errors.
#include <gtest/gtest.h>

#include "fleetreap/remote/nvidia_smi.h"
#include "support/nvidia_smi_samples.h"

namespace fleetreap {
namespace {

using nvsmi_samples::HeaderFields;
using nvsmi_samples::kAppsFields;
using nvsmi_samples::kOurAppsFields;
using nvsmi_samples::ReadSample;
using nvsmi_samples::Render;
using nvsmi_samples::Split;

TEST(NvidiaSmiComputeAppsTest, ParsesEveryComputeAppsSample) {
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

TEST(NvidiaSmiComputeAppsTest, RejectsMalformedComputeAppsWithExactErrors) {
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

}  // namespace
}  // namespace fleetreap
