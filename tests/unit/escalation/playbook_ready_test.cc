// The playbook's "ready:" section (playbook.h, readiness.h).
#include <gtest/gtest.h>

#include "fleetreap/escalation/playbook.h"

namespace fleetreap {
namespace {

TEST(PlaybookReadyTest, DefaultsAreTheDocumentedOnes) {
  const ReadyPolicy& ready = DefaultPlaybook().ready;
  EXPECT_EQ(ready.ecc, CheckMode::kBlock);
  EXPECT_EQ(ready.remapped_rows, CheckMode::kBlock);
  EXPECT_EQ(ready.retired_pages, CheckMode::kBlock);
  EXPECT_EQ(ready.fabric, CheckMode::kBlock);
  EXPECT_EQ(ready.persistence, CheckMode::kWarn);
  EXPECT_EQ(ready.pcie_link, CheckMode::kBlock);
  EXPECT_EQ(ready.xid, CheckMode::kBlock);
  EXPECT_EQ(ready.gpu_count, CheckMode::kBlock);
  EXPECT_EQ(ready.xid_unlisted, CheckMode::kWarn);
  EXPECT_EQ(ready.ecc_volatile_max, 0);
  EXPECT_FALSE(ready.ecc_aggregate_max.has_value());
  EXPECT_EQ(ready.retired_pages_max, 60);
  EXPECT_FALSE(ready.pcie_gen);
  EXPECT_EQ(ready.xid_fatal, (std::vector<int>{48, 63, 64, 74, 79, 95, 119, 120, 140, 154}));
  EXPECT_EQ(ready.xid_informational, (std::vector<int>{13, 31, 43, 45, 94, 92}));
}

TEST(PlaybookReadyTest, Parses) {
  Playbook p;
  Status status = ParsePlaybook(
      "ready:\n"
      "  persistence: block\n"
      "  pcie_link: warn\n"
      "  xid: block\n"
      "  ecc_volatile_max: 2\n"
      "  ecc_aggregate_max: 10\n"
      "  retired_pages_max: 30\n"
      "  pcie_gen: true\n"
      "  xid_fatal: [79, 48]\n"
      "  xid_informational: []\n"
      "  xid_unlisted: block\n",
      "p.yaml", &p);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(p.ready.persistence, CheckMode::kBlock);
  EXPECT_EQ(p.ready.pcie_link, CheckMode::kWarn);
  EXPECT_EQ(p.ready.ecc_volatile_max, 2);
  EXPECT_EQ(p.ready.ecc_aggregate_max, 10);
  EXPECT_EQ(p.ready.retired_pages_max, 30);
  EXPECT_TRUE(p.ready.pcie_gen);
  EXPECT_EQ(p.ready.xid_fatal, (std::vector<int>{79, 48}));
  EXPECT_TRUE(p.ready.xid_informational.empty());
  EXPECT_EQ(p.ready.xid_unlisted, CheckMode::kBlock);
  EXPECT_EQ(p.ready.ecc, CheckMode::kBlock);  // untouched
}

TEST(PlaybookReadyTest, OffTurnsEveryCheckOff) {
  Playbook p;
  ASSERT_TRUE(ParsePlaybook("ready: off\n", "p.yaml", &p).ok());
  EXPECT_TRUE(p.ready.AllOff());
  EXPECT_FALSE(DefaultPlaybook().ready.AllOff());
}

TEST(PlaybookReadyTest, Errors) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"ready:\n  ecc: sometimes\n",
       "p.yaml:2:3: ready.ecc must be off, warn or block, got \"sometimes\""},
      {"ready:\n  ecc_volatile_max: -1\n",
       "p.yaml:2:3: ecc_volatile_max must be a whole number from 0 to 1073741824, got \"-1\""},
      {"ready:\n  xid_fatal: [79, 79]\n", "p.yaml:2:19: ready.xid_fatal lists Xid 79 twice"},
      {"ready:\n  xid_fatal: [0]\n",
       "p.yaml:2:3: xid_fatal must be a whole number from 1 to 999, got \"0\""},
      {"ready:\n  xid_fatal: 79\n", "p.yaml:2:3: ready.xid_fatal must be a list"},
      {"ready:\n  xid_fatal: [79]\n  xid_informational: [79]\n",
       "p.yaml:2:3: Xid 79 is in both xid_fatal and xid_informational"},
      {"ready:\n  xids: block\n",
       "p.yaml:2:3: unknown ready setting \"xids\"; they are ecc, remapped_rows, retired_pages, "
       "fabric, persistence, pcie_link, xid, gpu_count, ecc_volatile_max, ecc_aggregate_max, "
       "retired_pages_max, pcie_gen, xid_fatal, xid_informational, xid_unlisted"},
      {"ready: yes\n", "p.yaml:1:1: ready must be a mapping of checks, or off"},
      {"ready: block\n", "p.yaml:1:1: ready must be a mapping of checks, or off"},
      {"ready: [ecc]\n", "p.yaml:1:1: ready must be a mapping of checks, or off"},
      {"ready:\n  pcie_gen: maybe\n",
       "p.yaml:2:3: ready.pcie_gen must be true or false, got \"maybe\""},
  };
  for (const Case& c : cases) {
    Playbook p;
    Status status = ParsePlaybook(c.yaml, "p.yaml", &p);
    EXPECT_FALSE(status.ok()) << c.yaml;
    EXPECT_EQ(status.message(), c.error) << c.yaml;
  }
}

}  // namespace
}  // namespace fleetreap
