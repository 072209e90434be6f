#include "fleetreap/inventory/node_set.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

std::string Expanded(const std::string& text) {
  std::vector<std::string> names;
  Status s = ExpandNodeSet("--nodes", text, &names);
  if (!s.ok()) return "error: " + s.message();
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : " ") + name;
  return out;
}

// Each expected line is what ClusterShell 1.9's `nodeset -e` prints.
TEST(NodeSetTest, ExpandsAsNodesetDoes) {
  struct Row {
    const char* text;
    const char* names;
  };
  const Row rows[] = {
      {"gpu[01-04]", "gpu01 gpu02 gpu03 gpu04"},
      {"gpu10,gpu2,login1,gpu01,a", "a gpu2 gpu01 gpu10 login1"},
      {"gpu[01-08]!gpu03", "gpu01 gpu02 gpu04 gpu05 gpu06 gpu07 gpu08"},
      {"gpu[1-10/3]", "gpu1 gpu4 gpu7 gpu10"},
      {"rack[1-2]-node[1-2]", "rack1-node1 rack1-node2 rack2-node1 rack2-node2"},
      {"gpu[01-04]&gpu[03-06]", "gpu03 gpu04"},
      {"gpu[1-4]^gpu[3-6]", "gpu1 gpu2 gpu5 gpu6"},
      {"b,a,gpu1,gpu01", "a b gpu1 gpu01"},
      {"gpu[1-3],gpu[01-02]", "gpu1 gpu2 gpu3 gpu01 gpu02"},
      {"gpu[01-04,09],gpu[02-03]", "gpu01 gpu02 gpu03 gpu04 gpu09"},
  };
  for (const Row& row : rows) EXPECT_EQ(Expanded(row.text), row.names) << row.text;
}

TEST(NodeSetTest, RefusesWhatItCannotRead) {
  EXPECT_EQ(Expanded("@gpus"),
            "error: --nodes \"@gpus\": node groups (@gpus) are not read; name the nodes");
  EXPECT_EQ(Expanded("gpu01,,gpu02"), "error: --nodes \"gpu01,,gpu02\": an empty node name");
  EXPECT_EQ(Expanded("gpu[1-"), "error: --nodes \"gpu[1-\": missing bracket in \"gpu[1-\"");
  EXPECT_EQ(Expanded("gpu[01:04]"),
            "error: --nodes \"gpu[01:04]\": bad range in \"gpu[01:04]\": \"01:04\" is not a range "
            "of numbers (ClusterShell: gpu[01-08,10])");
  EXPECT_EQ(Expanded("gpu[01-3]"),
            "error: --nodes \"gpu[01-3]\": bad range in \"gpu[01-3]\": \"01-3\": padding length "
            "mismatch");
  EXPECT_EQ(Expanded("gpu[3-1]"),
            "error: --nodes \"gpu[3-1]\": bad range in \"gpu[3-1]\": \"3-1\": invalid values in "
            "range");
}

}  // namespace
}  // namespace fleetreap
