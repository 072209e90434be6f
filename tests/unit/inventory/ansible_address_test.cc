#include "fleetreap/inventory/ansible_address.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

TEST(AnsibleAddressTest, ParsesHostKeysAsParseAddressDoes) {
  struct Row {
    const char* text;
    bool ok;
    const char* host;
    int port;
  };
  const Row rows[] = {
      {"gpu01", true, "gpu01", -1},
      {"gpu01:2222", true, "gpu01", 2222},
      {"gpu[01:08]:22", true, "gpu[01:08]", 22},
      {"rack[a:c]-n[1:2].lab", true, "rack[a:c]-n[1:2].lab", -1},
      {"10.0.0.1:22", true, "10.0.0.1", 22},
      {"10.0.[1:3].1", true, "10.0.[1:3].1", -1},
      {"fe80::1", true, "fe80::1", -1},
      {"[fe80::1]:2222", true, "fe80::1", 2222},
      {"2001:db8::10", true, "2001:db8::10", -1},
      {"::1", true, "::1", -1},
      {"_gpu", true, "_gpu", -1},
      {"gpu-", false, "", -1},
      {"gpu_", false, "", -1},
      {"-gpu", false, "", -1},
      {"ops@gpu01:22", false, "", -1},
      {"gpu[01-04]", false, "", -1},
      {"a:b", false, "", -1},
      {"gpu*", false, "", -1},
      {"", false, "", -1},
  };
  for (const Row& row : rows) {
    std::string host;
    int port = 0;
    EXPECT_EQ(ParseAnsibleAddress(row.text, &host, &port), row.ok) << row.text;
    if (row.ok) {
      EXPECT_EQ(host, row.host) << row.text;
      EXPECT_EQ(port, row.port) << row.text;
    }
  }
}

TEST(AnsibleAddressTest, ExpandsRangesAsAnsibleDoes) {
  struct Row {
    const char* key;
    const char* names;
    int port;
  };
  const Row rows[] = {
      {"gpu[01:03]", "gpu01 gpu02 gpu03", -1},
      {"gpu[8:10]", "gpu8 gpu9 gpu10", -1},
      {"gpu[1:10:4]", "gpu1 gpu5 gpu9", -1},
      {"gpu[:2]", "gpu0 gpu1 gpu2", -1},
      {"n[x:B]", "nx ny nz nA nB", -1},
      {"n[a:e:2]", "na nc ne", -1},
      {"n[ab:cd]", "na nb nc", -1},
      {"r[1:2]-g[a:b]:2200", "r1-ga r1-gb r2-ga r2-gb", 2200},
      {"[fe80::1]:22", "fe80::1", 22},
      {"plain", "plain", -1},
  };
  for (const Row& row : rows) {
    std::vector<std::string> names;
    int port = 0;
    Status s = ExpandAnsibleHostKey(row.key, &names, &port);
    ASSERT_TRUE(s.ok()) << row.key << ": " << s.message();
    EXPECT_EQ(Join(names, " "), row.names) << row.key;
    EXPECT_EQ(port, row.port) << row.key;
  }
}

TEST(AnsibleAddressTest, RejectsRangesWithExactText) {
  struct Row {
    const char* pattern;
    const char* error;
  };
  const Row rows[] = {
      {"gpu-b1-[01-06]",
       "host range \"gpu-b1-[01-06]\": Ansible reads only [begin:end] or [begin:end:step] "
       "ranges, not ClusterShell's [01-06]: write gpu-b1-[01:06]"},
      {"gpu[01-04,09]",
       "host range \"gpu[01-04,09]\": Ansible reads only [begin:end] or [begin:end:step] "
       "ranges, not ClusterShell's [01-04,09]"},
      {"gpu[x]", "host range \"gpu[x]\": \"x\" is not begin:end or begin:end:step"},
      {"gpu[01:100]",
       "host range \"gpu[01:100]\": zero-padded begin \"01\" needs an end of the same width, "
       "got \"100\""},
      {"gpu[09:01]", "host range \"gpu[09:01]\": start 09 is after end 01"},
      {"gpu[c:a]", "host range \"gpu[c:a]\": start c is after end a"},
      {"gpu[1:]", "host range \"gpu[1:]\": missing end in \"1:\""},
      {"gpu[1:4:0]", "host range \"gpu[1:4:0]\": step must not be 0"},
      {"gpu[1:4:-1]", "host range \"gpu[1:4:-1]\": step -1 is negative"},
      {"gpu[1:4:x]", "host range \"gpu[1:4:x]\": step \"x\" is not a number"},
      {"gpu[a:5]", "host range \"gpu[a:5]\": \"a:5\" is neither a number range nor a letter range"},
      {"gpu[01:", "host range \"gpu[01:\": missing \"]\""},
      {"gpu[1:999999]", "host range \"gpu[1:999999]\": expands to more than 100000 names"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> names;
    Status s = ExpandAnsibleHostRange(row.pattern, &names);
    EXPECT_EQ(s.message(), row.error) << row.pattern;
    EXPECT_TRUE(names.empty()) << row.pattern;
  }
}

}  // namespace
}  // namespace fleetreap
