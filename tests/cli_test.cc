#include "fleetreap/cli/cli.h"

#include <gtest/gtest.h>

#include <vector>

namespace fleetreap {
namespace {

CliResult Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fleetreap");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CliTest, Defaults) {
  CliResult r = Parse({"--hosts", "inv.yaml"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.hosts, std::vector<std::string>{"inv.yaml"});
  EXPECT_EQ(r.options.forks, 64);
  EXPECT_EQ(r.options.connect_timeout.count(), 10000);
  EXPECT_EQ(r.options.command_timeout.count(), 60000);
  EXPECT_EQ(r.options.retries, 2);
  EXPECT_EQ(r.options.host_key_policy, HostKeyPolicy::kStrict);
}

TEST(CliTest, FlagsAndVerbosity) {
  CliResult r = Parse({"-i", "x.yaml", "-vv", "--forks", "8", "--connect-timeout", "1.5s",
                       "--host-key-policy", "accept-new", "--protect", "a", "--protect",
                       "/usr/bin/b", "-n", "--json", "-"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.verbosity, 2);
  EXPECT_EQ(r.options.forks, 8);
  EXPECT_EQ(r.options.connect_timeout.count(), 1500);
  EXPECT_EQ(r.options.host_key_policy, HostKeyPolicy::kAcceptNew);
  EXPECT_EQ(r.options.protect, (std::vector<std::string>{"a", "/usr/bin/b"}));
  EXPECT_TRUE(r.options.dry_run);
  EXPECT_EQ(r.options.json, "-");
  EXPECT_FALSE(r.options.no_agent);
  EXPECT_TRUE(Parse({"-i", "x.yaml", "--no-agent"}).options.no_agent);
}

TEST(CliTest, UsageErrorsAreOneLine) {
  struct Row {
    std::vector<const char*> args;
    const char* error;
  };
  const Row rows[] = {
      {{"--bogus"}, "unrecognised option '--bogus'"},
      {{"--hosts", "x", "--ssh-config", "my_config"},
       "unexpected argument 'my_config' (every value belongs to a flag)"},
      {{"--hosts"}, "the required argument for option '--hosts' is missing"},
      {{"--hosts", "x", "--forks", "many"},
       "the argument ('many') for option '--forks' is invalid"},
      {{"--hosts", "x", "--forks", "0"}, "--forks: must be 1 to 4096, got 0"},
      {{"--hosts", "x", "--deadline", "soon"},
       "--deadline: invalid duration \"soon\" (use e.g. 10s, 500ms, 2m)"},
      {{"--hosts", "x", "--host-key-policy", "yolo"},
       "--host-key-policy: expected strict, accept-new or off, got \"yolo\""},
      {{"--hosts", "x", "--json", "-", "--junit", "-"},
       "only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons can be '-'"},
      {{}, "no hosts: give --hosts FILE, --nodes NODESET (or --local for this machine)"},
      {{"--local", "--hosts", "x"}, "--local and --hosts or --nodes cannot be used together"},
  };
  for (const Row& row : rows) {
    CliResult r = Parse(row.args);
    EXPECT_EQ(r.action, CliAction::kUsageError);
    EXPECT_EQ(r.error, row.error);
    EXPECT_EQ(r.error.find('\n'), std::string::npos);
  }
}

TEST(CliTest, SparePodsScope) {
  CliResult r = Parse({"--local", "--spare-pods"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  Scope scope;
  ASSERT_TRUE(ScopeFromOptions(r.options, "", "", &scope).ok());
  EXPECT_TRUE(scope.spare_pods);
  EXPECT_EQ(scope.source, "flags");
  EXPECT_FALSE(scope.gpus);
  // In a Slurm epilog the job's scope stays, pods spared on top.
  ASSERT_TRUE(ScopeFromOptions(r.options, "42", "0,1", &scope).ok());
  EXPECT_EQ(scope.slurm_job, "42");
  EXPECT_TRUE(scope.spare_pods);
  r = Parse({"--local", "--spare-pods", "--gpus", "4-7"});
  ASSERT_TRUE(ScopeFromOptions(r.options, "", "", &scope).ok());
  EXPECT_TRUE(scope.spare_pods);
  EXPECT_EQ(*scope.gpus, (std::vector<int>{4, 5, 6, 7}));
  ASSERT_TRUE(ScopeFromOptions(Parse({"--local"}).options, "", "", &scope).ok());
  EXPECT_TRUE(scope.empty());
}

TEST(CliTest, HelpAndVersion) {
  EXPECT_EQ(Parse({"--help"}).action, CliAction::kHelp);
  EXPECT_EQ(Parse({"-V"}).action, CliAction::kVersion);
  const std::string help = HelpText();
  for (const char* group : {"Selection:", "Connection:", "Escalation:", "Output:"}) {
    EXPECT_NE(help.find(group), std::string::npos) << group;
  }
  for (const char* flag : {"--hosts",
                           "--limit",
                           "--list-hosts",
                           "--local",
                           "--forks",
                           "--connect-timeout",
                           "--command-timeout",
                           "--host-timeout",
                           "--deadline",
                           "--retries",
                           "--identity",
                           "--known-hosts",
                           "--host-key-policy",
                           "--no-agent",
                           "--ssh-config",
                           "--ssh-config-file",
                           "--become",
                           "--playbook",
                           "--dry-run",
                           "--json",
                           "--junit",
                           "--summary-md",
                           "--log-dir",
                           "--failed-hosts",
                           "--quiet"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace fleetreap
