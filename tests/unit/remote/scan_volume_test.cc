// The scan's bounds against hostile volume, run for real on this machine's
// /proc with stand-in device files (HostPaths::dev_dir): one record per
// (PID, device) whatever the fds and threads, control-only holders past the
// cap counted and left out, command lines cut on the host. Children this
// test starts and ends, by PID.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "support/scratch_dir.h"
#include "support/script_dir.h"

namespace fleetreap {
namespace {

void* Idle(void*) {
  for (;;) pause();
  return nullptr;
}

class ScanVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia0"}) {
      std::ofstream(dir_ + "/dev/" + name) << "";
    }
    paths_.dev_dir = dir_ + "/dev";
  }
  // A child holding dev/FILE ("" none) in "fds" fds and "threads" threads,
  // its argv "args" after sleep's own; returns once it is set up.
  pid_t Start(const std::string& file, int fds = 1, int threads = 1,
              const std::vector<std::string>& args = {}) {
    int ready[2];
    EXPECT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      if (!file.empty()) {
        int fd = open((dir_ + "/dev/" + file).c_str(), O_RDONLY);
        if (fd < 0) _exit(3);
        for (int i = 1; i < fds; ++i) {
          if (dup(fd) < 0) _exit(5);
        }
      }
      if (!args.empty()) {
        std::vector<char*> argv = {const_cast<char*>("sleep"), const_cast<char*>("30")};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        close(ready[1]);
        execv("/bin/sleep", argv.data());
        _exit(4);
      }
      for (int i = 1; i < threads; ++i) {
        pthread_t t;
        if (pthread_create(&t, nullptr, Idle, nullptr) != 0) _exit(6);
      }
      if (write(ready[1], "r", 1) != 1) _exit(7);
      for (;;) pause();
    }
    close(ready[1]);
    char c;
    EXPECT_GE(read(ready[0], &c, 1), 0);
    close(ready[0]);
    if (!args.empty()) usleep(200 * 1000);  // exec'd
    scratch_.Adopt(pid);
    return pid;
  }
  std::string Scan(int cap = 64) {
    ScanRequest request;
    request.nvidia_smi_timeout = std::chrono::milliseconds(2000);
    request.control_only_cap = cap;
    return RunScriptIn(dir_, ScanScript(request, paths_));
  }
  static size_t Count(const std::string& out, const std::string& text) {
    size_t n = 0;
    for (size_t at = out.find(text); at != std::string::npos; at = out.find(text, at + 1)) ++n;
    return n;
  }
  ScratchDir scratch_{"sv", {"dev", "bin"}};
  const std::string dir_ = scratch_.path();
  HostPaths paths_;
};

TEST_F(ScanVolumeTest, OneRecordPerPidAndDeviceWhateverTheFdsAndThreads) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  const int fds = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 4096)) - 64;
  ASSERT_GT(fds, 500);
  pid_t holder = Start("nvidiactl", fds, 16);
  pid_t gpu = Start("nvidia0", 3);
  std::string out = Scan();
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out.substr(0, 2000);
  std::vector<Holder> holders;
  ASSERT_TRUE(HoldersFromScan(scan, &holders).ok());
  const std::string ctl = "fdp " + std::to_string(holder) + " ";
  EXPECT_EQ(Count(out, ctl), 1u);  // not fds x threads (16,000 and more)
  EXPECT_EQ(Count(out, "fdp " + std::to_string(gpu) + " "), 1u);
  EXPECT_LT(out.size(), 200000u);
  std::vector<int> pids;
  for (const Holder& h : holders) pids.push_back(h.pid);
  EXPECT_NE(std::find(pids.begin(), pids.end(), holder), pids.end());
  EXPECT_NE(std::find(pids.begin(), pids.end(), gpu), pids.end());
  EXPECT_EQ(scan.control_only_left_out, 0);
}

TEST_F(ScanVolumeTest, ControlOnlyHoldersPastTheCapAreCountedAndLeftOut) {
  std::vector<pid_t> control;
  for (int i = 0; i < 3; ++i) control.push_back(Start(i == 2 ? "nvidia-uvm" : "nvidiactl"));
  pid_t gpu = Start("nvidia0");
  for (int cap : {3, 2}) {
    SCOPED_TRACE("cap " + std::to_string(cap));
    std::string out = Scan(cap);
    ScanOutput scan;
    ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out.substr(0, 2000);
    std::vector<Holder> holders;
    ASSERT_TRUE(HoldersFromScan(scan, &holders).ok());
    std::vector<int> pids;
    for (const Holder& h : holders) pids.push_back(h.pid);
    EXPECT_NE(std::find(pids.begin(), pids.end(), gpu), pids.end());  // always described
    for (pid_t pid : control) {
      const bool described = std::find(pids.begin(), pids.end(), pid) != pids.end();
      EXPECT_EQ(described, cap == 3) << pid;
      // Left out means no record at all: no fd, no details.
      EXPECT_EQ(Count(out, "/proc/" + std::to_string(pid) + "/stat:") > 0, cap == 3) << pid;
      EXPECT_EQ(Count(out, "fdp " + std::to_string(pid) + " ") > 0, cap == 3) << pid;
    }
    EXPECT_EQ(scan.control_only_left_out, cap == 3 ? 0 : 3);
  }
}

TEST_F(ScanVolumeTest, CommandLineIsCutOnTheHost) {
  // 100 arguments of 1,000 bytes (leading zeros: sleep reads each as 1 s).
  std::vector<std::string> args(100, std::string(999, '0') + "1");
  pid_t holder = Start("nvidia0", 1, 1, args);
  std::string out = Scan();
  const std::string record = "/proc/" + std::to_string(holder) + "/cmdline:";
  EXPECT_EQ(Count(out, record), 32u);  // 32 arguments at most
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok());
  ASSERT_TRUE(scan.processes.count(holder));
  const std::vector<std::string>& argv = scan.processes[holder].argv;
  ASSERT_EQ(argv.size(), 32u);
  EXPECT_EQ(argv[0], "sleep");
  EXPECT_EQ(argv[2], std::string(256, '0'));  // each cut at 256 bytes
  std::vector<Holder> holders;
  ASSERT_TRUE(HoldersFromScan(scan, &holders).ok());
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].cmdline.substr(0, 9), "sleep 30 ");
}

}  // namespace
}  // namespace fleetreap
