#include "fleetreap/report/report_metrics.h"

#include <gtest/gtest.h>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

TEST(ReportMetricsTest, MixedFleetGolden) {
  testing_fixture::ExpectGolden("metrics.prom", RenderMetrics(testing_fixture::MixedFleet()));
}

TEST(ReportMetricsTest, LabelsAreEscapedAndValidUtf8) {
  RunReport run = testing_fixture::MixedFleet();
  run.hosts.resize(1);
  run.hosts[0].name = "odd\"name\\\n\xFF";
  const std::string text = RenderMetrics(run);
  EXPECT_NE(text.find("fleetreap_host_outcome{host=\"odd\\\"name\\\\\\n\xEF\xBF\xBD\","
                      "outcome=\"clean\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fleetreap_run_timestamp_seconds 1796007845.123\n"), std::string::npos);
  EXPECT_NE(text.find("fleetreap_run_ready 1\n"), std::string::npos);
  EXPECT_NE(text.find("fleetreap_host_gpu_memory_used_bytes{host="), std::string::npos);
}

TEST(ReportMetricsTest, EveryOutcomeIsPresentForEachHostAsZeroOrOne) {
  RunReport run = testing_fixture::MixedFleet();
  run.hosts.resize(1);
  const std::string text = RenderMetrics(run);
  const std::string host = "fleetreap_host_outcome{host=\"" + run.hosts[0].name + "\",";
  EXPECT_NE(text.find(host + "outcome=\"clean\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(host + "outcome=\"dirty\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(host + "outcome=\"would_clean\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fleetreap_hosts{outcome=\"not_started\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("outcome=\"would clean\""), std::string::npos);
  EXPECT_EQ(text.find("fleetreap_gpu_"), std::string::npos);  // no series per GPU
}

TEST(ReportMetricsTest, RunInfoCarriesTheRunIdWhenThereIsOne) {
  RunReport run = testing_fixture::MixedFleet();
  EXPECT_NE(RenderMetrics(run).find("fleetreap_run_info{run_id=\"20261130T030405Z-4f1c2a\"} 1\n"),
            std::string::npos);
  run.run_id.clear();
  EXPECT_EQ(RenderMetrics(run).find("fleetreap_run_info"), std::string::npos);
}

}  // namespace
}  // namespace fleetreap
