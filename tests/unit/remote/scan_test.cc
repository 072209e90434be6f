// ReadScan: a scan's records into a HostSnapshot, nvidia-smi read once.
#include "fleetreap/remote/scan.h"

#include <gtest/gtest.h>

#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"

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
                       {}, &snapshot)
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
  ASSERT_TRUE(ReadScan(QuickScanOf(kLostLine, 15), {}, &snapshot).ok());
  EXPECT_TRUE(snapshot.gpu_query.only_lost_gpus);
  EXPECT_FALSE(snapshot.gpu_query.status.ok());
  EXPECT_EQ(snapshot.gpu_query.status.kind(), ErrorKind::kCommandFailed);
}

TEST(ScanTest, ATimedOutQueryIsNotRead) {
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(QuickScanOf("index, uuid\n", 124), {}, &snapshot).ok());
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
  ASSERT_TRUE(ReadScan(scan, {}, &snapshot).ok());  // the apps were not read
  EXPECT_FALSE(snapshot.sees_host_pid_namespace);
  EXPECT_EQ(snapshot.pid_namespace, "pid:[4026532999]");
}

// The scan's own query (ScanGpuFields) as the H200 of driver 580 answered it
// (tests/testdata/device-h200/readiness/query-ready.csv has its values).
std::string ScanQueryHeader() {
  std::string header;
  for (const std::string& field : ScanGpuFields()) {
    header += (header.empty() ? "" : ", ") + field;
    if (field == "memory.used" || field == "memory.total") header += " [MiB]";
  }
  return header + "\n";
}

std::string H200Row(int index, const std::string& bus, const std::string& pending) {
  return std::to_string(index) + ", GPU-" + std::to_string(index) + ", NVIDIA H200, " + bus +
         ", 0, 143771, None, Enabled, Enabled, 0, 0, 0, 2, " + pending +
         ", No, [N/A], [N/A], [N/A], N/A, N/A, Enabled, 5, 5, 16, 16\n";
}

TEST(ScanTest, ReadsTheReadinessReadingsOfTheSameQuery) {
  ScanOutput scan = QuickScanOf(ScanQueryHeader() + H200Row(0, "00000000:19:00.0", "No") +
                                    H200Row(1, "00000000:3B:00.0", "Yes"),
                                0);
  scan.readiness = true;
  scan.driver_gpus = {"0000:19:00.0", "0000:3b:00.0"};
  scan.nvswitches = 4;
  scan.fabric_manager = 0;
  scan.kmsg_exit = 0;
  scan.kmsg_out =
      "6,0,0,-;Linux version 6.8.0\n"
      "4,812,9000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python3, GPU has fallen off\n";
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(scan, {}, &snapshot).ok());
  ASSERT_EQ(snapshot.gpu_query.gpus.size(), 2u);
  ASSERT_TRUE(snapshot.health_read);
  const HostHealth& health = snapshot.health;
  ASSERT_EQ(health.gpus.size(), 2u);
  EXPECT_EQ(health.gpus[1].remapped_rows_pending, true);
  EXPECT_EQ(health.gpus[1].remapped_rows_uncorrectable, 2);
  EXPECT_EQ(health.gpus[0].pcie_width_current, 16);
  EXPECT_FALSE(health.gpus[0].retired_pages_pending.has_value());
  EXPECT_EQ(health.kernel_log, KernelLogState::kRead);
  ASSERT_EQ(health.xids.size(), 1u);
  EXPECT_EQ(health.xids[0].code, 79);
  EXPECT_EQ(health.nvswitch_present, true);
  EXPECT_EQ(health.fabric_manager_running, false);
  EXPECT_EQ(health.driver_bus_ids->size(), 2u);
}

TEST(ScanTest, AnOldDriversAnswerHasNoReadinessFields) {
  // The retry with the base fields: every reading is "not supported".
  ScanOutput scan = QuickScanOf(
      "index, uuid, name, pci.bus_id, memory.used [MiB], memory.total [MiB]\n"
      "0, GPU-a, Tesla V100-SXM2-16GB, 00000000:19:00.0, 0, 16160\n",
      0);
  scan.readiness = true;
  scan.kmsg_exit = 1;
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(scan, {}, &snapshot).ok());
  ASSERT_EQ(snapshot.health.gpus.size(), 1u);
  EXPECT_FALSE(snapshot.health.gpus[0].ecc_enabled.has_value());
  EXPECT_FALSE(snapshot.health.gpus[0].remapped_rows_pending.has_value());
  EXPECT_EQ(snapshot.health.kernel_log, KernelLogState::kNotReadable);
  EXPECT_EQ(snapshot.health.nvswitch_present, false);
  EXPECT_FALSE(snapshot.health.fabric_manager_running.has_value());
}

TEST(ScanTest, AWrappedKernelLogIsRotated) {
  ScanOutput scan = QuickScanOf(ScanQueryHeader() + H200Row(0, "00000000:19:00.0", "No"), 0);
  scan.readiness = true;
  scan.kmsg_exit = 0;
  scan.kmsg_out = "";  // readable, no boot record, no Xid line
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(scan, {}, &snapshot).ok());
  EXPECT_EQ(snapshot.health.kernel_log, KernelLogState::kRotated);
  scan.kmsg_exit = -1;
  ASSERT_TRUE(ReadScan(scan, {}, &snapshot).ok());
  EXPECT_EQ(snapshot.health.kernel_log, KernelLogState::kNotRead);
}

TEST(ScanTest, AMalformedReadinessValueFailsTheRead) {
  std::string row = H200Row(0, "00000000:19:00.0", "Maybe");
  ScanOutput scan = QuickScanOf(ScanQueryHeader() + row, 0);
  scan.readiness = true;
  HostSnapshot snapshot;
  EXPECT_EQ(ReadScan(scan, {}, &snapshot).ToString(),
            "parse: GPU health: nvidia-smi output line 2: remapped_rows.pending: expected Yes or "
            "No, got \"Maybe\"");
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
