// The signal step's kill through pidfds (signal.cc): the perl that walks the
// targets opens a pidfd for each, checks its start time again and signals
// through it; a kill's own perl where that walk failed; without perl, or
// with a perl that answers nothing, kill(1) in the shell. Run with /bin/sh
// against children this test starts and ends by PID.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/signal.h"
#include "support/holder_process.h"
#include "support/scratch_dir.h"
#include "support/script_dir.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

class SignalPidfdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_.path();
    std::ofstream(dir_ + "/dev/nvidia0") << "";
    paths_.dev_dir = dir_ + "/dev";
  }
  // A sleep that holds dev/nvidia0 open.
  pid_t StartHolder() {
    pid_t pid = ForkHolder(dir_ + "/dev/nvidia0");
    scratch_.Adopt(pid);
    return pid;
  }
  static uint64_t StartTime(pid_t pid) { return ProcessStartTime(pid); }
  // A stand-in perl on PATH before the real one.
  void FakePerl(const std::string& body) {
    std::string path = dir_ + "/bin/perl";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
  }
  SignalReply Signal(const std::vector<Target>& targets) {
    std::string out = RunScriptIn(
        dir_, SignalScript("TERM", targets, milliseconds(1000), milliseconds(50), paths_));
    SignalReply reply;
    EXPECT_TRUE(ParseSignalOutput(out, &reply).ok()) << out;
    std::sort(reply.sent.begin(), reply.sent.end());
    return reply;
  }
  static bool HasPerl() { return std::system("command -v perl >/dev/null 2>&1") == 0; }

  ScratchDir scratch_{"pidfd", {"bin", "dev"}};
  std::string dir_;
  HostPaths paths_;
};

TEST_F(SignalPidfdTest, TargetsAreSignalledThroughPidfds) {
  if (!HasPerl()) GTEST_SKIP() << "no perl on this machine";
  // Each perl run's argument count: the walk's is "-e PROG --" and its 18
  // arguments (14 to 16 the signal's), the kill's own perl would be
  // "-e PROG TERM T...". One run walks, checks and signals; no kill's perl.
  FakePerl("echo \"$#\" >>" + dir_ + "/calls; exec /usr/bin/perl \"$@\"");
  pid_t a = StartHolder();
  pid_t b = StartHolder();
  usleep(200 * 1000);
  SignalReply reply = Signal({{a, StartTime(a), true}, {b, StartTime(b), true}});
  std::vector<int> both = {a, b};
  std::sort(both.begin(), both.end());
  EXPECT_EQ(reply.sent, both);
  EXPECT_EQ(reply.pidfd_sent, 2);
  EXPECT_TRUE(reply.left.empty());
  std::ifstream in(dir_ + "/calls");
  std::vector<std::string> calls;
  for (std::string line; std::getline(in, line);) calls.push_back(line);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0], "21");
  // After it, at most the wait's perl ("-e PROG E F POLL T..."), never the kill's.
  EXPECT_LE(calls.size(), 2u);
}

TEST_F(SignalPidfdTest, ATargetThatDiesBeforeItsPidfdOpensIsGone) {
  if (!HasPerl()) GTEST_SKIP() << "no perl on this machine";
  pid_t a = StartHolder();
  usleep(200 * 1000);
  // The target is killed and reaped before the perl that walks, checks and
  // signals runs (the walk no longer finds it; a pidfd could not open:
  // ESRCH), so it is gone, never failed.
  FakePerl("kill -KILL " + std::to_string(a) + "; sleep 0.3; exec /usr/bin/perl \"$@\"");
  std::thread reaper([a] { waitpid(a, nullptr, 0); });
  SignalReply reply = Signal({{a, StartTime(a), true}});
  reaper.join();
  scratch_.Disown(a);
  EXPECT_TRUE(reply.sent.empty());
  EXPECT_EQ(reply.gone, std::vector<int>{a});
  EXPECT_TRUE(reply.failed.empty());
  EXPECT_EQ(reply.pidfd_sent, 0);
}

// A real perl that kills itself right after its first pidfd_send_signal
// (424) goes out, before it can say so.
constexpr char kDiesAfterSignal[] =
    "exec /usr/bin/perl -e 'BEGIN { *CORE::GLOBAL::syscall = sub { my ($n, @a) = @_; my $r = "
    "CORE::syscall($n, @a); kill(\"KILL\", $$) if $n == 424 and $r == 0; $r } }' \"$@\"";

TEST_F(SignalPidfdTest, ASignalSentBeforeThePerlDiedIsRecorded) {
  if (!HasPerl()) GTEST_SKIP() << "no perl on this machine";
  // The walk's perl ("-e PROG -- ...") is killed right after its first
  // signal goes out, before it can say so: the target died of that TERM,
  // so the shell's walk finds it gone, yet the perl had said it set out to
  // signal it ("P try"), and it is recorded as sent, once, through the
  // pidfd.
  FakePerl("[ \"$3\" = -- ] || exec /usr/bin/perl \"$@\"; " + std::string(kDiesAfterSignal));
  pid_t a = StartHolder();
  usleep(200 * 1000);
  SignalReply reply = Signal({{a, StartTime(a), true}});
  EXPECT_EQ(reply.sent, std::vector<int>{a});
  EXPECT_TRUE(reply.gone.empty());
  EXPECT_TRUE(reply.failed.empty());
  EXPECT_EQ(reply.pidfd_sent, 1);
  EXPECT_TRUE(reply.left.empty());
  // The same for the kill's own perl, where the walk's failed (printed
  // nothing): the target is sent, whether the shell then finds it gone or
  // still there (kill(1) once more), never gone.
  FakePerl("[ \"$3\" != -- ] || exit 0; " + std::string(kDiesAfterSignal));
  pid_t b = StartHolder();
  usleep(200 * 1000);
  reply = Signal({{b, StartTime(b), true}});
  EXPECT_EQ(reply.sent, std::vector<int>{b});
  EXPECT_TRUE(reply.gone.empty());
  EXPECT_TRUE(reply.failed.empty());
}

TEST_F(SignalPidfdTest, WithoutAnAnswerFromPerlKillInTheShellSignals) {
  // A perl that prints nothing (a host without pidfds would answer "kill")
  // leaves every target to kill(1): each is still signalled once.
  FakePerl("exit 0");
  pid_t a = StartHolder();
  usleep(200 * 1000);
  SignalReply reply = Signal({{a, StartTime(a), true}});
  EXPECT_EQ(reply.sent, std::vector<int>{a});
  EXPECT_EQ(reply.pidfd_sent, 0);
  // The holder walk's perl (perl -e PROG -- ...) fails here, so the shell
  // walks; the kill's perl answers "kill T" for each target.
  FakePerl(
      "[ \"$3\" != -- ] || exit 0; for t in \"$@\"; do case $t in *:*) echo \"kill $t\";; "
      "esac; done");
  pid_t b = StartHolder();
  usleep(200 * 1000);
  reply = Signal({{b, StartTime(b), true}});
  EXPECT_EQ(reply.sent, std::vector<int>{b});
  EXPECT_EQ(reply.pidfd_sent, 0);
}

TEST_F(SignalPidfdTest, AForgedAnswerNamesOnlyTheWavesOwnTargets) {
  // Whatever perl prints, only the wave's own targets are reported, each once,
  // and a line for another PID signals nothing.
  pid_t a = StartHolder();
  usleep(200 * 1000);
  const std::string t = std::to_string(a) + ":" + std::to_string(StartTime(a)) + ":f";
  FakePerl("echo 'sent 1:1:f'; echo 'sent " + t + "'; echo 'sent " + t + "'; echo 'gone " + t +
           "'; echo 'sent'");
  SignalReply reply = Signal({{a, StartTime(a), true}});
  EXPECT_EQ(reply.sent, std::vector<int>{a});
  EXPECT_TRUE(reply.gone.empty());
  EXPECT_EQ(reply.pidfd_sent, 1);
  EXPECT_EQ(kill(a, 0), 0);  // the stand-in sent nothing: a still lives (ScratchDir reaps it)
}

TEST(SignalPidfdOutputTest, ThePidfdCountIsCheckedAgainstTheSent) {
  auto nul = [](const std::string& s) { return s + std::string(1, '\0'); };
  const std::string head = nul("signal 1") + nul("now 5") + nul("sent 10");
  SignalReply reply;
  ASSERT_TRUE(ParseSignalOutput(head + nul("pidfd 1") + nul("end"), &reply).ok());
  EXPECT_EQ(reply.pidfd_sent, 1);
  EXPECT_FALSE(ParseSignalOutput(head + nul("pidfd 2") + nul("end"), &reply).ok());
  EXPECT_FALSE(ParseSignalOutput(head + nul("pidfd x") + nul("end"), &reply).ok());
  ASSERT_TRUE(ParseSignalOutput(head + nul("end"), &reply).ok());  // an older host's reply
  EXPECT_EQ(reply.pidfd_sent, 0);
}

}  // namespace
}  // namespace fleetreap
