#include "fleetreap/remote/xid_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fleetreap/model/pci_bus_id.h"

namespace fleetreap {
namespace {

std::string Sample(const std::string& name) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/readiness/xid/" + name,
                     std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

struct Expected {
  int code;
  const char* bus_id;
  int count;
  const char* message;
};

void ExpectEvents(const XidLog& log, const std::vector<Expected>& expected) {
  ASSERT_EQ(log.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(log.events[i].code, expected[i].code);
    EXPECT_EQ(log.events[i].bus_id, expected[i].bus_id);
    EXPECT_EQ(log.events[i].count, expected[i].count);
    EXPECT_EQ(log.events[i].message, expected[i].message);
  }
}

TEST(XidLogTest, PublicLines) {
  XidLog log;
  ParseXidLog(Sample("public-lines.txt"), &log);
  ExpectEvents(
      log, {
               {79, "0000:c6:00", 1, "pid=1101234, name=nvc:[driver], GPU has fallen off the bus."},
               {63, "0000:10:1c", 1,
                "pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."},
               {79, "0000:2b:00", 1, "GPU has fallen off the bus."},
               {3, "0000:01:00", 1, "C 00000005 SC 00000007 M 00001ffc Data ffffffff"},
               {64, "0000:65:00", 1, "pid='N/A', Row Remapper: Failed to remap row"},
           });
  EXPECT_EQ(log.lines, 8);
  EXPECT_EQ(log.malformed, 0);
  EXPECT_FALSE(log.first_sequence.has_value());
}

TEST(XidLogTest, HealthyH200HasNoXid) {
  XidLog log;
  ParseXidLog(Sample("h200-580-nvrm-no-xid.txt"), &log);
  EXPECT_TRUE(log.events.empty());
  EXPECT_EQ(log.lines, 3);
  EXPECT_EQ(log.malformed, 0);
}

TEST(XidLogTest, KmsgRecordsAreCountedPerGpuAndCode) {
  XidLog log;
  ParseXidLog(Sample("synthetic-kmsg.txt"), &log);
  ExpectEvents(log, {
                        {95, "0000:5d:00", 2,
                         "pid=4242, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No"},
                        {13, "0000:ab:00", 1,
                         "pid=777, name=pt_main_thread, Graphics Exception: ESR 0x50da30=0x1000d"},
                    });
  ASSERT_TRUE(log.first_sequence.has_value());
  EXPECT_EQ(*log.first_sequence, 812u);  // not 0: the ring buffer has wrapped
}

TEST(XidLogTest, HostileLines) {
  XidLog log;
  ParseXidLog(Sample("synthetic-hostile.txt"), &log);
  // The "NVRM: Xid ... 79" inside a process name is not an event; the forged
  // line behind "user: " is not a kernel line; escape bytes are escaped.
  ExpectEvents(log,
               {
                   {43, "0000:3b:00", 1,
                    "pid=99, name=x NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."},
                   {45, "0000:3b:00", 2, "pid=5, name=\\x1b[31mred\\x07, Ch 00000010"},
               });
  EXPECT_EQ(log.malformed, 4);  // bad bus id, five-digit code, glued code, cut line
  EXPECT_EQ(log.lines, 8);
}

TEST(XidLogTest, FormatsAndLineEndings) {
  const char* lines[] = {
      "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
      "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
      "Dec 01 10:00:00 gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
      "4,99,123,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
      "[Mon Dec  1 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\r",
      "NVRM: Xid (PCI:0000:3B:00): 79",
  };
  for (const char* line : lines) {
    XidLog log;
    ParseXidLog(line, &log);
    ASSERT_EQ(log.events.size(), 1u) << line;
    EXPECT_EQ(log.events[0].code, 79) << line;
    EXPECT_TRUE(SamePciDevice(log.events[0].bus_id, "00000000:3B:00.0")) << line;
  }
}

TEST(XidLogTest, LongMessagesAreCappedAndManyPairsCounted) {
  std::string text = "NVRM: Xid (PCI:0000:01:00): 13, " + std::string(1000, 'a') + "\n";
  for (int i = 0; i < 100; ++i) {
    text += "NVRM: Xid (PCI:0000:01:00): " + std::to_string(200 + i) + ", x\n";
  }
  XidLog log;
  ParseXidLog(text, &log);
  ASSERT_EQ(log.events.size(), kMaxXidEvents);
  EXPECT_EQ(log.events[0].message, std::string(kMaxXidMessage, 'a') + "...");
  EXPECT_EQ(log.dropped, 101 - static_cast<int>(kMaxXidEvents));
}

TEST(XidLogTest, TheCapHoldsAfterEscaping) {
  // Found by fuzz_xid_log: "\x01" is four bytes once escaped.
  XidLog log;
  ParseXidLog("NVRM: Xid (PCI:0000:01:00): 13, " + std::string(100, '\x01') + "\n", &log);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].message.size(), kMaxXidMessage + 3);
  EXPECT_EQ(log.events[0].message.substr(0, 8), "\\x01\\x01");
  EXPECT_EQ(log.events[0].message.substr(kMaxXidMessage), "...");
}

}  // namespace
}  // namespace fleetreap
