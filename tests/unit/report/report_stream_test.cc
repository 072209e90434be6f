#include "fleetreap/report/report_stream.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fleetreap/report/drain_reason.h"
#include "fleetreap/report/failed_hosts.h"
#include "fleetreap/report/report_html.h"
#include "fleetreap/report/report_json.h"
#include "fleetreap/report/report_junit.h"
#include "fleetreap/report/report_markdown.h"
#include "fleetreap/report/report_metrics.h"
#include "fleetreap/report/report_plan.h"
#include "fleetreap/report/report_table.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ReadFile;

// The fleets of the golden files, and one that was cut short.
std::vector<RunReport> Fleets() {
  RunReport stopped = testing_fixture::MixedFleet();
  stopped.not_started = {"gpu17", "gpu18"};
  stopped.stopped = "--max-fail 2 reached after wave 1 of 3";
  stopped.no_report = {{"gpu19", "in flight when the journal ended"}};
  RunReport empty = testing_fixture::MixedFleet();
  empty.hosts.clear();
  empty.not_started = {"gpu01"};
  empty.interrupted = true;
  return {testing_fixture::MixedFleet(), testing_fixture::DriverSignalsFleet(),
          testing_fixture::DryRunFleet(), stopped, empty};
}

// The order hosts end in: the last first, then every other one.
std::vector<size_t> EndOrder(size_t hosts) {
  std::vector<size_t> order;
  for (size_t i = hosts; i-- > 0;) {
    if (i % 2 == 1) order.push_back(i);
  }
  for (size_t i = 0; i < hosts; ++i) {
    if (i % 2 == 0) order.push_back(i);
  }
  return order;
}

class ReportStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-report-stream-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    files_.json = dir_ + "/r.json";
    files_.junit = dir_ + "/r.xml";
    files_.summary_md = dir_ + "/r.md";
    files_.failed_hosts = dir_ + "/failed.txt";
    files_.drain_reasons = dir_ + "/drain.txt";
    files_.metrics = dir_ + "/m.prom";
    files_.html = dir_ + "/r.html";
  }
  void TearDown() override {
    for (const std::string* path :
         {&files_.json, &files_.junit, &files_.summary_md, &files_.failed_hosts,
          &files_.drain_reasons, &files_.metrics, &files_.html}) {
      std::remove(path->c_str());
    }
    rmdir(dir_.c_str());
  }
  // What is in the directory besides the reports.
  std::vector<std::string> Others() const {
    std::vector<std::string> names;
    DIR* d = opendir(dir_.c_str());
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name != "." && name != ".." && name != "r.json" && name != "r.xml" && name != "r.md" &&
          name != "failed.txt" && name != "drain.txt" && name != "m.prom" && name != "r.html") {
        names.push_back(name);
      }
    }
    closedir(d);
    return names;
  }
  std::string dir_;
  ReportFiles files_;
};

// The reports put together from hosts added as they end, in any order, are
// the whole report's, byte for byte; the report's hosts are not read.
TEST_F(ReportStreamTest, ReportsAreTheWholeReportsByteForByte) {
  for (const RunReport& run : Fleets()) {
    SCOPED_TRACE(run.hosts.size());
    std::unique_ptr<ReportStream> stream;
    ASSERT_TRUE(
        ReportStream::Open(files_, run.playbook, run.dry_run, run.hosts.size(), &stream).ok());
    for (size_t i : EndOrder(run.hosts.size())) stream->Add(i, run.hosts[i]);
    // The spills are already unlinked: nothing is left beside the targets.
    EXPECT_TRUE(Others().empty());
    RunReport header = run;
    header.hosts.clear();
    ASSERT_TRUE(stream->WriteReports(header, files_).ok());
    EXPECT_EQ(ReadFile(files_.json), RenderJson(run));
    EXPECT_EQ(ReadFile(files_.junit), RenderJunit(run));
    EXPECT_EQ(ReadFile(files_.summary_md), RenderMarkdown(run));
    EXPECT_EQ(ReadFile(files_.failed_hosts), RenderFailedHosts(run));
    EXPECT_EQ(ReadFile(files_.drain_reasons), RenderDrainReasons(run));
    EXPECT_EQ(ReadFile(files_.metrics), RenderMetrics(run));
    EXPECT_EQ(ReadFile(files_.html), RenderHtml(run));
    EXPECT_EQ(ExitCodeFor(header, stream->fold()), ExitCodeFor(run));
    EXPECT_EQ(stream->fold().RenderPlan(), RenderPlan(run));
    for (bool verbose : {false, true}) {
      for (int width : {0, 40}) {
        TableStyle style;
        style.verbose = verbose;
        style.width = width;
        style.color = width == 40;
        EXPECT_EQ(RenderTable(header, stream->fold(), style), RenderTable(run, style));
      }
    }
    EXPECT_TRUE(Others().empty());
  }
}

// A run's places have gaps where a host got no result (an inventory host
// never started): the page's ids and links, and the metrics, are those of
// the whole report, whose hosts are only those with a result.
TEST_F(ReportStreamTest, HtmlAndMetricsOfPlacesWithGapsAreTheWholeReports) {
  const RunReport run = testing_fixture::MixedFleet();
  ReportFiles files;
  files.metrics = files_.metrics;
  files.html = files_.html;
  std::unique_ptr<ReportStream> stream;
  ASSERT_TRUE(
      ReportStream::Open(files, run.playbook, run.dry_run, 2 * run.hosts.size() + 1, &stream).ok());
  for (size_t i : EndOrder(run.hosts.size())) stream->Add(2 * i + 1, run.hosts[i]);
  RunReport header = run;
  header.hosts.clear();
  ASSERT_TRUE(stream->WriteReports(header, files).ok());
  EXPECT_EQ(ReadFile(files_.html), RenderHtml(run));
  EXPECT_EQ(ReadFile(files_.metrics), RenderMetrics(run));
}

// A stream asked for no JSON or JUnit spills nothing and still folds.
TEST_F(ReportStreamTest, TableAloneNeedsNoSpill) {
  const RunReport run = testing_fixture::MixedFleet();
  std::unique_ptr<ReportStream> stream;
  ASSERT_TRUE(ReportStream::Open(ReportFiles(), run.playbook, false, 0, &stream).ok());
  for (size_t i : EndOrder(run.hosts.size())) stream->Add(i, run.hosts[i]);
  RunReport header = run;
  header.hosts.clear();
  EXPECT_EQ(RenderTable(header, stream->fold(), TableStyle()), RenderTable(run, TableStyle()));
}

TEST_F(ReportStreamTest, ASpillThatCannotBeMadeIsAnError) {
  ReportFiles files;
  files.json = dir_ + "/missing/r.json";
  std::unique_ptr<ReportStream> stream;
  Status status = ReportStream::Open(files, "default", false, 3, &stream);
  EXPECT_EQ(status.kind(), ErrorKind::kInternal);
  EXPECT_EQ(status.message(), "cannot spill beside " + files.json + ": No such file or directory");
  EXPECT_EQ(stream, nullptr);
}

}  // namespace
}  // namespace fleetreap
