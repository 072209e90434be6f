#include "fleetreap/remote/shm_clean.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>

#include "fleetreap/remote/host_paths.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// A random file name: any byte but NUL and '/', never "." or "..".
std::string RandomName(std::mt19937& random) {
  std::uniform_int_distribution<int> length(1, 40), byte(1, 255);
  std::string name = "nccl-";
  for (int i = length(random); i > 0; --i) {
    char c = static_cast<char>(byte(random));
    if (c != '/') name += c;
  }
  return name;
}

TEST(ShmCleanTest, ShmCleanKeepsWhatIsInUseAndReadsEveryName) {
  ScriptRunner runner;
  std::string shm = runner.dir() + "/shm";
  mkdir(shm.c_str(), 0755);
  HostPaths paths;
  paths.shm_dir = shm;
  std::mt19937 random(20261201);
  std::set<std::string> stale = {"nccl-old", "nccl-z\n@@end\n@@session\n0, 0", "nccl-@@end",
                                 "psm_x\\n", "nccl-\x1b[2J"};
  for (int i = 0; i < 40; ++i) stale.insert(RandomName(random));
  for (const std::string& name : stale) std::ofstream(shm + "/" + name) << "x";
  std::ofstream(shm + "/nccl-open") << "x";
  std::ofstream(shm + "/nccl-mapped") << "x";
  std::ofstream(shm + "/keep.db") << "x";
  mkdir((shm + "/nccl-dir").c_str(), 0755);
  std::ofstream(shm + "/nccl-dir/nccl-inner") << "x";
  if (symlink("/etc/hostname", (shm + "/nccl-link").c_str()) != 0) FAIL();
  int open_fd = open((shm + "/nccl-open").c_str(), O_RDONLY);
  int map_fd = open((shm + "/nccl-mapped").c_str(), O_RDONLY);
  void* map = mmap(nullptr, 1, PROT_READ, MAP_SHARED, map_fd, 0);
  close(map_fd);
  ASSERT_NE(map, MAP_FAILED);

  ShmOutput dry;
  std::string out = runner.Run(ShmCleanScript({"nccl-*", "psm_*"}, true, paths));
  ASSERT_TRUE(ParseShmOutput(out, &dry).ok()) << out;
  EXPECT_EQ(std::set<std::string>(dry.removed.begin(), dry.removed.end()), stale);
  EXPECT_EQ(std::set<std::string>(dry.in_use.begin(), dry.in_use.end()),
            (std::set<std::string>{"nccl-open", "nccl-mapped"}));

  ShmOutput real;
  out = runner.Run(ShmCleanScript({"nccl-*", "psm_*"}, false, paths));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(std::set<std::string>(real.removed.begin(), real.removed.end()), stale);
  EXPECT_TRUE(real.failed.empty());
  for (const char* kept :
       {"nccl-open", "nccl-mapped", "keep.db", "nccl-dir/nccl-inner", "nccl-link"}) {
    EXPECT_TRUE(runner.Exists("shm/" + std::string(kept))) << kept;
  }
  EXPECT_TRUE(runner.Exists("../../etc/hostname") || access("/etc/hostname", F_OK) == 0);
  for (const std::string& name : stale) EXPECT_FALSE(runner.Exists("shm/" + name));
  munmap(map, 1);
  close(open_fd);
}

// Only the inodes the step listed are removed: a file made after the
// listing (here by a find that makes one as it ends) was checked by no
// one, and is left for the next run.
// The runner's shm folder holding one stale segment, nccl-old.
HostPaths ShmWithAStaleSegment(ScriptRunner& runner) {
  HostPaths paths;
  paths.shm_dir = runner.dir() + "/shm";
  mkdir(paths.shm_dir.c_str(), 0755);
  std::ofstream(paths.shm_dir + "/nccl-old") << "x";
  return paths;
}

TEST(ShmCleanTest, ShmCleanRemovesOnlyTheFilesItListed) {
  ScriptRunner runner;
  const HostPaths paths = ShmWithAStaleSegment(runner);
  const std::string& shm = paths.shm_dir;
  runner.Write(runner.dir() + "/bin/find",
               "#!/bin/sh\n/usr/bin/find \"$@\"; r=$?\nfor a in \"$@\"; do case $a in '%i ') "
               "[ -e " +
                   runner.dir() + "/made ] || { : >" + runner.dir() + "/made; echo x >" + shm +
                   "/nccl-late; };; esac; done\nexit $r\n",
               0755);
  ShmOutput real;
  std::string out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(real.removed, std::vector<std::string>{"nccl-old"});
  EXPECT_TRUE(real.in_use.empty());
  EXPECT_TRUE(runner.Exists("made"));
  EXPECT_TRUE(runner.Exists("shm/nccl-late"));
  EXPECT_FALSE(runner.Exists("shm/nccl-old"));
}

// A walk of the holders that cannot run (an argument list too long on a
// host of ~100,000 processes: find exits 126) leaves every candidate in
// use: nothing is removed on a guess.
TEST(ShmCleanTest, ShmCleanRemovesNothingWhenTheHoldersWalkFails) {
  // find failing is the walk of a host without perl; "perl" a perl that dies.
  for (const char* failing : {"*/maps", "*/task", "perl"}) {
    ScriptRunner runner;
    const HostPaths paths = ShmWithAStaleSegment(runner);
    const bool perl = std::string(failing) == "perl";
    if (perl) {
      runner.Write(runner.dir() + "/bin/perl", "#!/bin/sh\nkill -9 $$\n", 0755);
    } else {
      runner.Write(runner.dir() + "/bin/find",
                   std::string("#!/bin/sh\nfor a in \"$@\"; do case $a in ") + failing +
                       ") echo 'find: Argument list too long' >&2; exit 126;; esac; done\n"
                       "exec /usr/bin/find \"$@\"\n",
                   0755);
    }
    ShmOutput real;
    const std::string script = ShmCleanScript({"nccl-*"}, false, paths);
    std::string out = runner.Run(perl ? script : WithoutPerl(script));
    ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
    EXPECT_TRUE(real.removed.empty()) << failing;
    EXPECT_EQ(real.in_use, std::vector<std::string>{"nccl-old"}) << failing;
    EXPECT_TRUE(runner.Exists("shm/nccl-old")) << failing;
  }
}

// Under a scope only the selected files are candidates, each by inode and
// only while its owner is the uid given: the others are neither removed nor
// listed, and a selected file still in use is kept.
TEST(ShmCleanTest, ShmCleanUnderAScopeRemovesOnlyTheSelected) {
  ScriptRunner runner;
  std::string shm = runner.dir() + "/shm";
  mkdir(shm.c_str(), 0755);
  HostPaths paths;
  paths.shm_dir = shm;
  const int uid = static_cast<int>(getuid());
  auto inode = [&](const std::string& name) {
    struct stat st;
    std::ofstream(shm + "/" + name) << "x";
    EXPECT_EQ(stat((shm + "/" + name).c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_ino);
  };
  const uint64_t ours = inode("nccl-ours\n@@end"), open_one = inode("nccl-open");
  const uint64_t other_uid = inode("nccl-other-uid");
  inode("nccl-tenant");
  const uint64_t no_pattern = inode("keep.db");
  int open_fd = open((shm + "/nccl-open").c_str(), O_RDONLY);
  ShmSelection selection;
  selection.all = false;
  selection.only = {{ours, uid}, {open_one, uid}, {other_uid, uid + 1}, {no_pattern, uid}};

  ShmOutput dry;
  std::string out = runner.Run(ShmCleanScript({"nccl-*"}, true, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &dry).ok()) << out;
  EXPECT_EQ(dry.removed, std::vector<std::string>{"nccl-ours\n@@end"});
  EXPECT_EQ(dry.in_use, std::vector<std::string>{"nccl-open"});

  ShmOutput real;
  out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(real.removed, std::vector<std::string>{"nccl-ours\n@@end"});
  EXPECT_EQ(real.in_use, std::vector<std::string>{"nccl-open"});
  EXPECT_TRUE(real.failed.empty());
  EXPECT_FALSE(runner.Exists("shm/nccl-ours\n@@end"));
  for (const char* kept : {"nccl-open", "nccl-other-uid", "nccl-tenant", "keep.db"}) {
    EXPECT_TRUE(runner.Exists("shm/" + std::string(kept))) << kept;
  }

  // Nothing selected: nothing is a candidate.
  selection.only.clear();
  out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_TRUE(real.removed.empty() && real.in_use.empty() && real.failed.empty()) << out;
  EXPECT_TRUE(runner.Exists("shm/nccl-tenant"));
  close(open_fd);
}

}  // namespace
}  // namespace fleetreap
