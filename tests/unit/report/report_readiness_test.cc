// A host that is empty but not ready, in every output: the status, the exit
// code, the table, JSON, JUnit, Markdown and the drain reasons.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/report_fixture.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/escalation/verdict.h"
#include "fleetreap/report/drain_reason.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "fleetreap/report/report_reader.h"
#include "fleetreap/report/report_table.h"

namespace fleetreap {
namespace {

using testing_fixture::CleanHost;

ReadinessFinding Finding(int gpu, const char* check, const char* reason, const char* detail,
                         const char* next, FindingSeverity severity = FindingSeverity::kBlock) {
  ReadinessFinding finding;
  finding.gpu = gpu;
  finding.check = check;
  finding.reason = reason;
  finding.detail = detail;
  finding.next_step = next;
  finding.severity = severity;
  return finding;
}

HostReport NotReadyHost(const std::string& name, int octet) {
  HostReport host = CleanHost(name, octet);
  host.readiness_checked = true;
  host.readiness = {
      Finding(3, "remapped_rows", "remapped_rows_pending",
              "row remapping pending (2 rows remapped)", "reset the GPU before the rollout"),
      Finding(4, "persistence", "persistence_off", "persistence mode off",
              "start nvidia-persistenced", FindingSeverity::kWarn),
      Finding(-1, "fabric", "fabric_manager_not_running",
              "fabric manager not running on an NVSwitch system", "start nvidia-fabricmanager"),
  };
  host.status = StatusWithReadiness(true, host.readiness);
  return host;
}

RunReport Fleet() {
  RunReport run;
  run.tool_version = "0.1.0";
  run.playbook = "default";
  run.duration = std::chrono::milliseconds(2000);
  HostReport ready = CleanHost("gpu01", 1);
  ready.readiness_checked = true;
  ready.readiness = {Finding(0, "persistence", "persistence_off", "persistence mode off",
                             "start nvidia-persistenced", FindingSeverity::kWarn)};
  ready.status = StatusWithReadiness(true, ready.readiness);
  run.hosts.push_back(ready);
  run.hosts.push_back(NotReadyHost("gpu02", 2));
  return run;
}

TEST(ReportReadinessTest, Status) {
  EXPECT_EQ(StatusWithReadiness(true, {}), HostStatus::kClean);
  EXPECT_EQ(StatusWithReadiness(true, NotReadyHost("h", 1).readiness), HostStatus::kNotReady);
  EXPECT_EQ(StatusWithReadiness(false, {}), HostStatus::kDirty);
  EXPECT_EQ(StatusWithReadiness(false, NotReadyHost("h", 1).readiness), HostStatus::kDirty);
  EXPECT_EQ(Fleet().hosts[0].status, HostStatus::kClean);  // a warning changes nothing
  EXPECT_STREQ(HostStatusName(HostStatus::kNotReady), "not_ready");
}

TEST(ReportReadinessTest, ExitCodeSetsTheDirtyBit) {
  RunReport run = Fleet();
  EXPECT_EQ(ExitCodeFor(run), kExitDirty);
  run.dry_run = true;  // like dirty: a dry run sets only the unreachable bit
  EXPECT_EQ(ExitCodeFor(run), kExitClean);
}

TEST(ReportReadinessTest, Outcome) {
  HostOutcome outcome = OutcomeOf(NotReadyHost("gpu02", 2), false);
  EXPECT_EQ(outcome.kind, OutcomeKind::kNotReady);
  EXPECT_EQ(outcome.detail,
            "GPU 3: row remapping pending (2 rows remapped): reset the GPU before the rollout "
            "(+1 more)");
  EXPECT_STREQ(OutcomeKindLabel(OutcomeKind::kNotReady), "not ready");
}

TEST(ReportReadinessTest, Table) {
  TableStyle style;
  std::string table = RenderTable(Fleet(), style);
  // Wrapped at the table's width (100 off a terminal), under the detail column.
  EXPECT_NE(table.find("gpu02  not ready  GPU 3: row remapping pending (2 rows remapped): "
                       "reset the GPU before the rollout\n                  (+1 more)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("NOT READY: 1/2 hosts clean, 1 not ready in 2.0 s (exit 1)"),
            std::string::npos)
      << table;
}

TEST(ReportReadinessTest, Json) {
  nlohmann::json doc = nlohmann::json::parse(RenderJson(Fleet()));
  EXPECT_EQ(doc["schema_version"], 2);
  EXPECT_EQ(doc["summary"]["not_ready"], 1);
  EXPECT_EQ(doc["summary"]["clean"], 1);
  const nlohmann::json& host = doc["hosts"][1];
  EXPECT_EQ(host["status"], "not_ready");
  EXPECT_EQ(host["readiness"]["ready"], false);
  ASSERT_EQ(host["readiness"]["findings"].size(), 3u);
  const nlohmann::json& first = host["readiness"]["findings"][0];
  EXPECT_EQ(first["check"], "remapped_rows");
  EXPECT_EQ(first["reason"], "remapped_rows_pending");
  EXPECT_EQ(first["gpu"], 3);
  EXPECT_EQ(first["bus_id"], nullptr);
  EXPECT_EQ(first["severity"], "block");
  EXPECT_EQ(first["next_step"], "reset the GPU before the rollout");
  EXPECT_EQ(host["readiness"]["findings"][2]["gpu"], nullptr);
  EXPECT_EQ(doc["hosts"][0]["readiness"]["ready"], true);
  RunReport unchecked = Fleet();
  unchecked.hosts[0].readiness_checked = false;
  EXPECT_EQ(nlohmann::json::parse(RenderJson(unchecked))["hosts"][0]["readiness"], nullptr);
}

TEST(ReportReadinessTest, JsonReadsBack) {
  RunReport back;
  Status status = ReadReportJson(RenderJson(Fleet()), "r.json", &back);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(back.hosts.size(), 2u);
  EXPECT_EQ(back.hosts[1].status, HostStatus::kNotReady);
  ASSERT_EQ(back.hosts[1].readiness.size(), 3u);
  EXPECT_EQ(FindingText(back.hosts[1].readiness[0]),
            "GPU 3: row remapping pending (2 rows remapped): reset the GPU before the rollout");
  EXPECT_EQ(back.hosts[1].readiness[1].severity, FindingSeverity::kWarn);
  EXPECT_EQ(back.hosts[1].readiness[2].gpu, -1);
}

TEST(ReportReadinessTest, Junit) {
  std::string xml = RenderJunit(Fleet());
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("not ready: GPU 3: row remapping pending (2 rows remapped): reset the GPU "
                     "before the rollout"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("warning: GPU 4: persistence mode off: start nvidia-persistenced"),
            std::string::npos);
}

TEST(ReportReadinessTest, Markdown) {
  std::string md = RenderMarkdown(Fleet());
  EXPECT_NE(md.find("gpu02"), std::string::npos) << md;
  EXPECT_NE(md.find("fabric manager not running on an NVSwitch system: start "
                    "nvidia-fabricmanager"),
            std::string::npos)
      << md;
}

TEST(ReportReadinessTest, DrainReasonAndSlurmLine) {
  EXPECT_EQ(DrainReason(NotReadyHost("gpu02", 2)),
            "fleetreap: not ready: GPU 3: row remapping pending (2 rows remapped): reset the GPU "
            "before the rollout (+1 more)");
  EXPECT_EQ(RenderDrainReasons(Fleet()),
            "gpu02 fleetreap: not ready: GPU 3: row remapping pending (2 rows remapped): reset "
            "the GPU before the rollout (+1 more)\n");
  RunReport dry = Fleet();
  dry.dry_run = true;  // the prolog's dry run still names it
  EXPECT_EQ(RenderDrainReasons(dry), RenderDrainReasons(Fleet()));
}

}  // namespace
}  // namespace fleetreap
