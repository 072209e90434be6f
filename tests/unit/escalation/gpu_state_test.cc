#include "fleetreap/escalation/gpu_state.h"

#include <gtest/gtest.h>

#include <string>

namespace fleetreap {
namespace {

GpuReading Reading(int index, std::optional<int64_t> used) {
  GpuReading gpu;
  gpu.index = index;
  gpu.used_mib = used;
  return gpu;
}

GpuReading Recovery(int index, std::optional<int64_t> used, const std::string& action) {
  GpuReading gpu = Reading(index, used);
  gpu.recovery_action = action;
  return gpu;
}

GpuReading Lost(int index, const std::string& bus_id) {
  GpuReading gpu;
  gpu.index = index;
  gpu.bus_id = bus_id;
  gpu.state = GpuState::kLost;
  gpu.detail = "GPU is lost";
  return gpu;
}

Holder MakeHolder(int pid, const std::string& comm, std::vector<int> gpus, HolderFate fate) {
  Holder holder;
  holder.pid = pid;
  holder.comm = comm;
  holder.gpus = std::move(gpus);
  holder.fate = fate;
  return holder;
}

// "INDEX STATE (DETAIL)" per GPU, in order.
std::string Render(const std::vector<GpuReading>& gpus) {
  std::string text;
  for (const GpuReading& gpu : gpus) {
    text += std::to_string(gpu.index) + " " + GpuStateName(gpu.state);
    if (!gpu.detail.empty()) text += " (" + gpu.detail + ")";
    text += "\n";
  }
  return text;
}

TEST(GpuStateTest, GivesEveryGpuExactlyOneState) {
  const Holder vllm = MakeHolder(300, "VLLM::Worker_TP", {1}, HolderFate::kObserved);
  const Holder persistenced =
      MakeHolder(20, "nvidia-persiste", {0, 1, 2, 3}, HolderFate::kProtected);
  const Holder killed = MakeHolder(301, "python3", {2}, HolderFate::kKilled);
  const Holder unkillable = MakeHolder(302, "python3", {3}, HolderFate::kUnkillable);
  const Holder ctl_only = MakeHolder(303, "monitor", {}, HolderFate::kObserved);
  struct Row {
    const char* name;
    std::vector<GpuReading> gpus;
    std::vector<Holder> holders;
    int expected_gpus;
    int64_t threshold;
    const char* expected;
    bool host_clean;
  };
  const Row rows[] = {
      {"all clean", {Reading(0, 0), Reading(1, 5)}, {}, 2, 5, "0 clean\n1 clean\n", true},
      {"clean with protected daemons",
       {Reading(0, 1), Reading(1, 0)},
       {persistenced, ctl_only},
       2,
       5,
       "0 protected_only (held by protected nvidia-persiste (20))\n"
       "1 protected_only (held by protected nvidia-persiste (20))\n",
       true},
      {"busy beats protected",
       {Reading(0, 3), Reading(1, 70000)},
       {persistenced, vllm},
       0,
       5,
       "0 protected_only (held by protected nvidia-persiste (20))\n"
       "1 busy (held by VLLM::Worker_TP (300))\n",
       false},
      {"busy even with memory unknown",
       {Reading(1, std::nullopt)},
       {vllm},
       0,
       5,
       "1 busy (held by VLLM::Worker_TP (300))\n",
       false},
      {"protected daemon over threshold",
       {Reading(0, 900)},
       {persistenced},
       1,
       5,
       "0 busy (900 MiB used, held only by protected nvidia-persiste (20))\n",
       false},
      {"ghost",
       {Reading(0, 0), Reading(1, 10151)},
       {killed},
       2,
       5,
       "0 clean\n1 ghost (10151 MiB used with no holder: needs a GPU reset or a reboot)\n",
       false},
      {"killed holder no longer holds", {Reading(2, 0)}, {killed}, 0, 5, "2 clean\n", true},
      {"unkillable still holds",
       {Reading(3, 0)},
       {unkillable},
       0,
       5,
       "3 busy (held by python3 (302))\n",
       false},
      {"unknown memory",
       {Reading(0, std::nullopt)},
       {},
       1,
       5,
       "0 unknown (memory.used unknown)\n",
       false},
      {"threshold is inclusive",
       {Reading(0, 596), Reading(1, 597)},
       {},
       0,
       596,
       "0 clean\n1 ghost (597 MiB used with no holder: needs a GPU reset or a reboot)\n",
       false},
      {"missing GPUs, rows out of order",
       {Reading(3, 0), Reading(0, 0)},
       {},
       4,
       5,
       "0 clean\n"
       "1 missing (expected 4 GPUs; nvidia-smi did not report index 1)\n"
       "2 missing (expected 4 GPUs; nvidia-smi did not report index 2)\n"
       "3 clean\n",
       false},
      {"a lost GPU stands in for its absent index",
       {Reading(0, 0), Lost(-1, "00000000:5D:00.0"), Reading(2, 0)},
       {},
       3,
       5,
       "0 clean\n2 clean\n-1 lost (GPU is lost)\n",
       false},
      {"lost with index",
       {Lost(0, "00000000:18:00.0"), Reading(1, 0)},
       {vllm},
       2,
       5,
       "0 lost (GPU is lost)\n1 busy (held by VLLM::Worker_TP (300))\n",
       false},
      {"more GPUs than expected",
       {Reading(0, 0), Reading(1, 0)},
       {},
       1,
       5,
       "0 clean\n1 clean\n",
       true},
      {"no readings, nothing expected", {}, {}, 0, 5, "", false},
      // gpu_recovery_action: the driver's own verdict outranks the memory.
      {"recovery None is clean",
       {Recovery(0, 0, "None"), Recovery(1, 0, "[N/A]"), Recovery(2, 0, "N/A"),
        Recovery(3, 0, "NONE")},
       {},
       4,
       5,
       "0 clean\n1 clean\n2 clean\n3 clean\n",
       true},
      {"recovery asked at 0 MiB",
       {Recovery(0, 0, "Reset"), Recovery(1, 0, "None")},
       {},
       2,
       5,
       "0 needs_recovery (driver asks for recovery: Reset (0 MiB used))\n1 clean\n",
       false},
      {"every action",
       {Recovery(0, 0, "Reboot"), Recovery(1, 900, "Drain P2P"),
        Recovery(2, std::nullopt, "Drain and Reset")},
       {persistenced},
       3,
       5,
       "0 needs_recovery (driver asks for recovery: Reboot (0 MiB used))\n"
       "1 needs_recovery (driver asks for recovery: Drain P2P (900 MiB used))\n"
       "2 needs_recovery (driver asks for recovery: Drain and Reset)\n",
       false},
      {"busy and asking for recovery",
       {Recovery(1, 70000, "Reset")},
       {vllm},
       0,
       5,
       "1 busy (held by VLLM::Worker_TP (300); driver asks for recovery: Reset)\n",
       false},
      {"recovery with memory unknown",
       {Recovery(0, std::nullopt, "Reset")},
       {},
       0,
       5,
       "0 needs_recovery (driver asks for recovery: Reset)\n",
       false},
      // Issue 11: the lost line alone on an 8-GPU host; the lost GPU stands
      // in for index 0 (nvidia-smi could not number it), seven are missing.
      {"lost alone",
       {Lost(-1, "0000:B1:00.0")},
       {},
       3,
       0,
       "1 missing (expected 3 GPUs; nvidia-smi did not report index 1)\n"
       "2 missing (expected 3 GPUs; nvidia-smi did not report index 2)\n"
       "-1 lost (GPU is lost)\n",
       false},
      {"no readings, 2 expected",
       {},
       {},
       2,
       5,
       "0 missing (expected 2 GPUs; nvidia-smi did not report index 0)\n"
       "1 missing (expected 2 GPUs; nvidia-smi did not report index 1)\n",
       false},
  };
  for (const Row& row : rows) {
    std::vector<GpuReading> gpus = row.gpus;
    ClassifyGpus(row.holders, row.expected_gpus, row.threshold, &gpus);
    EXPECT_EQ(Render(gpus), row.expected) << row.name;
    EXPECT_EQ(HostGpusClean(gpus), row.host_clean) << row.name;
    ClassifyGpus(row.holders, row.expected_gpus, row.threshold, &gpus);
    EXPECT_EQ(Render(gpus), row.expected) << row.name << " (classified twice)";
  }
}

TEST(GpuStateTest, AGpuThatOnlyAsksForRecoveryIsEmpty) {
  std::vector<GpuReading> gpus = {Reading(0, 0), Reading(1, 0)};
  gpus[1].recovery_action = "Reset";
  ClassifyGpus({}, 2, 100, &gpus);
  EXPECT_EQ(gpus[1].state, GpuState::kRecovery);
  EXPECT_FALSE(HostGpusClean(gpus));
  EXPECT_TRUE(HostGpusEmpty(gpus, 100));
  gpus[1].used_mib = 4000;  // memory no process holds: not empty
  EXPECT_FALSE(HostGpusEmpty(gpus, 100));
  gpus[1].used_mib.reset();
  EXPECT_FALSE(HostGpusEmpty(gpus, 100));
  EXPECT_FALSE(HostGpusEmpty({}, 100));
}

TEST(GpuStateTest, MapsDeviceMinorsToNvidiaSmiIndexes) {
  std::vector<GpuReading> gpus = {Reading(0, 0), Reading(1, 0), Reading(2, 0), Reading(3, 0)};
  gpus[0].bus_id = "00000000:18:00.0";
  gpus[1].bus_id = "00000000:2A:00.0";
  gpus[2].bus_id = "00000000:3A:00.0";
  gpus[3].bus_id = "";  // unknown: its minor keeps its number
  // The driver probed 2A first: /dev/nvidia0 is index 1 and /dev/nvidia1 index 0.
  const std::map<std::string, int> minors = {
      {"0000:2a:00.0", 0}, {"0000:18:00.0", 1}, {"0000:3A:00.0", 2}, {"0000:99:00.0", 7}};
  struct Row {
    std::vector<int> minors;
    std::vector<int> indexes;
  };
  const Row rows[] = {
      {{0}, {1}}, {{1}, {0}}, {{0, 1}, {0, 1}}, {{2}, {2}}, {{3}, {3}}, {{7}, {7}}, {{}, {}},
  };
  for (const Row& row : rows) {
    std::vector<Holder> holders = {MakeHolder(1, "x", row.minors, HolderFate::kObserved)};
    MapHolderGpusToIndexes(minors, gpus, &holders);
    EXPECT_EQ(holders[0].gpus, row.indexes);
  }
  std::vector<Holder> holders = {MakeHolder(1, "x", {0}, HolderFate::kObserved)};
  MapHolderGpusToIndexes({}, gpus, &holders);
  EXPECT_EQ(holders[0].gpus, std::vector<int>{0});
}

TEST(GpuStateTest, HolderStillPresent) {
  const std::pair<HolderFate, bool> rows[] = {
      {HolderFate::kObserved, true},  {HolderFate::kTerminated, false},
      {HolderFate::kKilled, false},   {HolderFate::kGone, false},
      {HolderFate::kProtected, true}, {HolderFate::kUnkillable, true},
      {HolderFate::kWouldTerm, true}, {HolderFate::kWouldKill, true},
  };
  for (const auto& [fate, present] : rows) {
    Holder holder;
    holder.fate = fate;
    EXPECT_EQ(HolderStillPresent(holder), present) << HolderFateName(fate);
  }
}

}  // namespace
}  // namespace fleetreap
