// ReadScan: a scan's records into a HostSnapshot, nvidia-smi read once.
#include "fleetreap/remote/scan.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

constexpr const char* kLostLine =
    "Unable to determine the device handle for GPU 0000:CB:00.0: GPU is lost. "
    "Reboot the system to recover this GPU\n";

ScanOutput QuickScanOf(const std::string& nvidia_smi_out, int exit_code) {
  ScanOutput scan;
  scan.shell_pid = 40;
  scan.ancestors = {39};
  scan.nvidia_smi_out = nvidia_smi_out;
  scan.nvidia_smi_exit = exit_code;
  return scan;
}

TEST(ScanTest, ReadsTheRowsBesideALostGpu) {
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(QuickScanOf(std::string(kLostLine) +
                                       "index, uuid, name, pci.bus_id, memory.used [MiB], "
                                       "memory.total [MiB]\n"
                                       "0, GPU-a, NVIDIA H200, 00000000:19:00.0, 0, 143771\n"
                                       "7, GPU-b, NVIDIA H200, 00000000:DB:00.0, 12, 143771\n",
                                   15),
                       &snapshot)
                  .ok());
  const GpuQueryAnswer& query = snapshot.gpu_query;
  EXPECT_TRUE(query.gpu_lost);
  EXPECT_TRUE(query.stops_ladder);
  EXPECT_FALSE(query.only_lost_gpus);
  ASSERT_EQ(query.gpus.size(), 3u);
  int lost = 0;
  for (const GpuReading& gpu : query.gpus) {
    if (gpu.state == GpuState::kLost) ++lost;
    if (gpu.index == 7) {
      EXPECT_EQ(gpu.used_mib, 12);
    }
  }
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(snapshot.shell_pid, 40);
  EXPECT_FALSE(snapshot.holders_scanned);
}

TEST(ScanTest, OnlyALostGpuCallsForTheQueryOfEach) {
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(QuickScanOf(kLostLine, 15), &snapshot).ok());
  EXPECT_TRUE(snapshot.gpu_query.only_lost_gpus);
  EXPECT_FALSE(snapshot.gpu_query.status.ok());
  EXPECT_EQ(snapshot.gpu_query.status.kind(), ErrorKind::kCommandFailed);
}

TEST(ScanTest, ATimedOutQueryIsNotRead) {
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(QuickScanOf("index, uuid\n", 124), &snapshot).ok());
  EXPECT_TRUE(snapshot.gpu_query.timed_out);
  EXPECT_TRUE(snapshot.gpu_query.gpus.empty());
}

TEST(ScanTest, AnotherPidNamespaceStopsTheReading) {
  ScanOutput scan = QuickScanOf("", 0);
  scan.holders = true;
  scan.pid_namespace = "pid:[4026532999]";
  scan.apps_exit = 0;
  scan.apps_out = "not, csv, at all\n";
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(scan, &snapshot).ok());  // the apps were not read
  EXPECT_FALSE(snapshot.sees_host_pid_namespace);
  EXPECT_EQ(snapshot.pid_namespace, "pid:[4026532999]");
}

TEST(ScanTest, PerGpuQueryAddsTheGpusThatAnswer) {
  std::vector<GpuReading> gpus;
  std::string header =
      "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB], "
      "gpu_recovery_action\n";
  std::string out = std::string("pgpu 0 0:") + header +
                    "0, GPU-a, NVIDIA H200, 00000000:19:00.0, 5, 143771, None\n" + '\0' +
                    "pgpu 1 15:" + kLostLine + '\0' + "end" + '\0';
  ASSERT_TRUE(ReadPerGpuQuery(out, &gpus).ok());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].uuid, "GPU-a");
  EXPECT_EQ(gpus[0].used_mib, 5);
}

}  // namespace
}  // namespace fleetreap
