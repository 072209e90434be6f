// CleanHost's GPU reset with reset.yaml over the fake host: what the report
// says when the stop fails for one unit, and when the step is cut off after
// the stop (the units named first, the host failed).
#include <gtest/gtest.h>

#include <optional>

#include "fleetreap/escalation/playbook.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/runner/host_cleaner.h"
#include "support/fake_clock.h"
#include "support/fake_host_steps.h"

namespace fleetreap {
namespace {

using fake_host::FakeHost;
using fake_host::FakeProc;
using fake_host::FakeSteps;

const std::vector<std::string> kUnits = {"nvidia-persistenced.service", "nvidia-dcgm.service"};

// GPU 2 leaked memory; nvidia-persistenced and nv-hostengine, each the main
// process of its unit, hold every GPU.
FakeHost DaemonsOnAGhost() {
  FakeHost host;
  const char* exes[] = {"/usr/bin/nvidia-persistenced", "/usr/bin/nv-hostengine"};
  for (int i = 0; i < 2; ++i) {
    FakeProc daemon;
    daemon.pid = 50 + i;
    daemon.comm = i == 0 ? "nvidia-persiste" : "nv-hostengine";
    daemon.exe = exes[i];
    daemon.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
    daemon.unit = kUnits[i];
    daemon.cgroup = "/system.slice/" + kUnits[i];
    host.procs.push_back(daemon);
  }
  host.ghost_mib[2] = 10151;
  return host;
}

Host Gpu01() {
  Host host;
  host.name = "gpu01";
  host.expected_gpus = 8;
  return host;
}

// One CleanHost with reset.yaml over "host", the reset step answering
// "reply" (when given).
HostReport CleanWithReset(FakeHost host, const std::optional<GpuResetReply>& reply = {}) {
  Playbook reset;
  EXPECT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/reset.yaml", &reset).ok());
  host.reset_reply = reply;
  FakeClock clock;
  FakeSteps steps(std::move(host), &clock);
  const Host gpu01 = Gpu01();
  HostJob job;
  job.clock = &clock;
  job.playbook = &reset;
  job.host = &gpu01;
  return CleanHostWith(steps, job);
}

// The reply of a step whose guard ran: stop's exit, the states after it,
// the states at the end; no reset tried unless added.
GpuResetReply Reply(int stop_exit, std::vector<std::string> after_stop,
                    std::vector<std::string> active) {
  GpuResetReply reply;
  reply.guard_exit = 0;
  reply.stop_exit = stop_exit;
  reply.after_stop = std::move(after_stop);
  reply.start_exit = 0;
  reply.active = std::move(active);
  return reply;
}

TEST(HostCleanerResetTest, APartialStopResetsNothingAndSaysWhy) {
  GpuResetReply reply = Reply(1, {"inactive", "active"}, {"active", "active"});
  reply.stop_text = "Job for nvidia-dcgm.service canceled.";
  HostReport report = CleanWithReset(DaemonsOnAGhost(), reply);
  EXPECT_EQ(report.status, HostStatus::kDirty);
  EXPECT_TRUE(report.gpus_reset.empty());
  EXPECT_EQ(report.reset_units_stopped, std::vector<std::string>{"nvidia-persistenced.service"});
  EXPECT_EQ(report.reset_units_started, std::vector<std::string>{"nvidia-persistenced.service"});
  EXPECT_EQ(report.reset_blocked_by.rfind(
                "systemctl stop nvidia-persistenced.service nvidia-dcgm.service: Job for "
                "nvidia-dcgm.service canceled.; still running: nvidia-dcgm.service (active): no "
                "GPU reset tried",
                0),
            0u)
      << report.reset_blocked_by;
}

TEST(HostCleanerResetTest, AUnitNotActiveAgainIsSaidFirst) {
  GpuResetReply reply = Reply(0, {"inactive", "inactive"}, {"active", "failed"});
  reply.resets = {{2, 0, "GPU 00000000:0B:00.0 was successfully reset.", ""}};
  reply.start_exit = 1;
  HostReport report = CleanWithReset(DaemonsOnAGhost(), reply);
  EXPECT_EQ(report.status, HostStatus::kDirty);
  EXPECT_EQ(report.reset_units_stopped, kUnits);
  EXPECT_EQ(report.reset_units_started, std::vector<std::string>{"nvidia-persistenced.service"});
  EXPECT_EQ(HostMessage(report),
            "not active again after the GPU reset: nvidia-dcgm.service (failed)");
  EXPECT_EQ(report.findings.front().kind, finding_kind::kResetUnitNotRestarted);
}

TEST(HostCleanerResetTest, AStepCutOffAfterTheStopNamesTheUnitsFirst) {
  FakeHost host = DaemonsOnAGhost();
  host.reset_error = ErrorKind::kCommandTimeout;
  HostReport report = CleanWithReset(host);
  EXPECT_EQ(report.status, HostStatus::kFailed);
  EXPECT_EQ(report.reset_units_stopped, kUnits);
  EXPECT_TRUE(report.reset_units_started.empty());
  EXPECT_EQ(report.error_message.rfind("not known to run again after the GPU reset was cut off: "
                                       "nvidia-persistenced.service, nvidia-dcgm.service",
                                       0),
            0u)
      << report.error_message;
}

// A reset the host deadline leaves no room for is not started: no reply,
// read once as blocked, and the ladder ends (it does not ask again).
TEST(HostCleanerResetTest, AResetNotStartedForTheDeadlineIsReadOnce) {
  FakeHost host = DaemonsOnAGhost();
  host.reset_error = ErrorKind::kHostTimeout;
  HostReport report = CleanWithReset(host);
  EXPECT_EQ(report.status, HostStatus::kDirty);
  EXPECT_TRUE(report.reset_units_stopped.empty());
  EXPECT_NE(report.reset_blocked_by.find("ran past"), std::string::npos) << report.reset_blocked_by;
}

TEST(HostCleanerResetTest, NoGuardStopsNothing) {
  GpuResetReply reply;
  reply.guard_exit = 1;
  HostReport report = CleanWithReset(DaemonsOnAGhost(), reply);
  EXPECT_EQ(report.status, HostStatus::kDirty);
  EXPECT_TRUE(report.reset_units_stopped.empty());
  EXPECT_NE(report.reset_blocked_by.find("no guard could start"), std::string::npos);
}

}  // namespace
}  // namespace fleetreap
