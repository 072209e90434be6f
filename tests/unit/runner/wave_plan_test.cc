#include "fleetreap/runner/wave_plan.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

std::vector<WaveSize> Sizes(const std::string& text) {
  std::vector<WaveSize> sizes;
  EXPECT_TRUE(ParseWaveSizes("--waves", text, &sizes).ok()) << text;
  return sizes;
}

// The waves' host indices, "0|1,2|3" style.
std::string Shape(const std::vector<Wave>& waves) {
  std::string out;
  for (const Wave& wave : waves) {
    if (!out.empty()) out += "|";
    for (size_t i = 0; i < wave.hosts.size(); ++i) {
      out += (i ? "," : "") + std::to_string(wave.hosts[i]);
    }
  }
  return out;
}

TEST(WavePlanTest, ParsesSizes) {
  std::vector<WaveSize> sizes = Sizes("1,10%,100%");
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_EQ(sizes[0].count, 1);
  EXPECT_EQ(sizes[1].percent, 10);
  EXPECT_EQ(sizes[2].percent, 100);
}

TEST(WavePlanTest, RejectsBadSizes) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"0", "--waves: \"0\" is not a wave size (a count from 1, or a percentage 1%-100%)"},
      {"1,,2", "--waves: \"\" is not a wave size (a count from 1, or a percentage 1%-100%)"},
      {"101%", "--waves: \"101%\" is not a wave size (a count from 1, or a percentage 1%-100%)"},
      {"-1", "--waves: \"-1\" is not a wave size (a count from 1, or a percentage 1%-100%)"},
      {"5 ", "--waves: \"5 \" is not a wave size (a count from 1, or a percentage 1%-100%)"},
      {"", "--waves: \"\" is not a wave size (a count from 1, or a percentage 1%-100%)"},
  };
  for (const auto& c : cases) {
    std::vector<WaveSize> sizes;
    Status status = ParseWaveSizes("--waves", c.text, &sizes);
    EXPECT_EQ(status.kind(), ErrorKind::kUsage) << c.text;
    EXPECT_EQ(status.message(), c.error);
    EXPECT_TRUE(sizes.empty());
  }
}

TEST(WavePlanTest, ParsesCaps) {
  FailCap cap;
  ASSERT_TRUE(ParseFailCap("3", &cap).ok());
  EXPECT_TRUE(cap.set);
  EXPECT_FALSE(cap.is_percent);
  EXPECT_EQ(cap.value, 3);
  ASSERT_TRUE(ParseFailCap("0%", &cap).ok());
  EXPECT_TRUE(cap.is_percent);
  EXPECT_EQ(cap.value, 0);
  EXPECT_EQ(ParseFailCap("x", &cap).message(),
            "--max-fail: \"x\" is not a cap (a count of hosts, or a percentage 0%-100% of each "
            "wave)");
  EXPECT_FALSE(ParseFailCap("120%", &cap).ok());
}

TEST(WavePlanTest, CutsInInventoryOrder) {
  const struct {
    int canary;
    const char* waves;  // "" for none
    size_t hosts;
    const char* shape;
  } cases[] = {
      {0, "", 4, "0,1,2,3"},
      {1, "", 4, "0|1,2,3"},
      {0, "1,10%,100%", 20, "0|1,2|3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19"},
      // The last size repeats: 2, then 5 at a time.
      {0, "2,5", 13, "0,1|2,3,4,5,6|7,8,9,10,11|12"},
      // 10% of 5 rounds down to 0, taken as 1 (Ansible's pct_to_int).
      {0, "10%", 3, "0|1|2"},
      {2, "50%", 6, "0,1|2,3,4|5"},
      {0, "100", 3, "0,1,2"},
      {1, "", 0, ""},
  };
  for (const auto& c : cases) {
    std::vector<WaveSize> waves;
    if (*c.waves) waves = Sizes(c.waves);
    EXPECT_EQ(
        Shape(PlanWaves(WaveSizesFor(c.canary, waves), "", std::vector<std::string>(c.hosts))),
        c.shape)
        << c.canary << " " << c.waves << " " << c.hosts;
  }
}

TEST(WavePlanTest, CutsByWholeUnits) {
  // Racks in the order of their first host; sizes count racks.
  const std::vector<std::string> rack = {"b1", "b2", "b1", "b3", "", "b2", "b3"};
  std::vector<Wave> waves = PlanWaves(WaveSizesFor(0, Sizes("1")), "rack", rack);
  EXPECT_EQ(Shape(waves), "0,2|1,5|3,6|4");
  EXPECT_EQ(waves[1].units, std::vector<std::string>{"b2"});
  waves = PlanWaves(WaveSizesFor(1, Sizes("50%")), "rack", rack);
  EXPECT_EQ(Shape(waves), "0,2|1,3,5,6|4");
  EXPECT_EQ(waves[1].units, (std::vector<std::string>{"b2", "b3"}));
}

TEST(WavePlanTest, StopsPastTheCap) {
  const FailCap none;
  const FailCap two{true, false, 2};
  const FailCap ten_percent{true, true, 10};
  const struct {
    FailCap cap;
    std::vector<WaveTally> done;
    const char* reason;
  } cases[] = {
      {none, {}, ""},
      {none, {{1, 0}, {2, 1}}, ""},
      {none, {{1, 1}}, "stopped: every host of wave 1 of 3 failed"},
      {two, {{1, 0}, {3, 2}}, ""},  // 2 is not past a cap of 2
      {two, {{1, 1}, {2, 2}}, "stopped by --max-fail 2: 3 hosts failed after wave 2 of 3"},
      {ten_percent, {{10, 1}}, ""},  // 10% of 10 is 1: not past
      {ten_percent,
       {{1, 0}, {10, 2}},
       "stopped by --max-fail 10%: 2 of 10 hosts failed in wave 2 of 3"},
      // A percentage caps each wave, not the run (Ansible's max_fail_percentage).
      {ten_percent, {{10, 1}, {10, 1}}, ""},
      {FailCap{true, false, 0},
       {{5, 1}},
       "stopped by --max-fail 0: 1 host failed after wave 1 of 3"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(StopReason(c.cap, c.done, 3), c.reason);
  }
}

TEST(WavePlanTest, RendersThePlan) {
  const std::vector<std::string> names = {"gpu01", "gpu02", "gpu03", "gpu04"};
  std::vector<Wave> waves = PlanWaves(WaveSizesFor(1, Sizes("2")), "", {"", "", "", ""});
  EXPECT_EQ(RenderWavePlan(waves, names, "", FailCap{true, false, 1}),
            "wave 1/3: 1 host: gpu01\n"
            "wave 2/3: 2 hosts: gpu[02-03]\n"
            "wave 3/3: 1 host: gpu04\n"
            "stops once more than 1 host fails\n");
  waves = PlanWaves(WaveSizesFor(0, Sizes("1")), "rack", {"b1", "b1", "", "b2"});
  EXPECT_EQ(RenderWavePlan(waves, names, "rack", FailCap{true, true, 25}),
            "wave 1/3: 2 hosts (rack b1): gpu[01-02]\n"
            "wave 2/3: 1 host (rack (none)): gpu03\n"
            "wave 3/3: 1 host (rack b2): gpu04\n"
            "stops once more than 25% of a wave's hosts fail\n");
}

}  // namespace
}  // namespace fleetreap
