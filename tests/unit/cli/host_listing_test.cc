#include "fleetreap/cli/host_listing.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fleetreap/cli/wiring.h"

namespace fleetreap {
namespace {

// Two planned hosts as SshOptionsFor completes them with no flags.
std::vector<ListedHost> Listed() {
  std::vector<Host> hosts(2);
  hosts[0].name = "gpu01";
  hosts[0].address = "10.0.1.1";
  hosts[0].user = "ops";
  hosts[0].become = true;
  hosts[0].identity_file = "/keys/id";
  hosts[0].playbook = "playbooks/vllm.yaml";
  hosts[0].groups = {"gpus"};
  hosts[0].source = "inv.yaml:4";
  hosts[1].name = "login1";
  hosts[1].address = "bastion.example.com";
  hosts[1].port = 2222;
  hosts[1].groups = {"ungrouped"};
  hosts[1].source = "inv.yaml:9";
  FleetPlanSet set;
  for (Host& host : hosts) {
    FleetPlan plan;
    plan.host = host;
    set.plans.push_back(plan);
  }
  return ListedHostsFor(set, Options());
}

TEST(HostListingTest, VerboseShowsEverySettingInAlignedColumns) {
  EXPECT_EQ(FormatHostListVerbose(Listed()),
            "NAME    ADDRESS              PORT  USER  BECOME  KEY       PLAYBOOK\n"
            "gpu01   10.0.1.1               22  ops   sudo    /keys/id  playbooks/vllm.yaml\n"
            "login1  bastion.example.com  2222  -     -       -         -\n");
  EXPECT_EQ(FormatHostListVerbose({}), "");
}

TEST(HostListingTest, JsonHasOneObjectPerHost) {
  EXPECT_EQ(
      FormatHostListJson({Listed()[1]}),
      "[\n  {\n    \"name\": \"login1\",\n    \"address\": \"bastion.example.com\",\n"
      "    \"port\": 2222,\n    \"user\": null,\n    \"key_file\": null,\n"
      "    \"key_files\": [],\n    \"become\": false,\n    \"playbook\": null,\n"
      "    \"groups\": [\n      \"ungrouped\"\n    ],\n    \"source\": \"inv.yaml:9\"\n  }\n]\n");
}

// The listing shows what the transport is made with: SshOptionsFor's user,
// address and keys (both keys when the inventory and --identity name two:
// SSH offers both, the inventory's first), and the plan's become and playbook.
TEST(HostListingTest, ShowsWhatSshOffers) {
  Host host;
  host.name = "gpu07";
  host.identity_file = "/inv/key";
  host.become = true;  // BuildFleetPlans applied --become
  host.playbook = "p.yaml";
  FleetPlan plan;
  plan.host = host;
  FleetPlanSet set;
  set.plans = {plan};
  Options options;
  options.user = "me";
  options.identity = "/cli/key";
  options.verbosity = 1;
  std::vector<ListedHost> listed = ListedHostsFor(set, options);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].ssh.identity_files, SshOptionsFor(host, options).identity_files);
  EXPECT_EQ(HostListingFor(set, options),
            "NAME   ADDRESS  PORT  USER  BECOME  KEY                PLAYBOOK\n"
            "gpu07  gpu07      22  me    sudo    /inv/key,/cli/key  p.yaml\n");
  options.json = "-";
  const std::string json = HostListingFor(set, options);
  EXPECT_NE(json.find("\"key_file\": \"/inv/key\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"key_files\": [\n      \"/inv/key\",\n      \"/cli/key\"\n    ]"),
            std::string::npos)
      << json;
  options.json.clear();
  options.verbosity = 0;
  EXPECT_EQ(HostListingFor(set, options), "gpu07  gpu07  22  me\n");
}

}  // namespace
}  // namespace fleetreap

namespace fleetreap {
namespace {

// --list-hosts --json PATH: a symlink planted at PATH is replaced, its
// target never written.
TEST(HostListingTest, TheFileIsNeverWrittenThroughASymlink) {
  char pattern[] = "/tmp/fleetreap-listing-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string target = dir + "/motd";
  const std::string path = dir + "/hosts.json";
  std::ofstream(target) << "keep";
  ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
  ASSERT_TRUE(WriteHostListing("[]\n", path));
  std::ifstream kept(target);
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep");
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::remove(path.c_str());
  std::remove(target.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace fleetreap
