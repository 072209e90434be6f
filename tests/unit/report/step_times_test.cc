#include "fleetreap/report/step_times.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

HostReport HostWith(const std::string& name, std::vector<StepTiming> timings) {
  HostReport host;
  host.name = name;
  host.timings = std::move(timings);
  return host;
}

TEST(StepTimesTest, OneHostsStepsInTheOrderTheyRan) {
  EXPECT_EQ(DescribeTimings(HostWith("gpu01", {{"connect", milliseconds(120)},
                                               {"inspect", milliseconds(310)},
                                               {"term", milliseconds(10000)},
                                               {"rescan+clean_shm+verify", milliseconds(440)}})),
            "connect 0.1 s, inspect 0.3 s, term 10.0 s, rescan+clean_shm+verify 0.4 s");
  EXPECT_EQ(DescribeTimings(HostWith("gpu02", {})), "");
  // The settle period before a re-scan is not in its timing: it is the
  // time between steps.
  HostReport settled = HostWith(
      "gpu03",
      {{"connect", milliseconds(100)}, {"term", milliseconds(200)}, {"rescan", milliseconds(300)}});
  settled.duration = milliseconds(1600);
  EXPECT_EQ(DescribeTimings(settled),
            "connect 0.1 s, term 0.2 s, rescan 0.3 s, between steps 1.0 s");
}

TEST(StepTimesTest, MedianAndSlowestHostPerStep) {
  RunReport run;
  HostReport waited = HostWith("gpu05", {{"connect", milliseconds(120)}});
  waited.duration = milliseconds(2120);
  run.hosts = {waited,
               HostWith("gpu01", {{"connect", milliseconds(100)}, {"inspect", milliseconds(300)}}),
               HostWith("gpu02", {{"connect", milliseconds(500)},
                                  {"inspect", milliseconds(200)},
                                  {"term", milliseconds(10000)}}),
               HostWith("gpu03", {{"connect", milliseconds(200)}}),
               HostWith("gpu04", {{"connect", milliseconds(130)}, {"inspect", milliseconds(400)}})};
  EXPECT_EQ(RenderStepTimes(run),
            "where the time went (median / slowest host, per step):\n"
            "    connect        0.1 s / 0.5 s gpu02 (5 hosts)\n"
            "    inspect        0.3 s / 0.4 s gpu04 (3 hosts)\n"
            "    term           10.0 s / 10.0 s gpu02 (1 host)\n"
            "    between steps  2.0 s / 2.0 s gpu05 (1 host)\n");
  EXPECT_EQ(RenderStepTimes(RunReport()), "");
}

TEST(StepTimesTest, AStepRunSeveralTimesCountsOnceForItsHost) {
  RunReport run;
  std::vector<StepTiming> watched = {{"connect", milliseconds(100)}};
  for (int i = 0; i < 10; ++i) watched.push_back({"rescan", milliseconds(200)});
  run.hosts = {HostWith("gpu05", watched), HostWith("gpu06", {{"connect", milliseconds(100)},
                                                              {"rescan", milliseconds(300)},
                                                              {"rescan", milliseconds(300)}})};
  EXPECT_EQ(DescribeTimings(run.hosts[0]), "connect 0.1 s, rescan 2.0 s (10 runs)");
  EXPECT_EQ(RenderStepTimes(run),
            "where the time went (median / slowest host, per step):\n"
            "    connect  0.1 s / 0.1 s gpu06 (2 hosts)\n"
            "    rescan   0.6 s / 2.0 s gpu05 (2 hosts, 12 runs)\n");
}

}  // namespace
}  // namespace fleetreap
