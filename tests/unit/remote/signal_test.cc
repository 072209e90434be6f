#include "fleetreap/remote/signal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "fleetreap/remote/host_paths.h"
#include "support/holder_process.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(SignalTest, SignalNeverHitsAReusedPid) {
  // Our own PID with a start time that is not its own stands for a PID that
  // was reused between scan and kill: it must be reported gone, not signalled.
  ScriptRunner runner;
  std::vector<Target> targets = {{static_cast<int>(getpid()), 1, true},
                                 {static_cast<int>(getpid()), 1, false},
                                 {999999999, 5, true}};
  targets.erase(targets.begin() + 1);
  std::string out = runner.Run(SignalScript("KILL", targets, milliseconds(300), milliseconds(100)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.gone, (std::vector<int>{static_cast<int>(getpid()), 999999999}));
  EXPECT_TRUE(result.sent.empty());
  EXPECT_TRUE(result.left.empty());
}

// Children this test starts and ends, by PID: "holder" holds a stand-in
// device file, "bystander" the same program without it. Each test runs twice:
// the targets' walk by perl, and by the shell path (find, stat, grep, sort).
class SignalLiveTest : public ::testing::TestWithParam<bool> {
 protected:
  // The script as a host with perl (the param) or without it runs it.
  static std::string Script(std::string script) {
    return GetParam() ? script : WithoutPerl(std::move(script));
  }
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  pid_t Start(const std::string& file) {
    pid_t pid = ForkHolder(file);
    children_.push_back(pid);
    return pid;
  }
  static uint64_t StartTime(pid_t pid) { return ProcessStartTime(pid); }
  std::vector<pid_t> children_;
};

TEST_P(SignalLiveTest, SignalsOnlyWhatStillHoldsADevice) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  pid_t bystander = Start("");
  pid_t charged = Start("");
  usleep(200 * 1000);  // the children have exec'd
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::vector<Target> targets = {{holder, StartTime(holder), true},
                                 {bystander, StartTime(bystander), true},
                                 {charged, StartTime(charged), false}};
  std::sort(targets.begin(), targets.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  std::string out = runner.Run(
      Script(SignalScript("TERM", targets, milliseconds(1000), milliseconds(50), paths)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  // One that only nvidia-smi charged and that holds no device file now is
  // not signalled either (a real CUDA process holds them: safety.md).
  EXPECT_EQ(result.sent, std::vector<int>{holder});
  std::vector<int> gone = {bystander, charged};
  std::sort(gone.begin(), gone.end());
  std::sort(result.gone.begin(), result.gone.end());
  EXPECT_EQ(result.gone, gone);
  // Our children stay zombies until reaped: their every thread has exited,
  // their files are closed, so they are gone (the wait ends with them).
  EXPECT_TRUE(result.left.empty()) << out;
  EXPECT_EQ(kill(bystander, 0), 0);  // never signalled
  EXPECT_EQ(kill(charged, 0), 0);
}

// A leader in state Z whose thread still holds the device is alive: it is
// signalled (not "gone"), and once its thread is gone too it is gone, even
// unreaped. A process that only maps the device is signalled as a holder.
TEST_P(SignalLiveTest, ZombieLeaderWithLiveThreadsAndMappingOnlyHoldersAreSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  runner.Write(runner.dir() + "/dev/nvidia1", "", 0644);
  static std::string file;
  file = runner.dir() + "/dev/nvidia0";
  pid_t leader = fork();
  if (leader == 0) {
    pthread_t thread;
    auto hold = [](void*) -> void* {
      if (open(file.c_str(), O_RDONLY) < 0) _exit(3);
      for (;;) pause();
      return nullptr;
    };
    if (pthread_create(&thread, nullptr, hold, nullptr) != 0) _exit(5);
    syscall(SYS_exit, 0);  // the leader alone exits (pthread_exit would unwind into gtest)
  }
  children_.push_back(leader);
  const std::string mapped = runner.dir() + "/dev/nvidia1";
  pid_t mapper = fork();
  if (mapper == 0) {
    int fd = open(mapped.c_str(), O_RDWR);
    if (fd < 0 || mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) _exit(3);
    close(fd);
    for (;;) pause();
  }
  children_.push_back(mapper);
  usleep(300 * 1000);  // the leader has exited, the mapper has closed its fd
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::vector<Target> targets = {{leader, StartTime(leader), true},
                                 {mapper, StartTime(mapper), true}};
  std::sort(targets.begin(), targets.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  std::string out = runner.Run(
      Script(SignalScript("TERM", targets, milliseconds(2000), milliseconds(50), paths)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  std::vector<int> sent = {leader, mapper};
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(result.sent, sent) << out;
  EXPECT_TRUE(result.gone.empty()) << out;
  EXPECT_TRUE(result.left.empty()) << out;
}

// A holder that exits between the check and the kill (kill(1) says "no such
// process") is gone, not refused: the host is not failed for it. kill is
// played by a function that ends the process first and then fails.
// The scan's clock is its shell's start time: a target born at or after it
// may be a reused PID paired with an older nvidia-smi answer, and is gone.
TEST_P(SignalLiveTest, TargetsBornAfterTheScanBeganAreNeverSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  const uint64_t born = StartTime(holder);
  std::vector<Target> targets = {{holder, born, true}};
  for (uint64_t scan_start : {born - 1, born}) {
    std::string out =
        runner.Run(Script(SignalScript("KILL", targets, milliseconds(300), milliseconds(50), paths,
                                       {}, AuditRequest(), scan_start)));
    SignalReply result;
    ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
    EXPECT_EQ(result.gone, std::vector<int>{holder}) << scan_start;
    EXPECT_TRUE(result.sent.empty());
  }
  EXPECT_EQ(kill(holder, 0), 0);  // never signalled
  std::string out = runner.Run(Script(SignalScript(
      "KILL", targets, milliseconds(1000), milliseconds(50), paths, {}, AuditRequest(), born + 1)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.sent, std::vector<int>{holder});
}

// A holder that closed its device file after the scan and opened it again
// (on another fd) before the kill still holds it at the kill: signalled.
TEST_P(SignalLiveTest, HolderThatReopensItsDeviceIsStillSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  const std::string dev = runner.dir() + "/dev/nvidia0";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c",
          "exec 3<\"$0\"; sleep 0.3; exec 3<&-; sleep 0.3; exec 7<\"$0\" sleep 30", dev.c_str(),
          static_cast<char*>(nullptr));
    _exit(4);
  }
  children_.push_back(pid);
  usleep(100 * 1000);
  const uint64_t born = StartTime(pid);
  usleep(900 * 1000);  // closed, then opened again on fd 7 by the exec'd sleep
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::string out =
      runner.Run(Script(SignalScript("KILL", {{pid, born, true}}, milliseconds(1000),
                                     milliseconds(50), paths, {}, AuditRequest(), born + 1)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.sent, std::vector<int>{pid}) << out;
}

TEST_P(SignalLiveTest, HolderThatExitsBeforeItsSignalIsGone) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  // kill(1)'s path (a perl that answers nothing); signal_pidfd_test has the pidfd one.
  runner.Write(runner.dir() + "/bin/perl", "#!/bin/sh\nexit 0\n", 0755);
  std::string racing = "kill() { command kill -s KILL \"$3\"; sleep 0.2; return 1; }\n";
  std::string out = runner.Run(racing + SignalScript("TERM", {{holder, StartTime(holder), true}},
                                                     milliseconds(300), milliseconds(50), paths));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.gone, std::vector<int>{holder});
  EXPECT_TRUE(result.sent.empty());
  EXPECT_TRUE(result.failed.empty());
}

// The wait looks at its targets every 10 ms for its first second, then every
// poll: the schedule of its sleeps, recorded by a stand-in sleep (a holder
// that ignores TERM keeps it waiting to the end). Before, the first look came
// two polls after the signal, through tail --pid slices. Where the host has
// perl, perl waits after the first look, with its own sleeps: no sleep
// process, the whole wait, and the target it left.
TEST_P(SignalLiveTest, WaitLooksEveryTenMsForItsFirstSecondThenEveryPoll) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  runner.Write(runner.dir() + "/bin/sleep",
               "#!/bin/sh\necho \"$1\" >> " + runner.dir() + "/sleeps\nexec /bin/sleep \"$1\"\n",
               0755);
  signal(SIGTERM, SIG_IGN);  // inherited through exec by the holder alone
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  signal(SIGTERM, SIG_DFL);
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::string out = runner.Run(Script(SignalScript("TERM", {{holder, StartTime(holder), true}},
                                                   milliseconds(1500), milliseconds(100), paths)));
  std::ifstream in(runner.dir() + "/sleeps");
  std::vector<std::string> sleeps;
  for (std::string line; std::getline(in, line);) sleeps.push_back(line);
  if (GetParam()) {
    SignalReply result;
    ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
    EXPECT_TRUE(sleeps.empty()) << out;
    EXPECT_GE(result.waited_cs, 150) << out;
    ASSERT_EQ(result.left.size(), 1u) << out;
    EXPECT_EQ(result.left[0].first, holder);
    return;
  }
  ASSERT_GE(sleeps.size(), 3u) << out;
  EXPECT_EQ(sleeps.front(), "0.01");
  size_t i = 0;
  while (i < sleeps.size() && sleeps[i] == "0.01") ++i;
  ASSERT_LT(i, sleeps.size()) << "no poll after the first second";
  for (size_t j = i; j + 1 < sleeps.size(); ++j) EXPECT_EQ(sleeps[j], "0.10") << j;
}

INSTANTIATE_TEST_SUITE_P(PerlAndShell, SignalLiveTest, ::testing::Bool());

}  // namespace
}  // namespace fleetreap
