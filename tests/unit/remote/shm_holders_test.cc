// The scan's /dev/shm part (shm_holders.cc): its "shmh" and "shmf" records
// parsed by a table of replies, and the real part run under /bin/sh against
// this test process, which holds files of a scratch /dev/shm by fd and by
// mapping, under hostile names.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "support/script_dir.h"

namespace fleetreap {
namespace {

std::string Nul(const std::string& text) { return text + '\0'; }

// A holder scan's reply around "shm" (the part's records).
std::string Reply(const std::string& shm) {
  return Nul("scan 1") + Nul("session 12") + Nul("gpu 0:") + Nul("apps -") + Nul("table -") +
         Nul("majors 195 nvidia") + Nul("fd 811 4 195 0") +
         Nul("/proc/811/stat:811 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3456 0 0") + shm +
         Nul("selfcg:0::/\n") + Nul("owners:") + Nul("show -") + Nul("end");
}

using Hold = std::tuple<int, uint64_t, int>;  // pid, inode, uid
using Holds = std::vector<Hold>;

Holds Of(const ScanOutput& scan) {
  Holds holds;
  for (const ShmHold& h : scan.shm_holds) holds.emplace_back(h.pid, h.file.inode, h.file.uid);
  return holds;
}

TEST(ShmHoldersTest, Records) {
  const struct {
    const char* name;
    std::string shm;
    bool read;
    Holds holds;
  } rows[] = {
      {"not asked", "", false, {}},
      {"device unknown", Nul("shmh -"), false, {}},
      {"none held", Nul("shmh 1"), true, {}},
      {"held",
       Nul("shmh 1") + Nul("shmf 811 4242 1001") + Nul("shmf 811 18446744073709551615 0") +
           Nul("shmf 9 4242 1001"),
       true,
       {{811, 4242, 1001}, {811, 18446744073709551615u, 0}, {9, 4242, 1001}}},
  };
  for (const auto& row : rows) {
    ScanOutput scan;
    Status status = ParseScanOutput(Reply(row.shm), &scan);
    ASSERT_TRUE(status.ok()) << row.name << ": " << status.ToString();
    EXPECT_EQ(scan.shm_read, row.read) << row.name;
    EXPECT_EQ(Of(scan), row.holds) << row.name;
  }
}

TEST(ShmHoldersTest, Refusals) {
  std::string many = Nul("shmh 1");
  for (int i = 1; i <= 65; ++i) many += Nul("shmf 811 " + std::to_string(i) + " 0");
  const struct {
    std::string shm;
    const char* error;
  } rows[] = {
      {Nul("shmh 2"), "parse: scan output record 9: bad \"shmh 2\""},
      {Nul("shmh"), "parse: scan output record 9: expected \"shmh 1|-\", got \"shmh\""},
      {Nul("shmh 1:x"), "parse: scan output record 9: expected \"shmh 1|-\", got \"shmh 1\""},
      {Nul("shmh -") + Nul("shmf 811 1 0"),
       "parse: scan output record 10: bad shmf record \"shmf 811 1 0\""},
      {Nul("shmf 811 1 0"),
       "parse: scan output record 9: expected \"FILE:TEXT\", got \"shmf 811 1 0\""},
      {Nul("shmh 1") + Nul("shmf 0 1 0"),
       "parse: scan output record 10: bad shmf record \"shmf 0 1 0\""},
      {Nul("shmh 1") + Nul("shmf 811 0 0"),
       "parse: scan output record 10: bad shmf record \"shmf 811 0 0\""},
      {Nul("shmh 1") + Nul("shmf 811 1 -1"),
       "parse: scan output record 10: bad shmf record \"shmf 811 1 -1\""},
      {Nul("shmh 1") + Nul("shmf 811 x 0"),
       "parse: scan output record 10: bad shmf record \"shmf 811 x 0\""},
      {Nul("shmh 1") + Nul("shmf 811 1 0 7"),
       "parse: scan output record 10: expected \"shmf PID INODE UID\", got \"shmf 811 1 0 7\""},
      {Nul("shmh 1") + Nul("shmf 811 1:0"),
       "parse: scan output record 10: expected \"shmf PID INODE UID\", got \"shmf 811 1\""},
      {Nul("shmh 1") + Nul("shmf 811 1 0") + Nul("shmf 811 1 0"),
       "parse: scan output record 11: bad shmf record \"shmf 811 1 0\""},
      {many, "parse: scan output record 74: bad shmf record \"shmf 811 65 0\""},
      {Nul("shmh 1") + Nul("shmh 1"),
       "parse: scan output record 10: expected \"selfcg:TEXT\", got \"shmh 1\""},
  };
  for (const auto& row : rows) {
    ScanOutput scan;
    EXPECT_EQ(ParseScanOutput(Reply(row.shm), &scan).ToString(), row.error);
  }
}

// The part itself: this process holds a fake GPU file (so it is a holder),
// two files of the scratch /dev/shm by fd and one by mapping only; a file it
// does not hold, a held file in a subfolder and files outside are not
// listed. Names hold newlines and maps-like text: only inodes come back.
// Every fd is close-on-exec, so the shells the test starts hold none.
TEST(ShmHoldersTest, ScanListsTheHoldersFilesByInode) {
  char tmpl[] = "/tmp/fleetreap-shmh-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string shm = dir + "/shm", dev = dir + "/dev";
  mkdir(shm.c_str(), 0755);
  mkdir(dev.c_str(), 0755);
  mkdir((shm + "/sub").c_str(), 0755);
  std::ofstream(dev + "/nvidia0") << "x";
  const std::vector<std::string> held = {"nccl-open", "nccl-x\n7f00-7f01 rw-s 00000000 00:1a 99 y",
                                         "nccl-mapped\n"};
  for (const std::string& name : held) std::ofstream(shm + "/" + name) << "x";
  std::ofstream(shm + "/nccl-other") << "x";
  std::ofstream(shm + "/sub/nccl-inner") << "x";
  std::ofstream(dir + "/outside") << "x";
  std::vector<int> fds = {open((dev + "/nvidia0").c_str(), O_RDONLY | O_CLOEXEC),
                          open((shm + "/" + held[0]).c_str(), O_RDONLY | O_CLOEXEC),
                          open((shm + "/" + held[1]).c_str(), O_RDONLY | O_CLOEXEC),
                          open((shm + "/sub/nccl-inner").c_str(), O_RDONLY | O_CLOEXEC),
                          open((dir + "/outside").c_str(), O_RDONLY | O_CLOEXEC)};
  int map_fd = open((shm + "/" + held[2]).c_str(), O_RDONLY | O_CLOEXEC);
  void* map = mmap(nullptr, 1, PROT_READ, MAP_SHARED, map_fd, 0);
  close(map_fd);
  ASSERT_NE(map, MAP_FAILED);

  HostPaths paths;
  paths.dev_dir = dev;
  paths.shm_dir = shm;
  ScanRequest request;
  request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
  request.shm_files = true;
  std::string out = RunScriptIn(dir, ScanScript(request, paths));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_TRUE(scan.shm_read);
  std::set<Hold> want;
  for (const std::string& name : held) {
    struct stat st;
    ASSERT_EQ(stat((shm + "/" + name).c_str(), &st), 0);
    want.insert({static_cast<int>(getpid()), st.st_ino, static_cast<int>(st.st_uid)});
  }
  Holds got = Of(scan);
  EXPECT_EQ(std::set<Hold>(got.begin(), got.end()), want) << out;
  EXPECT_EQ(got.size(), want.size());

  // Not asked: no part, no record.
  request.shm_files = false;
  out = RunScriptIn(dir, ScanScript(request, paths));
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_FALSE(scan.shm_read);
  EXPECT_TRUE(scan.shm_holds.empty());
  EXPECT_EQ(ScanScript(request, paths).find("shmh()"), std::string::npos);

  munmap(map, 1);
  for (int fd : fds) close(fd);
  std::string cmd = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace fleetreap
