#include "fleetreap/escalation/readiness.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fleetreap/remote/gpu_health_query.h"
#include "fleetreap/remote/xid_log.h"

namespace fleetreap {
namespace {

std::vector<std::string> Texts(const std::vector<ReadinessFinding>& findings) {
  std::vector<std::string> out;
  for (const ReadinessFinding& finding : findings) {
    out.push_back(std::string(FindingSeverityName(finding.severity)) + " " + FindingText(finding));
  }
  return out;
}

GpuReading Reading(int index, const std::string& bus_id) {
  GpuReading gpu;
  gpu.index = index;
  gpu.bus_id = bus_id;
  gpu.state = GpuState::kClean;
  return gpu;
}

HostHealth SyntheticHost(std::vector<GpuReading>* gpus) {
  std::ifstream file(
      std::string(FLEETREAP_TESTDATA_DIR) + "/readiness/synthetic-8x-h200-nvswitch-query-gpu.csv",
      std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  HostHealth health;
  Status parsed = ParseGpuHealth(text.str(), GpuHealthFields(), &health.gpus);
  EXPECT_TRUE(parsed.ok()) << parsed.ToString();
  for (const GpuHealth& gpu : health.gpus) gpus->push_back(Reading(gpu.index, gpu.bus_id));
  return health;
}

TEST(ReadinessTest, HealthyH200HasNoFinding) {
  HostHealth health;
  GpuHealth gpu;
  gpu.index = 0;
  gpu.ecc_enabled = true;
  gpu.ecc_uncorrected_volatile = 0;
  gpu.remapped_rows_pending = false;
  gpu.remapped_rows_failure = false;
  gpu.persistence_mode = true;
  gpu.pcie_width_current = 16;
  gpu.pcie_width_max = 16;
  health.gpus.push_back(gpu);
  health.kernel_log = KernelLogState::kRead;
  health.nvswitch_present = false;
  health.driver_bus_ids = std::vector<std::string>{"0000:00:06.0"};
  EXPECT_TRUE(DecideReadiness(health, {Reading(0, "00000000:00:06.0")}, ReadyPolicy()).empty());
}

TEST(ReadinessTest, EightGpuNvSwitchHost) {
  std::vector<GpuReading> gpus;
  HostHealth health = SyntheticHost(&gpus);
  health.nvswitch_present = true;
  health.fabric_manager_running = false;
  XidLog log;
  ParseXidLog(
      "[ 5.0] NVRM: Xid (PCI:0000:5d:00): 95, pid=1, name=python3, Uncontained\n"
      "[ 6.0] NVRM: Xid (PCI:0000:ab:00): 13, pid=2, name=python3, Graphics Exception\n"
      "[ 7.0] NVRM: Xid (PCI:0000:ee:00): 79, GPU has fallen off the bus.\n",
      &log);
  health.xids = log.events;
  health.kernel_log = KernelLogState::kRead;
  health.driver_bus_ids = std::vector<std::string>{"0000:18:00.0", "0000:ee:00.0"};
  std::vector<std::string> expected = {
      "block GPU 1: 2 uncorrected ECC errors since the driver loaded: reset the GPU before the "
      "rollout; drain it if they return",
      "block GPU 2: PCIe link x8 of x16: drain and reseat the GPU or check its slot and riser",
      "block GPU 3: row remapping pending (2 rows remapped): reset the GPU before the rollout",
      "block GPU 3: Xid 95 since boot: uncontained ECC error: reset the GPU before the rollout",
      "warn GPU 4: persistence mode off: start nvidia-persistenced",
      "block GPU 5: fabric state In Progress: start nvidia-fabricmanager and wait for the fabric "
      "state Completed",
      "warn GPU 5: Xid 13 since boot: graphics engine exception (an application fault): nothing "
      "to do for the GPU; check the application",
      "block GPU 7: row remapping failed: drain the node and open a service request",
      "block GPU 0000:ee:00: Xid 79 since boot: the GPU fell off the bus: drain and reboot",
      "block fabric manager not running on an NVSwitch system: start nvidia-fabricmanager",
      "block GPU 0000:ee:00.0: known to the driver but not answering nvidia-smi: drain and reboot",
  };
  EXPECT_EQ(Texts(DecideReadiness(health, gpus, ReadyPolicy())), expected);
}

TEST(ReadinessTest, PolicyTurnsChecksOffOrToWarnings) {
  std::vector<GpuReading> gpus;
  HostHealth health = SyntheticHost(&gpus);
  ReadyPolicy policy;
  policy.ecc = CheckMode::kOff;
  policy.pcie_link = CheckMode::kWarn;
  policy.remapped_rows = CheckMode::kOff;
  policy.fabric = CheckMode::kOff;
  policy.persistence = CheckMode::kOff;
  EXPECT_EQ(Texts(DecideReadiness(health, gpus, policy)),
            std::vector<std::string>{"warn GPU 2: PCIe link x8 of x16: drain and reseat the GPU or "
                                     "check its slot and riser"});
}

TEST(ReadinessTest, Thresholds) {
  HostHealth health;
  GpuHealth gpu;
  gpu.index = 0;
  gpu.ecc_enabled = true;
  gpu.ecc_pending_enabled = true;
  gpu.ecc_uncorrected_volatile = 1;
  gpu.ecc_uncorrected_aggregate = 7;
  gpu.retired_pages_sbe = 58;
  gpu.retired_pages_dbe = 7;
  gpu.pcie_gen_current = 1;
  gpu.pcie_gen_max = 3;
  health.gpus.push_back(gpu);
  ReadyPolicy policy;
  policy.ecc_volatile_max = 1;
  policy.ecc_aggregate_max = 5;
  EXPECT_EQ(Texts(DecideReadiness(health, {}, policy)),
            (std::vector<std::string>{
                "block GPU 0: 7 uncorrected ECC errors over the GPU's life: drain the node and "
                "open a service request",
                "block GPU 0: 65 retired pages (limit 60): drain the node and open a service "
                "request",
            }));
  policy.pcie_gen = true;
  policy.retired_pages_max = 100;
  policy.ecc_aggregate_max.reset();
  EXPECT_EQ(Texts(DecideReadiness(health, {}, policy)),
            std::vector<std::string>{
                "block GPU 0: PCIe gen 1 of gen 3: drain and check the GPU's slot and riser"});
}

TEST(ReadinessTest, EccOffIsNotCounted) {
  HostHealth health;
  GpuHealth gpu;
  gpu.index = 6;
  gpu.ecc_enabled = false;
  gpu.ecc_pending_enabled = true;
  gpu.ecc_uncorrected_volatile = 9;  // not trusted with ECC off
  health.gpus.push_back(gpu);
  EXPECT_EQ(Texts(DecideReadiness(health, {}, ReadyPolicy())),
            std::vector<std::string>{
                "warn GPU 6: ECC mode change to on pending: reset the GPU or reboot to apply it"});
}

TEST(ReadinessTest, XidLists) {
  HostHealth health;
  health.kernel_log = KernelLogState::kRead;
  health.xids = {{79, "0000:3b:00", 1, ""}, {31, "0000:3b:00", 3, ""}, {555, "0000:3b:00", 1, ""}};
  std::vector<GpuReading> gpus = {Reading(2, "00000000:3B:00.0")};
  ReadyPolicy policy;
  EXPECT_EQ(Texts(DecideReadiness(health, gpus, policy)),
            (std::vector<std::string>{
                "block GPU 2: Xid 79 since boot: the GPU fell off the bus: drain and reboot",
                "warn GPU 2: Xid 31 (3 times) since boot: GPU memory page fault (an application's "
                "illegal address): nothing to do for the GPU; check the application",
                "warn GPU 2: Xid 555 since boot: an Xid the catalogue of fleetreap does not name: "
                "look it up in NVIDIA's Xid catalog; drain the node if it is fatal",
            }));
  policy.xid_fatal = {31};
  policy.xid_informational = {79};
  policy.xid_unlisted = CheckMode::kOff;
  std::vector<ReadinessFinding> findings = DecideReadiness(health, gpus, policy);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, FindingSeverity::kWarn);   // 79, now informational
  EXPECT_EQ(findings[1].severity, FindingSeverity::kBlock);  // 31, now fatal
  EXPECT_EQ(findings[1].reason, "xid_31");
}

TEST(ReadinessTest, KernelLogStates) {
  HostHealth health;
  health.kernel_log = KernelLogState::kNotReadable;
  EXPECT_EQ(Texts(DecideReadiness(health, {}, ReadyPolicy())),
            std::vector<std::string>{"warn kernel log not readable: Xid events unknown: run "
                                     "fleetreap as root (or with sudo) to read them"});
  health.kernel_log = KernelLogState::kRotated;
  health.malformed_xid_lines = 2;
  EXPECT_EQ(Texts(DecideReadiness(health, {}, ReadyPolicy())),
            (std::vector<std::string>{
                "warn kernel log wrapped since boot: older Xid events are lost: check "
                "journalctl -k for Xid lines since boot",
                "warn 2 Xid lines not understood: read them with dmesg"}));
  ReadyPolicy off;
  off.xid = CheckMode::kOff;
  EXPECT_TRUE(DecideReadiness(health, {}, off).empty());
}

TEST(ReadinessTest, CatalogueNamesASourceForEveryEntry) {
  ReadyPolicy policy;
  for (const XidRule& rule : XidCatalogue()) {
    SCOPED_TRACE(rule.code);
    EXPECT_NE(std::string(rule.source), "");
    EXPECT_NE(std::string(rule.next_step), "");
    const std::vector<int>& list = rule.fatal ? policy.xid_fatal : policy.xid_informational;
    EXPECT_NE(std::find(list.begin(), list.end(), rule.code), list.end());
  }
  EXPECT_TRUE(FindXidRule(79)->fatal);
  EXPECT_FALSE(FindXidRule(13)->fatal);
  EXPECT_EQ(FindXidRule(1), nullptr);
}

TEST(ReadinessTest, TheDriversRecoveryActionBlocksWithItsNextStep) {
  std::vector<GpuReading> gpus(3);
  for (int i = 0; i < 3; ++i) gpus[static_cast<size_t>(i)].index = i;
  gpus[0].recovery_action = "None";
  gpus[1].recovery_action = "Reset";
  gpus[2].recovery_action = "Drain and Reset";
  std::vector<ReadinessFinding> findings = DecideReadiness(HostHealth(), gpus, ReadyPolicy());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].reason, "recovery_action_reset");
  EXPECT_EQ(FindingText(findings[0]),
            "GPU 1: the driver asks for recovery action Reset: reset the GPU before the rollout");
  EXPECT_EQ(findings[1].reason, "recovery_action_drain_and_reset");
  EXPECT_EQ(findings[1].next_step, "drain the node, then reset the GPU");
  EXPECT_TRUE(AnyBlocking(findings));
}

// HostGpusEmptyButForNamedMissing: GPU states (c clean, m missing, b busy,
// r recovery with 0 MiB used), the findings, and the answer.
TEST(HostGpusEmptyButForNamedMissingTest, Table) {
  struct Finding {
    const char* check;
    FindingSeverity severity;
  };
  struct Case {
    const char* name;
    std::string states;
    std::vector<Finding> findings;
    bool expected;
  };
  const Finding kGpuCountBlocks{"gpu_count", FindingSeverity::kBlock};
  const std::vector<Case> cases = {
      {"missing, named by a blocking gpu_count", "cm", {kGpuCountBlocks}, true},
      {"missing and recovery at 0 MiB, named", "rm", {kGpuCountBlocks}, true},
      {"missing, no finding", "cm", {}, false},
      {"missing, gpu_count only warns", "cm", {{"gpu_count", FindingSeverity::kWarn}}, false},
      {"missing, another check blocks", "cm", {{"ecc", FindingSeverity::kBlock}}, false},
      {"none missing: HostGpusEmpty's answer, not this one", "cc", {kGpuCountBlocks}, false},
      {"missing and a busy GPU", "bm", {kGpuCountBlocks}, false},
      {"every GPU missing", "mm", {kGpuCountBlocks}, false},
      {"no GPUs", "", {kGpuCountBlocks}, false},
  };
  for (const Case& c : cases) {
    std::vector<GpuReading> gpus;
    for (char state : c.states) {
      GpuReading gpu = Reading(static_cast<int>(gpus.size()), "");
      gpu.used_mib = 0;
      gpu.state = state == 'm'   ? GpuState::kMissing
                  : state == 'b' ? GpuState::kBusy
                  : state == 'r' ? GpuState::kRecovery
                                 : GpuState::kClean;
      gpus.push_back(gpu);
    }
    std::vector<ReadinessFinding> findings;
    for (const Finding& f : c.findings) {
      ReadinessFinding finding;
      finding.check = f.check;
      finding.severity = f.severity;
      findings.push_back(finding);
    }
    EXPECT_EQ(HostGpusEmptyButForNamedMissing(gpus, 0, findings), c.expected) << c.name;
  }
}

}  // namespace
}  // namespace fleetreap
