#include "fleetreap/transport/ssh_jump.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

TEST(ParseProxyJumpTest, Hops) {
  struct Case {
    const char* text;
    std::vector<JumpHop> hops;
  };
  const Case kCases[] = {
      {"bastion", {{"", "bastion", 0}}},
      {"ops@bastion:2222", {{"ops", "bastion", 2222}}},
      {"ssh://ops@10.0.0.5:22", {{"ops", "10.0.0.5", 22}}},
      {"[fd00::5]:2200", {{"", "fd00::5", 2200}}},
      {"ops@[fd00::5]", {{"ops", "fd00::5", 0}}},
      {"first,ops@second:23,ssh://third",
       {{"", "first", 0}, {"ops", "second", 23}, {"", "third", 0}}},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    std::vector<JumpHop> hops;
    Status status = ParseProxyJump(c.text, &hops);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(hops.size(), c.hops.size());
    for (size_t i = 0; i < hops.size(); ++i) {
      EXPECT_EQ(hops[i].user, c.hops[i].user);
      EXPECT_EQ(hops[i].host, c.hops[i].host);
      EXPECT_EQ(hops[i].port, c.hops[i].port);
    }
  }
}

TEST(ParseProxyJumpTest, Malformed) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case kCases[] = {
      {"", "ProxyJump \"\": an empty hop"},
      {"a,,b", "ProxyJump \"a,,b\": an empty hop"},
      {"bastion:0", "ProxyJump \"bastion:0\": port must be 1-65535"},
      {"bastion:70000", "ProxyJump \"bastion:70000\": port must be 1-65535"},
      {"bastion:22x", "ProxyJump \"bastion:22x\": bad port 22x"},
      {"bastion:", "ProxyJump \"bastion:\": an empty port"},
      {"-oProxyCommand=x", "ProxyJump \"-oProxyCommand=x\": bad host \"-oProxyCommand=x\""},
      {"ba$(id)", "ProxyJump \"ba$(id)\": bad host \"ba$(id)\""},
      {"a b", "ProxyJump \"a b\": bad host \"a b\""},
      {"x;y@bastion", "ProxyJump \"x;y@bastion\": bad user \"x;y\""},
      {"[fd00::5", "ProxyJump \"[fd00::5\": unclosed '['"},
      {"[fd00::5]x", "ProxyJump \"[fd00::5]x\": text after ']'"},
      {"@bastion", "ProxyJump \"@bastion\": bad user \"\""},
      {"[fd00::5;id]", "ProxyJump \"[fd00::5;id]\": bad host \"fd00::5;id\""},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.text);
    std::vector<JumpHop> hops;
    Status status = ParseProxyJump(c.text, &hops);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(status.message(), c.error);
  }
}

TEST(ClassifyChannelOpenFailureTest, WhatSshdSaysWhenItCannotForward) {
  struct Case {
    const char* error;
    ErrorKind kind;
    const char* reason;
  };
  const Case kCases[] = {
      {"Channel opening failure: channel 3 error (2) Connection refused", ErrorKind::kRefused,
       "Connection refused"},
      {"Channel opening failure: channel 0 error (2) Name or service not known", ErrorKind::kDns,
       "Name or service not known"},
      {"Channel opening failure: channel 7 error (2) Connection timed out",
       ErrorKind::kConnectTimeout, "Connection timed out"},
      {"Channel opening failure: channel 1 error (2) No route to host", ErrorKind::kConnectTimeout,
       "No route to host"},
      {"Channel opening failure: channel 0 error (1) open failed", ErrorKind::kRefused,
       "the bastion does not forward there (administratively prohibited: open failed; "
       "AllowTcpForwarding, PermitOpen?)"},
      {"Channel opening failure: channel 2 error (4) no more sessions", ErrorKind::kConnectionLost,
       "the bastion is short of resources: no more sessions"},
      {"Socket error: disconnected", ErrorKind::kConnectionLost, "Socket error: disconnected"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.error);
    std::string reason;
    EXPECT_EQ(ClassifyChannelOpenFailure(c.error, &reason), c.kind);
    EXPECT_EQ(reason, c.reason);
  }
}

}  // namespace
}  // namespace fleetreap
