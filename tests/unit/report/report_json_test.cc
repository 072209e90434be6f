#include "fleetreap/report/report_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleetreap/base/time_format.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ExpectGolden;

TEST(ReportJsonTest, MixedFleetGolden) {
  ExpectGolden("report.json", RenderJson(testing_fixture::MixedFleet()));
}

TEST(ReportJsonTest, DryRunGolden) {
  ExpectGolden("report_dry_run.json", RenderJson(testing_fixture::DryRunFleet()));
}

// The document goes out one host at a time, and the pieces joined are the
// document nlohmann would print whole.
TEST(ReportJsonTest, PiecesAreOneHostEachAndJoinToTheWholeDocument) {
  for (const RunReport& run :
       {testing_fixture::MixedFleet(), testing_fixture::DryRunFleet(), RunReport()}) {
    std::vector<std::string> pieces;
    RenderJsonPieces(run, [&pieces](const std::string& piece) { pieces.push_back(piece); });
    ASSERT_EQ(pieces.size(), run.hosts.empty() ? 2u : run.hosts.size() + 3);
    std::string joined;
    for (const std::string& piece : pieces) joined += piece;
    EXPECT_EQ(joined, nlohmann::ordered_json::parse(joined).dump(2) + "\n");
    EXPECT_EQ(joined, RenderJson(run));
    for (size_t i = 0; i < run.hosts.size(); ++i) {
      const std::string& piece = pieces[i + 2];
      EXPECT_NE(piece.find("\"name\": \"" + run.hosts[i].name + "\""), std::string::npos);
      EXPECT_EQ(piece.find("\"name\": \"" + run.hosts[(i + 1) % run.hosts.size()].name + "\","),
                std::string::npos);
    }
  }
}

TEST(ReportJsonTest, SummaryAndHostFields) {
  RunReport run = testing_fixture::MixedFleet();
  run.not_started = {"gpu17"};
  run.no_report = {{"gpu18", "in flight when the journal ended"}};
  run.interrupted = true;
  nlohmann::json doc = nlohmann::json::parse(RenderJson(run));
  EXPECT_EQ(doc["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(doc["tool"]["version"], "0.1.0");
  EXPECT_EQ(doc["start_time"], "2026-11-30T03:04:05.123Z");
  EXPECT_EQ(doc["duration_ms"], 14321);
  EXPECT_EQ(doc["exit_code"], 3);
  EXPECT_EQ(doc["summary"], nlohmann::json::parse(R"({"total": 18, "clean": 12, "dirty": 1,
                "unreachable": 2, "failed": 1, "not_ready": 0, "not_started": 1, "no_report": 1, "changed": 3})"));
  EXPECT_EQ(doc["not_started"], nlohmann::json::array({"gpu17"}));
  EXPECT_EQ(
      doc["no_report"],
      nlohmann::json::parse(R"([{"name": "gpu18", "why": "in flight when the journal ended"}])"));
  ASSERT_EQ(doc["hosts"].size(), 16u);

  const nlohmann::json& cleaned = doc["hosts"][4];
  EXPECT_EQ(cleaned["name"], "gpu05");
  EXPECT_EQ(cleaned["status"], "clean");
  EXPECT_EQ(cleaned["outcome"], "cleaned");
  EXPECT_EQ(cleaned["changed"], true);
  EXPECT_EQ(cleaned["error_kind"], nullptr);
  EXPECT_EQ(cleaned["holders"][0]["fate"], "terminated");
  EXPECT_EQ(cleaned["holders"][7]["fate"], "killed");
  EXPECT_EQ(cleaned["gpus_before"][0]["memory_used_mib"], 70000);
  EXPECT_EQ(cleaned["gpus_after"][0]["memory_total_mib"], 143771);
  EXPECT_EQ(cleaned["units_stopped"], nlohmann::json::array({"vllm.service"}));

  const nlohmann::json& unreachable = doc["hosts"][13];
  EXPECT_EQ(unreachable["status"], "unreachable");
  EXPECT_EQ(unreachable["error_kind"], "connect_timeout");
  EXPECT_EQ(unreachable["attempts"], 3);
  EXPECT_EQ(unreachable["host_key_fingerprint"], nullptr);
  EXPECT_EQ(doc["host_key_policy"], nullptr);
}

TEST(ReportJsonTest, HostKeyPolicyAndFingerprints) {
  RunReport run = testing_fixture::MixedFleet();
  run.host_key_policy = "off";
  run.hosts[0].host_key_fingerprint = "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8";
  nlohmann::json doc = nlohmann::json::parse(RenderJson(run));
  EXPECT_EQ(doc["host_key_policy"], "off");
  EXPECT_EQ(doc["hosts"][0]["host_key_fingerprint"],
            "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8");
  EXPECT_EQ(doc["hosts"][1]["host_key_fingerprint"], nullptr);
}

TEST(ReportJsonTest, UnknownMemoryIsNullAndBadUtf8DoesNotThrow) {
  RunReport run = testing_fixture::MixedFleet();
  run.hosts.resize(1);
  run.hosts[0].gpus_after[2].used_mib.reset();
  run.hosts[0].holders[0].cmdline = "bad \xff\xfe bytes";
  nlohmann::json doc = nlohmann::json::parse(RenderJson(run));
  EXPECT_TRUE(doc["hosts"][0]["gpus_after"][2]["memory_used_mib"].is_null());
  EXPECT_EQ(doc["hosts"][0]["holders"][0]["cmdline"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST(ReportJsonTest, LostGpuKeepsIndexMinusOneAndBusIdRecoveryActionShown) {
  nlohmann::json doc = nlohmann::json::parse(RenderJson(testing_fixture::DriverSignalsFleet()));
  const nlohmann::json& lost = doc["hosts"][0]["gpus_after"][2];
  EXPECT_EQ(lost["index"], -1);
  EXPECT_EQ(lost["bus_id"], "0000:B1:00.0");
  EXPECT_EQ(lost["state"], "lost");
  EXPECT_EQ(lost["detail"],
            "Unable to determine the device handle for GPU0000:B1:00.0: Unknown Error\x1b[2J");
  EXPECT_TRUE(lost["recovery_action"].is_null());
  const nlohmann::json& reset = doc["hosts"][1]["gpus_after"][3];
  EXPECT_EQ(reset["state"], "needs_recovery");
  EXPECT_EQ(reset["recovery_action"], "Reset");
  EXPECT_EQ(doc["hosts"][1]["summary"], "GPU 3 needs recovery (Reset)");
}

TEST(ReportJsonTest, UtcTimestamps) {
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  EXPECT_EQ(FormatUtcTimestamp(system_clock::time_point(milliseconds(0))),
            "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcTimestamp(system_clock::time_point(milliseconds(1796007845007))),
            "2026-11-30T03:04:05.007Z");
}

}  // namespace
}  // namespace fleetreap
