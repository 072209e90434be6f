#include "fleetreap/transport/command_log.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "support/fake_clock.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ReadFile;

// Answers every Run with the next scripted result.
class ScriptedTransport : public Transport {
 public:
  ScriptedTransport(Status connect, std::vector<CommandResult> results)
      : connect_(std::move(connect)), results_(std::move(results)) {}
  Status Connect(std::chrono::steady_clock::time_point) override { return connect_; }
  CommandResult Run(const std::string&, std::chrono::milliseconds) override {
    return next_ < results_.size() ? results_[next_++] : CommandResult{};
  }
  void Close() override {}
  std::string Describe() const override { return "root@127.0.1.3:22"; }

 private:
  Status connect_;
  std::vector<CommandResult> results_;
  size_t next_ = 0;
};

CommandResult Exited(int code, std::string out, std::string err, int millis) {
  CommandResult result;
  result.end = CommandEnd::kExited;
  result.exit_code = code;
  result.out = std::move(out);
  result.err = std::move(err);
  result.duration = std::chrono::milliseconds(millis);
  return result;
}

class CommandLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-command-log-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf -- '" + root_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  // Wall time starts at 2026-11-30T03:04:05.000Z and moves 10 ms per reading.
  class SteppingWallClock : public FakeClock {
   public:
    std::chrono::system_clock::time_point WallNow() override {
      ticks_ += 10;
      return std::chrono::system_clock::time_point(
          std::chrono::milliseconds(1796007845000 + ticks_ - 10));
    }

   private:
    int64_t ticks_ = 0;
  };
  Clock& SteppingClock() { return stepping_clock_; }

  std::string root_;
  SteppingWallClock stepping_clock_;
};

TEST_F(CommandLogTest, LogsConnectCommandsEndingsAndOutput) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_ + "/logs/run1", &log, SteppingClock()).ok());
  CommandResult killed;
  killed.end = CommandEnd::kSignaled;
  killed.signal = "KILL";
  killed.duration = std::chrono::milliseconds(5);
  CommandResult timed_out;
  timed_out.end = CommandEnd::kTimedOut;
  timed_out.error = "no answer in 60 s";
  timed_out.duration = std::chrono::milliseconds(62000);
  std::unique_ptr<Transport> transport = log->Wrap(
      "gpu03",
      std::make_unique<ScriptedTransport>(
          Status::Ok(), std::vector<CommandResult>{Exited(0, "0, 0 MiB\n1, 12 MiB\n", "", 200),
                                                   killed, timed_out}));
  ASSERT_TRUE(transport->Connect(kNoDeadline).ok());
  transport->Run("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader",
                 std::chrono::milliseconds(60000));
  transport->NameNextCommand("term: signal");  // for that one Run
  transport->Run("kill -KILL 4242\necho done", std::chrono::milliseconds(5000));
  transport->Run("sleep 100", std::chrono::milliseconds(60000));
  transport->Close();
  EXPECT_EQ(transport->Describe(), "root@127.0.1.3:22");
  EXPECT_EQ(ReadFile(root_ + "/logs/run1/gpu03.log"),
            "2026-11-30T03:04:05.000Z connect root@127.0.1.3:22\n"
            "2026-11-30T03:04:05.010Z connected (10 ms)\n"
            "2026-11-30T03:04:05.020Z run (timeout 60000 ms):\n"
            "  $ nvidia-smi --query-gpu=index,memory.used --format=csv,noheader\n"
            "2026-11-30T03:04:05.030Z exited 0 (200 ms)\n"
            "  stdout (19 bytes):\n"
            "  | 0, 0 MiB\n"
            "  | 1, 12 MiB\n"
            "  stderr: empty\n"
            "2026-11-30T03:04:05.040Z run term: signal (timeout 5000 ms):\n"
            "  $ kill -KILL 4242\n"
            "  $ echo done\n"
            "2026-11-30T03:04:05.050Z killed by SIGKILL (5 ms)\n"
            "  stdout: empty\n"
            "  stderr: empty\n"
            "2026-11-30T03:04:05.060Z run (timeout 60000 ms):\n"
            "  $ sleep 100\n"
            "2026-11-30T03:04:05.070Z timed_out: no answer in 60 s (62000 ms)\n"
            "  stdout: empty\n"
            "  stderr: empty\n"
            "2026-11-30T03:04:05.080Z closed\n");
}

TEST_F(CommandLogTest, FailedConnectAndRetriesAppend) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_, &log, SteppingClock()).ok());
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Transport> transport =
        log->Wrap("gpu14", std::make_unique<ScriptedTransport>(
                               Status::Error(ErrorKind::kConnectTimeout, "Timeout connecting"),
                               std::vector<CommandResult>{}));
    EXPECT_EQ(transport->Connect(kNoDeadline).kind(), ErrorKind::kConnectTimeout);
  }
  EXPECT_EQ(ReadFile(root_ + "/gpu14.log"),
            "2026-11-30T03:04:05.000Z connect root@127.0.1.3:22\n"
            "2026-11-30T03:04:05.010Z connect failed: connect_timeout: Timeout "
            "connecting (10 ms)\n"
            "2026-11-30T03:04:05.020Z connect root@127.0.1.3:22\n"
            "2026-11-30T03:04:05.030Z connect failed: connect_timeout: Timeout "
            "connecting (10 ms)\n");
}

TEST_F(CommandLogTest, CutsOutputPastTheCap) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_, &log, SteppingClock(), 8).ok());
  CommandResult big = Exited(1, "0123456789abcdef", "oops", 1);
  big.out_truncated = true;
  std::unique_ptr<Transport> transport = log->Wrap(
      "gpu01", std::make_unique<ScriptedTransport>(Status::Ok(), std::vector<CommandResult>{big}));
  transport->Run("cat big", std::chrono::milliseconds(1000));
  std::string text = ReadFile(root_ + "/gpu01.log");
  EXPECT_NE(text.find("exited 1 (1 ms)\n"
                      "  stdout (16 bytes, capped by the transport):\n"
                      "  | 01234567\n"
                      "  ... 8 more bytes not logged\n"
                      "  stderr (4 bytes):\n"
                      "  | oops\n"),
            std::string::npos)
      << text;
}

// The host's NUL-separated records stay text: each NUL as "\0" and a line
// break, a backslash doubled so that a "\0" the host printed reads "\\0".
TEST_F(CommandLogTest, ShowsNulBytesAsText) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_, &log, SteppingClock(), 20).ok());
  const std::string records("@@pid 42\0cmd a\\0b\0\0", 19);
  std::unique_ptr<Transport> transport = log->Wrap(
      "gpu02",
      std::make_unique<ScriptedTransport>(
          Status::Ok(), std::vector<CommandResult>{
                            Exited(0, records, std::string("e\0", 2), 3),
                            Exited(0, std::string("0123456789abcdefghi\0tail", 24), "", 4)}));
  transport->Run("scan", std::chrono::milliseconds(1000));
  transport->Run("cut", std::chrono::milliseconds(1000));
  const std::string text = ReadFile(root_ + "/gpu02.log");
  EXPECT_EQ(text.find('\0'), std::string::npos);
  EXPECT_NE(text.find("exited 0 (3 ms)\n"
                      "  stdout (19 bytes):\n"
                      "  | @@pid 42\\0\n"
                      "  | cmd a\\\\0b\\0\n"
                      "  | \\0\n"
                      "  stderr (2 bytes):\n"
                      "  | e\\0\n"),
            std::string::npos)
      << text;
  // The cap counts the bytes as sent, not as shown.
  EXPECT_NE(text.find("exited 0 (4 ms)\n"
                      "  stdout (24 bytes):\n"
                      "  | 0123456789abcdefghi\\0\n"
                      "  ... 4 more bytes not logged\n"),
            std::string::npos)
      << text;
}

TEST_F(CommandLogTest, FileNamesCannotEscapeTheDirectory) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_, &log).ok());
  struct Row {
    const char* host;
    const char* file;
  };
  const Row rows[] = {
      {"gpu07", "gpu07.log"},
      {"gpu07.rack2.example.com", "gpu07.rack2.example.com.log"},
      {"../../etc/passwd", ".._.._etc_passwd.log"},
      {"..", "_.log"},
      {"", "_.log"},
      {"a b:c", "a_b_c.log"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(log->PathFor(row.host), root_ + "/" + row.file) << row.host;
  }
}

TEST_F(CommandLogTest, OpenFailsWhenTheDirectoryCannotBeMade) {
  std::string file = root_ + "/plain-file";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  std::unique_ptr<CommandLog> log;
  Status status = CommandLog::Open(file + "/logs", &log);
  EXPECT_EQ(status.kind(), ErrorKind::kInternal);
  EXPECT_EQ(status.message(), "cannot create log directory " + file + "/logs: Not a directory");
  EXPECT_EQ(log, nullptr);
  EXPECT_EQ(CommandLog::Open("", &log).kind(), ErrorKind::kUsage);
}

TEST_F(CommandLogTest, OpenCreatesTheDirectoryForThisUserOnly) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_ + "/new/logs", &log).ok());
  struct stat info {};
  ASSERT_EQ(stat((root_ + "/new/logs").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0700u);
  std::unique_ptr<Transport> transport = log->Wrap(
      "gpu01", std::make_unique<ScriptedTransport>(Status::Ok(), std::vector<CommandResult>{}));
  ASSERT_EQ(stat(log->PathFor("gpu01").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
}

TEST_F(CommandLogTest, OpenRefusesADirectoryOthersMayWrite) {
  ASSERT_EQ(chmod(root_.c_str(), 01777), 0);
  std::unique_ptr<CommandLog> log;
  Status status = CommandLog::Open(root_, &log);
  EXPECT_EQ(status.kind(), ErrorKind::kUsage);
  EXPECT_EQ(status.message(),
            "--log-dir " + root_ + ": writable by its group or others (mode 1777); make it 0700");
  EXPECT_EQ(log, nullptr);
}

TEST_F(CommandLogTest, OpenRefusesASymlinkEntry) {
  ASSERT_EQ(symlink("/etc/sudoers.d/zz", (root_ + "/gpu01.log").c_str()), 0);
  std::unique_ptr<CommandLog> log;
  Status status = CommandLog::Open(root_, &log);
  EXPECT_EQ(status.kind(), ErrorKind::kUsage);
  EXPECT_EQ(status.message(),
            "--log-dir " + root_ + ": gpu01.log is a symbolic link; refusing to write through it");
}

TEST_F(CommandLogTest, OpenRefusesADirectoryOfAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  ASSERT_EQ(chown(root_.c_str(), 1000, 1000), 0);
  std::unique_ptr<CommandLog> log;
  Status status = CommandLog::Open(root_, &log);
  EXPECT_EQ(status.kind(), ErrorKind::kUsage);
  EXPECT_EQ(status.message(),
            "--log-dir " + root_ + ": owned by uid 1000, not by uid 0 (this user)");
}

TEST_F(CommandLogTest, HostsLoggingAtOnceNeverInterleave) {
  std::unique_ptr<CommandLog> log;
  ASSERT_TRUE(CommandLog::Open(root_, &log).ok());
  const int kHosts = 8;
  const int kCommands = 50;
  std::vector<std::thread> threads;
  for (int h = 0; h < kHosts; ++h) {
    threads.emplace_back([&, h] {
      std::vector<CommandResult> results(kCommands, Exited(0, "ok\n", "", 1));
      std::unique_ptr<Transport> transport = log->Wrap(
          "host" + std::to_string(h), std::make_unique<ScriptedTransport>(Status::Ok(), results));
      for (int c = 0; c < kCommands; ++c) {
        transport->Run("echo " + std::to_string(h), std::chrono::milliseconds(1000));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int h = 0; h < kHosts; ++h) {
    std::string text = ReadFile(log->PathFor("host" + std::to_string(h)));
    int runs = 0;
    for (size_t at = text.find("  $ echo "); at != std::string::npos;
         at = text.find("  $ echo ", at + 1)) {
      EXPECT_EQ(text.substr(at, 11), "  $ echo " + std::to_string(h) + "\n");
      ++runs;
    }
    EXPECT_EQ(runs, kCommands);
  }
}

}  // namespace
}  // namespace fleetreap
