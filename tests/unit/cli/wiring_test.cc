#include "fleetreap/cli/wiring.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "fleetreap/version.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(FleetRunnerTest, SettingsFromOptions) {
  Options options;
  options.forks = 0;
  options.retries = 5;
  options.command_timeout = milliseconds(3000);
  options.deadline = milliseconds(90000);
  options.dry_run = true;
  options.protect = {"x"};
  FleetSettings settings = FleetSettingsFor(options);
  EXPECT_EQ(settings.forks, 1);
  EXPECT_EQ(settings.retries, 5);
  EXPECT_EQ(settings.command_timeout, milliseconds(3000));
  EXPECT_EQ(settings.deadline, milliseconds(90000));
  EXPECT_TRUE(settings.dry_run);
  EXPECT_EQ(settings.extra_protect, std::vector<std::string>{"x"});
}

TEST(RunMetadataTest, VersionPlaybookAndHostKeyPolicyAreSetOnTheReport) {
  Options options;
  options.dry_run = true;
  RunReport report;
  SetRunMetadata(options, "vllm", &report);
  EXPECT_EQ(report.tool_version, FLEETREAP_VERSION);
  EXPECT_EQ(report.playbook, "vllm");
  EXPECT_EQ(report.host_key_policy, "strict");
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  SetRunMetadata(options, "vllm", &report);
  EXPECT_EQ(report.host_key_policy, "accept-new");
  options.local = true;
  Scope scope;
  scope.cgroup = "/x";
  RunReport header = RunHeaderFor(options, "default", scope);
  EXPECT_EQ(header.host_key_policy, "");
  EXPECT_EQ(header.playbook, "default");
  EXPECT_EQ(header.tool_version, FLEETREAP_VERSION);
  EXPECT_TRUE(header.dry_run);
  EXPECT_EQ(header.scope.cgroup, "/x");
  EXPECT_NE(header.start_time, std::chrono::system_clock::time_point());
}

// The scope is the flags', or under --local in a Slurm prolog or epilog
// (SLURM_JOB_ID and no SLURM_STEP_ID) the job's, pods spared on top.
TEST(RunScopeTest, FlagsOrTheSlurmJobFromTheEnvironment) {
  const Environment epilog = {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_GPUS", "0,1"}};
  const Environment step = {{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "0"}};
  Options local;
  local.local = true;
  Scope scope;
  ASSERT_TRUE(RunScopeFor(local, {}, &scope).ok());
  EXPECT_TRUE(scope.empty());
  ASSERT_TRUE(RunScopeFor(local, step, &scope).ok());
  EXPECT_TRUE(scope.empty());
  ASSERT_TRUE(RunScopeFor(local, epilog, &scope).ok());
  EXPECT_EQ(scope.slurm_job, "42");
  EXPECT_EQ(scope.source, "slurm");
  EXPECT_EQ(*scope.gpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(scope.gpus_are_minors);
  EXPECT_FALSE(scope.spare_pods);

  Options ssh;  // over SSH the controller's Slurm job says nothing about the hosts
  ASSERT_TRUE(RunScopeFor(ssh, epilog, &scope).ok());
  EXPECT_TRUE(scope.empty());

  Options pods = local;
  pods.scope.spare_pods = true;
  pods.scope.source = "flags";
  ASSERT_TRUE(RunScopeFor(pods, {}, &scope).ok());
  EXPECT_TRUE(scope.spare_pods);
  EXPECT_EQ(scope.source, "flags");
  ASSERT_TRUE(RunScopeFor(pods, epilog, &scope).ok());
  EXPECT_EQ(scope.slurm_job, "42");
  EXPECT_TRUE(scope.spare_pods);

  Options gpus = pods;
  gpus.scope.gpus = std::vector<int>{4, 5};
  ASSERT_TRUE(RunScopeFor(gpus, epilog, &scope).ok());
  EXPECT_EQ(scope.slurm_job, "");
  EXPECT_EQ(*scope.gpus, (std::vector<int>{4, 5}));
  EXPECT_FALSE(scope.gpus_are_minors);

  Status bad = RunScopeFor(local, {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_GPUS", "x"}}, &scope);
  EXPECT_EQ(bad.kind(), ErrorKind::kUsage);
}

TEST(HostKeyPolicyWarningTest, OnlyOffWarnsAndSaysWhereTheKeysAre) {
  Options options;
  EXPECT_EQ(HostKeyPolicyWarning(options), "");
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  EXPECT_EQ(HostKeyPolicyWarning(options), "");
  options.host_key_policy = HostKeyPolicy::kOff;
  const std::string warning = HostKeyPolicyWarning(options);
  EXPECT_NE(warning.find("--host-key-policy off"), std::string::npos) << warning;
  EXPECT_NE(warning.find("NOT checked"), std::string::npos) << warning;
  EXPECT_NE(warning.find("host_key_fingerprint"), std::string::npos) << warning;
  options.local = true;
  EXPECT_EQ(HostKeyPolicyWarning(options), "");
}

TEST(SshOptionsForTest, InventoryWinsOverCommandLine) {
  Options options;
  options.user = "cli-user";
  options.identity = "/cli/key";
  options.known_hosts = "/kh";
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  options.connect_timeout = milliseconds(2500);
  Host host;
  host.name = "gpu07";
  host.address = "10.0.0.7";
  host.port = 2207;
  host.identity_file = "/inv/key";
  SshTransportOptions ssh = SshOptionsFor(host, options);
  EXPECT_EQ(ssh.name, "gpu07");
  EXPECT_EQ(ssh.address, "10.0.0.7");
  EXPECT_EQ(ssh.port, 2207);
  EXPECT_EQ(ssh.user, "cli-user");
  EXPECT_EQ(ssh.identity_files, (std::vector<std::string>{"/inv/key", "/cli/key"}));
  EXPECT_EQ(ssh.known_hosts, "/kh");
  EXPECT_EQ(ssh.host_key_policy, HostKeyPolicy::kAcceptNew);
  EXPECT_EQ(ssh.connect_timeout, milliseconds(2500));
  host.user = "inv-user";
  host.address = "";
  ssh = SshOptionsFor(host, options);
  EXPECT_EQ(ssh.user, "inv-user");
  EXPECT_EQ(ssh.address, "gpu07");
  EXPECT_TRUE(ssh.use_agent);
  options.no_agent = true;
  EXPECT_FALSE(SshOptionsFor(host, options).use_agent);
}

TEST(ProgressStyleTest, NoRedrawsOffATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  Options options;
  options.dry_run = true;
  options.color = "always";
  ProgressStyle style = ProgressStyleFor(options, file);
  std::fclose(file);
  EXPECT_FALSE(style.live);
  EXPECT_EQ(style.width, 0);
  EXPECT_TRUE(style.dry_run);
  EXPECT_EQ(style.color, std::getenv("NO_COLOR") == nullptr || std::getenv("NO_COLOR")[0] == '\0');
}

TEST(WiringTest, PlanRequestAndReportFilesFromOptions) {
  Options options;
  options.hosts = {"lab.yaml"};
  options.limit = "gpu*";
  options.playbook = "pb.yaml";
  options.become = true;
  options.command_timeout = milliseconds(4000);
  options.json = "-";
  options.junit = "r.xml";
  options.summary_md = "r.md";
  options.failed_hosts = "failed.txt";
  options.drain_reasons = "drain.txt";
  FleetPlanRequest request = FleetPlanRequestFor(options);
  EXPECT_FALSE(request.local);
  EXPECT_EQ(request.hosts, std::vector<std::string>{"lab.yaml"});
  EXPECT_EQ(request.limit, "gpu*");
  EXPECT_EQ(request.playbook, "pb.yaml");
  EXPECT_TRUE(request.become);
  EXPECT_EQ(request.command_timeout, milliseconds(4000));
  ReportFiles files = ReportFilesFor(options);
  EXPECT_EQ(files.json, "-");
  EXPECT_EQ(files.junit, "r.xml");
  EXPECT_EQ(files.summary_md, "r.md");
  EXPECT_EQ(files.failed_hosts, "failed.txt");
  EXPECT_EQ(files.drain_reasons, "drain.txt");
}

}  // namespace
}  // namespace fleetreap
