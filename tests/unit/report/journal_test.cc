#include "fleetreap/report/journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_merge.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ReadFile;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-journal-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/r.json.journal";
    fleet_ = testing_fixture::MixedFleet();
    for (const HostReport& host : fleet_.hosts) selected_.push_back(host.name);
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }

  // Opens the journal and records hosts [0, finished) as finished and
  // [finished, started) as started only.
  void Record(size_t finished, size_t started, bool ended) {
    std::unique_ptr<Journal> journal;
    ASSERT_TRUE(Journal::Open(path_, fleet_, selected_, &journal).ok());
    for (size_t i = 0; i < started; ++i) {
      ASSERT_TRUE(journal->Started(fleet_.hosts[i].name).ok());
      if (i < finished) {
        ASSERT_TRUE(journal->Finished(fleet_.hosts[i]).ok());
      }
    }
    if (ended) {
      ASSERT_TRUE(journal->Ended(false).ok());
    }
  }

  std::string dir_;
  std::string path_;
  RunReport fleet_;
  std::vector<std::string> selected_;
};

TEST_F(JournalTest, AFinishedRunReadsBackAsTheReport) {
  Record(fleet_.hosts.size(), fleet_.hosts.size(), true);
  struct stat info {};
  ASSERT_EQ(stat(path_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const std::string text = ReadFile(path_);
  EXPECT_TRUE(LooksLikeJournal(text));
  RunReport read;
  Status status = ReadJournal(text, "r.journal", &read);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(read.interrupted);
  // Everything but the duration (the journal's own clock) is the report's.
  read.duration = fleet_.duration;
  EXPECT_EQ(RenderJson(read), RenderJson(fleet_));
}

TEST_F(JournalTest, AKilledControllerLeavesFinishedHostsAndThoseInFlight) {
  Record(3, 5, false);
  std::string text = ReadFile(path_);
  text += "{\"event\":\"finished\",\"t_ms\":9,\"host\":{\"name\":\"gp";  // cut by the kill
  RunReport read;
  Status status = ReadJournal(text, "r.journal", &read);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(read.interrupted);
  ASSERT_EQ(read.hosts.size(), 3u);
  EXPECT_EQ(read.hosts[2].name, "gpu03");
  ASSERT_EQ(read.no_report.size(), 2u);
  EXPECT_EQ(read.no_report[0].name, "gpu04");
  EXPECT_EQ(read.no_report[1].why, kInFlightWhenJournalEnded);
  EXPECT_EQ(read.not_started.size(), fleet_.hosts.size() - 5);
  EXPECT_EQ(ExitCodeFor(read) & 2, 2);
}

// Opens a "-" journal while stdout is "fd", then puts stdout back.
Status OpenWithStdoutOn(int fd, const RunReport& run, const std::vector<std::string>& selected,
                        std::unique_ptr<Journal>* out) {
  std::fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  if (saved < 0) return Status::Error(ErrorKind::kInternal, "dup failed");
  Status opened = dup2(fd, STDOUT_FILENO) == STDOUT_FILENO
                      ? Journal::Open("-", run, selected, out)
                      : Status::Error(ErrorKind::kInternal, "dup2 failed");
  dup2(saved, STDOUT_FILENO);
  close(saved);
  return opened;
}

// "-" streams the lines on stdout as they are written; a pipe there is
// never fsync'd (that would fail), and the stream reads back as the report.
// A symlink or a hard link planted at the path is replaced, never written.
TEST_F(JournalTest, APlantedLinkIsReplacedNotWritten) {
  const std::string target = dir_ + "/victim";
  std::ofstream(target) << "keep";
  ASSERT_EQ(symlink(target.c_str(), path_.c_str()), 0);
  Record(1, 1, true);
  EXPECT_EQ(ReadFile(target), "keep");
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::remove(path_.c_str());
  ASSERT_EQ(link(target.c_str(), path_.c_str()), 0);
  Record(1, 1, true);
  EXPECT_EQ(ReadFile(target), "keep");
  std::remove(target.c_str());
}

TEST_F(JournalTest, DashStreamsTheLinesOnStdout) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::string text;
  std::thread reader([&text, fd = pipe_fds[0]] {
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  });
  std::unique_ptr<Journal> journal;
  Status opened = OpenWithStdoutOn(pipe_fds[1], fleet_, selected_, &journal);
  close(pipe_fds[1]);
  EXPECT_TRUE(opened.ok()) << opened.message();
  if (opened.ok()) {
    for (const HostReport& host : fleet_.hosts) {
      EXPECT_TRUE(journal->Started(host.name).ok());
      EXPECT_TRUE(journal->Finished(host).ok());
    }
    EXPECT_TRUE(journal->Ended(false).ok());
  }
  journal.reset();  // closes its descriptor: the pipe's last writer
  reader.join();
  close(pipe_fds[0]);
  RunReport read;
  ASSERT_TRUE(ReadJournal(text, "stdout", &read).ok());
  ASSERT_EQ(read.hosts.size(), fleet_.hosts.size());
  EXPECT_EQ(read.hosts.back().name, fleet_.hosts.back().name);
  struct stat st {};
  EXPECT_NE(stat("-", &st), 0);  // no file named "-"
}

TEST_F(JournalTest, TheWavesStopReasonReadsBack) {
  {
    std::unique_ptr<Journal> journal;
    ASSERT_TRUE(Journal::Open(path_, fleet_, selected_, &journal).ok());
    ASSERT_TRUE(journal->Started(fleet_.hosts[0].name).ok());
    ASSERT_TRUE(journal->Finished(fleet_.hosts[0]).ok());
    ASSERT_TRUE(journal->Ended(false, "stopped by --max-fail 0: 1 host failed").ok());
  }
  RunReport read;
  ASSERT_TRUE(ReadJournal(ReadFile(path_), "r.journal", &read).ok());
  EXPECT_EQ(read.stopped, "stopped by --max-fail 0: 1 host failed");
  EXPECT_EQ(read.not_started.size(), fleet_.hosts.size() - 1);
  EXPECT_EQ(ExitCodeFor(read) & 4, 4);
}

TEST_F(JournalTest, MergeReadsAJournal) {
  Record(2, 3, false);
  RunReport merged;
  Status status = MergeReportFiles({path_}, &merged);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(merged.hosts.size(), 2u);
  ASSERT_EQ(merged.no_report.size(), 1u);
  EXPECT_EQ(merged.no_report[0].name, "gpu03");
}

TEST(JournalReadTest, ErrorsNameTheLine) {
  const std::string header = "{\"fleetreap_journal\":1,\"run\":" + RenderJsonLine(RunReport()) +
                             ",\"selected\":[\"a\"]}\n";
  struct Row {
    std::string text;
    std::string error;
  };
  const Row rows[] = {
      {"", "j:1: not a fleetreap journal"},
      {"{\"schema_version\":1}\n", "j:1: not a fleetreap journal"},
      {"{\"fleetreap_journal\":1}\n", "j:1: not a fleetreap journal"},
      {header + "{nope\n", "j:2: not JSON"},
      {header + "{\"event\":\"started\",\"host\":3}\n", "j:2: host: expected a string"},
      {header + "{\"event\":\"finished\",\"host\":{\"name\":\"a\",\"status\":\"clean\",\"port\":"
                "\"x\"}}\n",
       "j:2: host.port: expected an integer, got string"},
      {header + "{\"event\":\"finished\",\"host\":{\"name\":\"b\",\"status\":\"clean\"}}\n",
       "j:2: host b is not among the selected hosts"},
  };
  for (const Row& row : rows) {
    RunReport report;
    Status status = ReadJournal(row.text, "j", &report);
    ASSERT_FALSE(status.ok()) << row.text;
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(status.message().substr(0, row.error.size()), row.error) << status.message();
  }
  RunReport report;
  ASSERT_TRUE(ReadJournal(header + "{\"event\":\"what's new\"}\n", "j", &report).ok());
  EXPECT_EQ(report.not_started, std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace fleetreap
