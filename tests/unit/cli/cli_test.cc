#include "fleetreap/cli/cli.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/version.h"

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
      {{"--hosts", "x", "--forks", "0"}, "--forks: must be 1 to 100000, got 0"},
      {{"--hosts", "x", "--fanout", "threads", "--forks", "5000"},
       "--forks: must be 1 to 4096, got 5000 (--fanout threads)"},
      {{"--hosts", "x", "--fanout", "tasks"},
       "--fanout: expected fibers or threads, got \"tasks\""},
      {{"--hosts", "x", "--deadline", "soon"},
       "--deadline: invalid duration \"soon\" (use e.g. 10s, 500ms, 2m)"},
      {{"--hosts", "x", "--host-key-policy", "yolo"},
       "--host-key-policy: expected strict, accept-new or off, got \"yolo\""},
      {{"--hosts", "x", "--json", "-", "--junit", "-"},
       "only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons, --metrics, "
       "--html, --journal can be '-'"},
      {{"--hosts", "x", "--json", "-", "--journal", "-"},
       "only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons, --metrics, "
       "--html, --journal can be '-'"},
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

TEST(CliTest, ScopeFlags) {
  CliResult r = Parse({"--local", "--spare-pods"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_TRUE(r.options.scope.spare_pods);
  EXPECT_EQ(r.options.scope.source, "flags");
  EXPECT_FALSE(r.options.scope.gpus);
  r = Parse({"--local", "--spare-pods", "--gpus", "4-7", "--cgroup", "/slurm"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_TRUE(r.options.scope.spare_pods);
  EXPECT_EQ(*r.options.scope.gpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(r.options.scope.cgroup, "/slurm");
  EXPECT_FALSE(r.options.scope.gpus_are_minors);
  // Device minors, translated to indexes by each host's scan.
  r = Parse({"--local", "--gpus", "minor:0,2-3"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(*r.options.scope.gpus, (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(r.options.scope.gpus_are_minors);
  EXPECT_EQ(r.options.scope.source, "flags");
  r = Parse({"--local", "--gpus", "minor:"});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  r = Parse({"--local", "--gpus", "minors:1"});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  r = Parse({"--local"});
  EXPECT_TRUE(r.options.scope.empty());
  EXPECT_EQ(r.options.scope.source, "");
  r = Parse({"--local", "--cgroup", "slurm"});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  EXPECT_EQ(r.error, "--cgroup: \"slurm\" is not a cgroup path (/...)");
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

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CliTest, HelpFitsEightyColumnsAndEndsWithExamplesAndTheManPage) {
  for (const std::string& text : {HelpText(), MergeHelpText()}) {
    for (const std::string& line : Lines(text)) {
      EXPECT_LE(line.size(), 80U) << "'" << line << "'";
      EXPECT_EQ(line.find('\t'), std::string::npos) << line;
      EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing space: '" << line << "'";
    }
  }
  const std::vector<std::string> help = Lines(HelpText());
  EXPECT_EQ(help.back(), "See fleetreap(1) and fleetreap-merge(1) for more (man fleetreap).");
  const std::string text = HelpText();
  const size_t examples = text.find("\nExamples:\n");
  ASSERT_NE(examples, std::string::npos);
  EXPECT_GT(examples, text.find("Exit status:"));
  EXPECT_NE(text.find("  fleetreap --hosts inventory.yaml --list-hosts\n", examples),
            std::string::npos);
  EXPECT_NE(text.find("  fleetreap merge ", examples), std::string::npos);
  EXPECT_EQ(Lines(MergeHelpText()).back(),
            "See fleetreap-merge(1) for more (man fleetreap-merge).");
}

TEST(CliTest, VersionNamesTheCommitAndTheLibraries) {
  const std::vector<std::string> lines = Lines(VersionText());
  ASSERT_GE(lines.size(), 3U);
  EXPECT_EQ(lines[0], std::string("fleetreap ") + FLEETREAP_VERSION);
  EXPECT_EQ(lines[1], std::string("commit ") + kGitCommit);
  const std::string commit = kGitCommit;
  EXPECT_TRUE(commit == "unknown" || commit.find_first_not_of("0123456789abcdef") >= 12) << commit;
  const std::string text = VersionText();
  for (const char* library :
       {"libssh 0.", "yaml-cpp ", "nlohmann/json 3.", "spdlog 1.", "Boost 1."}) {
    EXPECT_NE(text.find(library), std::string::npos) << library << " in\n" << text;
  }
  for (const std::string& line : lines) EXPECT_LE(line.size(), 80U) << line;
}

TEST(CliTest, GroupedShortSwitchesAreCheckedLikeSeparateOnes) {
  const std::string conflict = "--quiet and -v cannot be used together";
  for (std::vector<const char*> args : {std::vector<const char*>{"-q", "-v"},
                                        {"-qv"},
                                        {"-vq"},
                                        {"-nqv"},
                                        {"-qvv"},
                                        {"--quiet", "-vv"}}) {
    args.insert(args.begin(), {"--hosts", "x"});
    CliResult r = Parse(args);
    EXPECT_EQ(r.action, CliAction::kUsageError) << args.back();
    EXPECT_EQ(r.error, conflict) << args.back();
  }
  CliResult r = Parse({"--hosts", "x", "-nbvv"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_TRUE(r.options.dry_run);
  EXPECT_TRUE(r.options.become);
  EXPECT_EQ(r.options.verbosity, 2);
  r = Parse({"--hosts", "x", "-f8", "-vvv"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.forks, 8);
  EXPECT_EQ(r.options.verbosity, 3);
  r = Parse({"--hosts", "x", "-nq"});
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_TRUE(r.options.quiet);
}

TEST(CliTest, WholeWordsOnlyAndAnsiblesSpellings) {
  CliResult r = Parse({"--hosts", "x", "--list"});
  EXPECT_EQ(r.action, CliAction::kUsageError);  // no prefix of --list-hosts
  r = Parse({"--hosts", "x", "--dry"});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  EXPECT_TRUE(Parse({"--hosts", "x", "-C"}).options.dry_run);
  EXPECT_TRUE(Parse({"--hosts", "x", "--check"}).options.dry_run);
  EXPECT_TRUE(Parse({"--hosts", "x", "--list-hosts"}).options.list_hosts);
}

TEST(CliTest, AnIdentityThatCannotBeReadIsAUsageError) {
  char dir_template[] = "/tmp/fleetreap-cli-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string key = dir + "/id_ed25519";
  std::ofstream(key) << "not really a key\n";
  chmod(key.c_str(), 0644);

  CliResult r = Parse({"--hosts", "x", "--identity", key.c_str()});
  EXPECT_EQ(r.action, CliAction::kUsageError);  // as ssh: UNPROTECTED PRIVATE KEY FILE
  EXPECT_EQ(r.error, "--identity " + key +
                         ": permissions 0644 are too open (ssh refuses such a key); chmod 600 it");
  chmod(key.c_str(), 0600);
  r = Parse({"--hosts", "x", "--identity", key.c_str()});
  EXPECT_EQ(r.action, CliAction::kRun) << r.error;
  const std::string ansible = "--private-key=" + key;  // Ansible's spelling
  r = Parse({"--hosts", "x", ansible.c_str()});
  EXPECT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.identity, key);
  const std::string missing = dir + "/nope";
  r = Parse({"--hosts", "x", "--identity", missing.c_str()});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  EXPECT_EQ(r.error, "--identity: cannot read \"" + missing + "\": No such file or directory");
  r = Parse({"--local", "--identity", dir.c_str()});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  EXPECT_EQ(r.error, "--identity: cannot read \"" + dir + "\": Is a directory");

  unlink(key.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace fleetreap
