#include "fleetreap/cli/host_listing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

std::vector<Host> Hosts() {
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
  return hosts;
}

TEST(HostListingTest, VerboseShowsEverySettingInAlignedColumns) {
  EXPECT_EQ(FormatHostListVerbose(Hosts()),
            "NAME    ADDRESS              PORT  USER  BECOME  KEY       PLAYBOOK\n"
            "gpu01   10.0.1.1               22  ops   sudo    /keys/id  playbooks/vllm.yaml\n"
            "login1  bastion.example.com  2222  -     -       -         -\n");
  EXPECT_EQ(FormatHostListVerbose({}), "");
}

TEST(HostListingTest, JsonHasOneObjectPerHost) {
  EXPECT_EQ(FormatHostListJson({Hosts()[1]}),
            "[\n  {\n    \"name\": \"login1\",\n    \"address\": \"bastion.example.com\",\n"
            "    \"port\": 2222,\n    \"user\": null,\n    \"key_file\": null,\n"
            "    \"become\": false,\n    \"playbook\": null,\n    \"groups\": [\n"
            "      \"ungrouped\"\n    ],\n    \"source\": \"inv.yaml:9\"\n  }\n]\n");
}

TEST(HostListingTest, CommandLineFillsWhatTheInventoryLeavesOpen) {
  Options options;
  options.user = "me";
  options.identity = "/k";
  options.become = true;
  options.playbook = "p.yaml";
  Host h = EffectiveHost(Hosts()[1], options);
  EXPECT_EQ(h.user, "me");
  EXPECT_EQ(h.identity_file, "/k");
  EXPECT_TRUE(h.become);
  EXPECT_EQ(h.playbook, "p.yaml");
  h = EffectiveHost(Hosts()[0], options);
  EXPECT_EQ(h.user, "ops");
  EXPECT_EQ(h.identity_file, "/keys/id");
}

}  // namespace
}  // namespace fleetreap
