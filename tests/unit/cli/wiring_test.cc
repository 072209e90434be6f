#include "fleetreap/cli/wiring.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

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
  options.become = true;
  options.protect = {"x"};
  FleetSettings settings = FleetSettingsFor(options);
  EXPECT_EQ(settings.forks, 1);
  EXPECT_EQ(settings.retries, 5);
  EXPECT_EQ(settings.command_timeout, milliseconds(3000));
  EXPECT_EQ(settings.deadline, milliseconds(90000));
  EXPECT_TRUE(settings.dry_run);
  EXPECT_TRUE(settings.become);
  EXPECT_EQ(settings.extra_protect, std::vector<std::string>{"x"});
  EXPECT_EQ(settings.host_key_policy, "strict");
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  EXPECT_EQ(FleetSettingsFor(options).host_key_policy, "accept-new");
  options.local = true;
  EXPECT_EQ(FleetSettingsFor(options).host_key_policy, "");
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
