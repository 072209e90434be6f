#include "fleetreap/report/host_spill.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

std::vector<std::string> Read(HostSpill& spill) {
  std::vector<std::string> pieces;
  spill.ForEach([&pieces](const std::string& piece) { pieces.push_back(piece); });
  return pieces;
}

TEST(HostSpillTest, PiecesComeBackInIndexOrderWhateverOrderTheyCame) {
  char pattern[] = "/tmp/fleetreap-host-spill-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::unique_ptr<HostSpill> spill;
  ASSERT_TRUE(HostSpill::Open(dir + "/r.json", 5, &spill).ok());
  // Created and unlinked at once: nothing in the directory.
  DIR* d = opendir(dir.c_str());
  int entries = 0;
  while (readdir(d) != nullptr) ++entries;
  closedir(d);
  EXPECT_EQ(entries, 2);  // "." and ".."
  spill->Put(3, "three");
  spill->Put(0, "zero\n\"quoted\"");
  spill->Put(4, "");
  spill->Put(1, std::string(100000, 'x'));
  spill->Put(9, "out of range, dropped");
  std::vector<std::string> pieces = Read(*spill);
  ASSERT_EQ(pieces.size(), 4u);  // index 2 was never put
  EXPECT_EQ(pieces[0], "zero\n\"quoted\"");
  EXPECT_EQ(pieces[1], std::string(100000, 'x'));
  EXPECT_EQ(pieces[2], "three");
  EXPECT_EQ(pieces[3], "");
  EXPECT_TRUE(spill->status().ok());
  // Read twice, the same.
  EXPECT_EQ(Read(*spill), pieces);
  rmdir(dir.c_str());
}

TEST(HostSpillTest, StdoutSpillsInTheTemporaryDirectory) {
  std::unique_ptr<HostSpill> spill;
  ASSERT_TRUE(HostSpill::Open("-", 1, &spill).ok());
  spill->Put(0, "only");
  EXPECT_EQ(Read(*spill), std::vector<std::string>{"only"});
}

TEST(HostSpillTest, NoDirectoryNoSpill) {
  std::unique_ptr<HostSpill> spill;
  Status status = HostSpill::Open("/nonexistent-dir-for-spill/r.xml", 1, &spill);
  EXPECT_EQ(status.message(),
            "cannot spill beside /nonexistent-dir-for-spill/r.xml: No such file or directory");
  EXPECT_EQ(spill, nullptr);
}

}  // namespace
}  // namespace fleetreap
