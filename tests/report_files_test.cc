#include "fleetreap/report_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include "fleetreap/report_json.h"
#include "report_fixture.h"

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
  Options options;
  options.json = dir_ + "/r.json";
  options.junit = dir_ + "/r.xml";
  options.summary_md = dir_ + "/r.md";
  options.failed_hosts = dir_ + "/failed.txt";
  RunReport run = testing_fixture::MixedFleet();
  ASSERT_TRUE(WriteReports(run, options).ok());
  EXPECT_EQ(ReadFile(options.json), RenderJson(run));
  EXPECT_NE(ReadFile(options.junit).find("<testsuites"), std::string::npos);
  EXPECT_NE(ReadFile(options.summary_md).find("## fleetreap"), std::string::npos);
  EXPECT_EQ(ReadFile(options.failed_hosts), "gpu13\ngpu14\ngpu15\ngpu16\n");
}

TEST_F(ReportFilesTest, DashMeansTheStdoutStream) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Options options;
  options.json = "-";
  RunReport run = testing_fixture::MixedFleet();
  ASSERT_TRUE(WriteReports(run, options, out).ok());
  std::rewind(out);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), out)) > 0) text.append(buffer, n);
  std::fclose(out);
  EXPECT_EQ(text, RenderJson(run));
}

TEST_F(ReportFilesTest, BadPathIsAnErrorButOtherReportsAreWritten) {
  Options options;
  options.json = dir_ + "/missing-dir/r.json";
  options.failed_hosts = dir_ + "/failed.txt";
  Status status = WriteReports(testing_fixture::MixedFleet(), options);
  EXPECT_EQ(status.kind(), ErrorKind::kInternal);
  EXPECT_EQ(status.message(),
            "cannot write " + options.json + ": No such file or directory");
  EXPECT_EQ(ReadFile(options.failed_hosts), "gpu13\ngpu14\ngpu15\ngpu16\n");
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
    Options options;
    options.json = row.json;
    options.junit = row.junit;
    EXPECT_EQ(HumanStream(options), row.stream) << row.json << " " << row.junit;
  }
}

}  // namespace
}  // namespace fleetreap
