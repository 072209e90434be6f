#include "fleetreap/report/report_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "fleetreap/base/time_format.h"
#include "fleetreap/report/report_json.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ReadFile;

std::string Golden(const std::string& name) {
  return ReadFile(std::string(FLEETREAP_TESTDATA_DIR) + "/golden/" + name);
}

// RenderJson -> ReadReportJson -> RenderJson gives the same bytes.
void ExpectRoundTrip(const std::string& json) {
  RunReport report;
  Status status = ReadReportJson(json, "golden.json", &report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(RenderJson(report), json);
}

TEST(ReportReaderTest, GoldenReportsRoundTrip) {
  for (const char* name : {"report.json", "report_dry_run.json"}) {
    SCOPED_TRACE(name);
    ExpectRoundTrip(Golden(name));
  }
}

TEST(ReportReaderTest, FixtureFleetsRoundTrip) {
  ExpectRoundTrip(RenderJson(testing_fixture::MixedFleet()));
  ExpectRoundTrip(RenderJson(testing_fixture::DriverSignalsFleet()));
  ExpectRoundTrip(RenderJson(testing_fixture::DryRunFleet()));
}

// Every optional field set: scope, owner, recovery action, fingerprints.
TEST(ReportReaderTest, EveryFieldRoundTrips) {
  RunReport run = testing_fixture::MixedFleet();
  run.interrupted = true;
  run.host_key_policy = "accept-new";
  run.scope.gpus = std::vector<int>{4, 5};
  run.scope.cgroup = "/system.slice/slurmstepd.scope/job_41";
  run.scope.slurm_job = "41";
  run.scope.source = "slurm";
  run.not_started = {"gpu17", "gpu18"};
  HostReport& host = run.hosts[4];
  host.host_key_fingerprint = "SHA256:abc";
  host.gpus_before[0].recovery_action = "Reset";
  host.gpus_before[0].detail = "GPU is lost";
  host.gpus_before[1].used_mib.reset();
  host.units_skipped = {"x.service: Restart=always"};
  host.respawning_parent = "159 (supervisor.py)";
  host.gpus_reset = {3};
  host.reset_blocked_by = "nvidia-persistenced";
  host.nvidia_smi_error = "NVIDIA-SMI has failed";
  Holder& holder = host.holders[0];
  holder.protected_by = "nv-hostengine";
  holder.named_like = "nvidia-persistenced";
  holder.out_of_scope = "not in Slurm job 41 (slurm job 42)";
  holder.owner.cgroup = "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0";
  holder.owner.unit = "vllm.service";
  holder.owner.unit_restart = "always";
  holder.owner.container_runtime = "docker";
  holder.owner.container_id = std::string(64, 'a');
  holder.owner.pod_uid = "0f1e";
  holder.owner.slurm_job = "42";
  holder.owner.slurm_step = "0";
  holder.round = 2;
  holder.state = 'D';
  holder.start_time = 18446744073709551615ull;
  ExpectRoundTrip(RenderJson(run));
}

TEST(ReportReaderTest, OptionalFieldsMayBeAbsent) {
  RunReport report;
  Status status = ReadReportJson(
      R"({"schema_version": 1, "start_time": "2026-12-01T11:00:00.000Z",
          "playbook": "default", "dry_run": false,
          "hosts": [{"name": "gpu01", "status": "dirty",
                     "gpus_after": [{"index": 5, "state": "busy"}],
                     "holders": [{"pid": 4242, "fate": "unkillable"}]}]})",
      "min.json", &report);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.hosts[0].status, HostStatus::kDirty);
  EXPECT_EQ(report.hosts[0].port, 22);
  EXPECT_EQ(report.hosts[0].gpus_after[0].index, 5);
  EXPECT_FALSE(report.hosts[0].gpus_after[0].used_mib.has_value());
  EXPECT_EQ(report.hosts[0].holders[0].fate, HolderFate::kUnkillable);
  EXPECT_TRUE(report.scope.empty());
  EXPECT_EQ(ExitCodeFor(report), 1);
}

constexpr char kHead[] = R"("schema_version": 1, "start_time": "2026-12-01T11:00:00.000Z", )"
                         R"("playbook": "default", "dry_run": false, )";

std::string Doc(const std::string& hosts) {
  return std::string("{") + kHead + R"("hosts": [)" + hosts + "]}";
}

TEST(ReportReaderTest, BadInputErrorsNameFileAndField) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"", "r.json: not JSON (parse error at byte 1)"},
      {"{\"hosts\": [", "r.json: not JSON (parse error at byte 12)"},
      {"gpu01 clean", "r.json: not JSON (parse error at byte 1)"},
      {"[]", "r.json: expected a report object, got array"},
      {"{}", "r.json: missing \"schema_version\""},
      {R"({"schema_version": 3})",
       "r.json: schema_version 3 is not supported (this fleetreap reads 1 to 2)"},
      {R"({"schema_version": 0})",
       "r.json: schema_version 0 is not supported (this fleetreap reads 1 to 2)"},
      {R"({"schema_version": "1"})", "r.json: schema_version: expected an integer, got string"},
      {R"({"schema_version": 1, "playbook": "p", "dry_run": false, "hosts": []})",
       "r.json: missing \"start_time\""},
      {R"({"schema_version": 1, "start_time": "yesterday"})",
       "r.json: start_time: expected YYYY-MM-DDTHH:MM:SS.mmmZ, got \"yesterday\""},
      {R"({"schema_version": 1, "start_time": "2026-02-30T11:00:00.000Z"})",
       "r.json: start_time: expected YYYY-MM-DDTHH:MM:SS.mmmZ, got "
       "\"2026-02-30T11:00:00.000Z\""},
      {std::string("{") + kHead + "\"hosts\": {}}", "r.json: hosts: expected an array, got object"},
      {std::string("{") + kHead + "\"dry_run\": 1, \"hosts\": []}",
       "r.json: dry_run: expected true or false, got number"},
      {Doc(R"({"status": "clean"})"), "r.json: hosts[0]: missing \"name\""},
      {Doc(R"({"name": null, "status": "clean"})"), "r.json: hosts[0]: missing \"name\""},
      {Doc(R"({"name": "a", "status": "clean"}, {"name": "b"})"),
       "r.json: hosts[1]: missing \"status\""},
      {Doc(R"({"name": "a", "status": "bogus"})"),
       "r.json: hosts[0].status: unknown value \"bogus\""},
      {Doc(R"({"name": "a", "status": "clean", "port": "22"})"),
       "r.json: hosts[0].port: expected an integer, got string"},
      {Doc(R"({"name": "a", "status": "failed", "error_kind": "gremlins"})"),
       "r.json: hosts[0].error_kind: unknown value \"gremlins\""},
      {Doc(R"({"name": "a", "status": "clean", "gpus_after": [{"state": "clean"}]})"),
       "r.json: hosts[0].gpus_after[0]: missing \"index\""},
      {Doc(R"({"name": "a", "status": "clean", "gpus_before": [{"index": 0, "state": "hot"}]})"),
       "r.json: hosts[0].gpus_before[0].state: unknown value \"hot\""},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"fate": "killed"}]})"),
       "r.json: hosts[0].holders[0]: missing \"pid\""},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"pid": 1, "fate": "eaten"}]})"),
       "r.json: hosts[0].holders[0].fate: unknown value \"eaten\""},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"pid": 1, "fate": "killed",
               "state": "DS"}]})"),
       "r.json: hosts[0].holders[0].state: expected one character, got \"DS\""},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"pid": 1, "fate": "killed",
               "gpus": [0, "1"]}]})"),
       "r.json: hosts[0].holders[0].gpus[1]: expected an integer, got string"},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"pid": 1, "fate": "killed",
               "start_time": -5}]})"),
       "r.json: hosts[0].holders[0].start_time: expected a non-negative integer, got number"},
      {Doc(R"({"name": "a", "status": "clean", "holders": [{"pid": 1, "fate": "killed",
               "owner": {"slurm_job": 41}}]})"),
       "r.json: hosts[0].holders[0].owner.slurm_job: expected a string, got number"},
      {Doc(R"({"name": "a", "status": "clean", "timings": [{"duration_ms": 3}]})"),
       "r.json: hosts[0].timings[0]: missing \"step\""},
      {Doc(R"("gpu01")"), "r.json: hosts[0]: expected an object, got string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    RunReport report;
    Status status = ReadReportJson(c.text, "r.json", &report);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(status.message(), c.error);
  }
}

TEST(ReportReaderTest, ParsesTimestamps) {
  std::chrono::system_clock::time_point time;
  ASSERT_TRUE(ParseUtcTimestamp("2026-11-30T03:04:05.678Z", &time));
  EXPECT_EQ(FormatUtcTimestamp(time), "2026-11-30T03:04:05.678Z");
  for (const char* bad : {"", "2026-11-30T03:04:05Z", "2026-11-30 03:04:05.678Z",
                          "2026-13-01T00:00:00.000Z", "2026-11-30T03:04:05.678Zx"}) {
    EXPECT_FALSE(ParseUtcTimestamp(bad, &time)) << bad;
  }
}

}  // namespace
}  // namespace fleetreap
