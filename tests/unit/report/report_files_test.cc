#include "fleetreap/report/report_files.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fleetreap/report/report_json.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ReadFile;

class ReportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-report-files-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const char* name : {"r.json", "r.xml", "r.md", "failed.txt"}) {
      std::remove((dir_ + "/" + name).c_str());
    }
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(ReportFilesTest, WritesEveryRequestedReport) {
  ReportFiles files;
  files.json = dir_ + "/r.json";
  files.junit = dir_ + "/r.xml";
  files.summary_md = dir_ + "/r.md";
  files.failed_hosts = dir_ + "/failed.txt";
  RunReport run = testing_fixture::MixedFleet();
  ASSERT_TRUE(WriteReports(run, files).ok());
  EXPECT_EQ(ReadFile(files.json), RenderJson(run));
  EXPECT_NE(ReadFile(files.junit).find("<testsuites"), std::string::npos);
  EXPECT_NE(ReadFile(files.summary_md).find("## fleetreap"), std::string::npos);
  EXPECT_EQ(ReadFile(files.failed_hosts), "gpu13\ngpu14\ngpu15\ngpu16\n");
}

// A report rendered in pieces lands whole, past the writes' chunk size.
TEST_F(ReportFilesTest, PiecesAreWrittenInOrder) {
  const std::string path = dir_ + "/r.json";
  std::string expected;
  ASSERT_TRUE(WriteReportPieces(path, [&expected](const ReportPieceSink& emit) {
                for (int i = 0; i < 5000; ++i) {
                  const std::string piece =
                      "host" + std::to_string(i) + std::string(40, '.') + "\n";
                  expected += piece;
                  emit(piece);
                }
              }).ok());
  EXPECT_GT(expected.size(), 128u * 1024);
  EXPECT_EQ(ReadFile(path), expected);
}

TEST_F(ReportFilesTest, DashMeansTheStdoutStream) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ReportFiles files;
  files.json = "-";
  RunReport run = testing_fixture::MixedFleet();
  ASSERT_TRUE(WriteReports(run, files, out).ok());
  std::rewind(out);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), out)) > 0) text.append(buffer, n);
  std::fclose(out);
  EXPECT_EQ(text, RenderJson(run));
}

TEST_F(ReportFilesTest, BadPathIsAnErrorButOtherReportsAreWritten) {
  ReportFiles files;
  files.json = dir_ + "/missing-dir/r.json";
  files.failed_hosts = dir_ + "/failed.txt";
  Status status = WriteReports(testing_fixture::MixedFleet(), files);
  EXPECT_EQ(status.kind(), ErrorKind::kInternal);
  EXPECT_EQ(status.message(), "cannot write " + files.json + ": No such file or directory");
  EXPECT_EQ(ReadFile(files.failed_hosts), "gpu13\ngpu14\ngpu15\ngpu16\n");
}

TEST_F(ReportFilesTest, ReplacesAnOldFileWhole) {
  std::string path = dir_ + "/failed.txt";
  ASSERT_TRUE(WriteReportFile(path, "a very long old list\n").ok());
  ASSERT_TRUE(WriteReportFile(path, "").ok());
  EXPECT_EQ(ReadFile(path), "");
}

}  // namespace
}  // namespace fleetreap

namespace fleetreap {
namespace {

TEST_F(ReportFilesTest, NeverFollowsASymlinkPlantedAtATempName) {
  // A local user who can write the directory (say /tmp) plants symlinks at
  // every name a writer might use for its temporary file: the old scheme's
  // "PATH.tmp.PID" and mkstemp's own pattern cannot be guessed, but the
  // predictable one must never be opened.
  const std::string victim = dir_ + "/victim";
  const std::string path = dir_ + "/r.json";
  ASSERT_TRUE(WriteReportFile(victim, "precious\n").ok());
  const std::string planted = path + ".tmp." + std::to_string(getpid());
  ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_TRUE(WriteReportFile(path, "{}\n").ok());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_EQ(ReadFile(path), "{}\n");
  struct stat info {};
  ASSERT_EQ(lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  unlink(planted.c_str());
  unlink(victim.c_str());
}

TEST_F(ReportFilesTest, ReplacesASymlinkAtTheTargetInsteadOfWritingThroughIt) {
  const std::string victim = dir_ + "/victim";
  const std::string path = dir_ + "/r.json";
  ASSERT_TRUE(WriteReportFile(victim, "precious\n").ok());
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  ASSERT_TRUE(WriteReportFile(path, "{}\n").ok());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  struct stat info {};
  ASSERT_EQ(lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);  // reports carry command lines
  unlink(victim.c_str());
}

TEST_F(ReportFilesTest, LeavesNoTemporaryFileBehind) {
  // Success, and a failed rename (the target is a directory).
  ASSERT_TRUE(WriteReportFile(dir_ + "/r.md", "x").ok());
  const std::string blocked = dir_ + "/r.xml";
  ASSERT_EQ(mkdir(blocked.c_str(), 0700), 0);
  EXPECT_EQ(WriteReportFile(blocked, "x").kind(), ErrorKind::kInternal);
  rmdir(blocked.c_str());
  DIR* dir = opendir(dir_.c_str());
  ASSERT_NE(dir, nullptr);
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.' ||
        (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..")) {
      names.push_back(entry->d_name);
    }
  }
  closedir(dir);
  EXPECT_EQ(names, std::vector<std::string>{"r.md"});
}

TEST_F(ReportFilesTest, CheckOutputPathsNamesTheFlagAndTheProblem) {
  const std::string blocked = dir_ + "/r.xml";
  ASSERT_EQ(mkdir(blocked.c_str(), 0700), 0);
  struct Row {
    std::string json;
    std::string junit;
    std::string journal;
    std::string error;  // "" for ok
  };
  const Row rows[] = {
      {dir_ + "/r.json", "", dir_ + "/r.json.journal", ""},
      {"-", "", "", ""},
      {"/nonexistent/dir/r.json", "", "",
       "--json /nonexistent/dir/r.json: cannot write there: No such file or directory"},
      {"", blocked, "", "--junit " + blocked + ": is a directory"},
      {dir_ + "/r.json", dir_ + "/r.json", "",
       "--junit " + dir_ + "/r.json and --json " + dir_ + "/r.json name the same file"},
      {"", "", "/nonexistent/j",
       "--journal /nonexistent/j: cannot write there: No such file or "
       "directory"},
  };
  for (const Row& row : rows) {
    ReportFiles files;
    files.json = row.json;
    files.junit = row.junit;
    files.journal = row.journal;
    Status status = CheckOutputPaths(files);
    EXPECT_EQ(status.ok() ? "" : status.message(), row.error) << row.json;
    if (!status.ok()) {
      EXPECT_EQ(status.kind(), ErrorKind::kUsage);
    }
  }
  rmdir(blocked.c_str());
  // The probe leaves nothing behind.
  DIR* dir = opendir(dir_.c_str());
  ASSERT_NE(dir, nullptr);
  int entries = 0;
  while (readdir(dir) != nullptr) ++entries;
  closedir(dir);
  EXPECT_EQ(entries, 2);
}

TEST(HumanStreamTest, StderrWhenAReportGoesToStdout) {
  struct Row {
    const char* json;
    const char* junit;
    std::FILE* stream;
  };
  const Row rows[] = {
      {"", "", stdout},
      {"r.json", "r.xml", stdout},
      {"-", "", stderr},
      {"r.json", "-", stderr},
  };
  for (const Row& row : rows) {
    ReportFiles files;
    files.json = row.json;
    files.junit = row.junit;
    EXPECT_EQ(HumanStream(files), row.stream) << row.json << " " << row.junit;
  }
}

}  // namespace
}  // namespace fleetreap
