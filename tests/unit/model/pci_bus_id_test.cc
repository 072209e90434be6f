#include "fleetreap/model/pci_bus_id.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(PciBusIdTest, SameDeviceAsTheKernelAndNvidiaSmiWriteIt) {
  EXPECT_TRUE(SamePciDevice("0000:3b:00", "00000000:3B:00.0"));
  EXPECT_TRUE(SamePciDevice("0000:3b:00", "0000:3b:00.0"));
  EXPECT_FALSE(SamePciDevice("0000:3b:00", "00000000:3C:00.0"));
  EXPECT_FALSE(SamePciDevice("0001:3b:00", "00000000:3B:00.0"));
  EXPECT_FALSE(SamePciDevice("", "00000000:3B:00.0"));
  EXPECT_FALSE(SamePciDevice("garbage", "00000000:3B:00.0"));
}

}  // namespace
}  // namespace fleetreap
