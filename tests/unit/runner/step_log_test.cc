#include "fleetreap/runner/step_log.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

HostView ViewWith(const std::vector<std::pair<int, bool>>& holders, int clean, int busy) {
  HostView view;
  for (const auto& [pid, present] : holders) {
    TrackedHolder t;
    t.holder.pid = pid;
    t.holder.start_time = 100 + static_cast<uint64_t>(pid);
    t.holder.fate = pid == 900 ? HolderFate::kProtected : HolderFate::kObserved;
    t.present = present;
    view.holders.push_back(t);
  }
  for (int i = 0; i < clean + busy; ++i) {
    GpuReading gpu;
    gpu.index = i;
    gpu.state = i < clean ? GpuState::kClean : GpuState::kBusy;
    view.gpus.push_back(gpu);
  }
  return view;
}

TEST(StepLogTest, DescribesEachStep) {
  Action inspect;
  inspect.kind = ActionKind::kInspect;
  EXPECT_EQ(DescribeStep(inspect, ViewWith({{900, true}, {4001, true}, {4002, true}}, 0, 8),
                         milliseconds(300), ""),
            "inspect: 3 holders (2 to act on, 1 left alone); GPUs 8 busy (0.3 s)");

  Action term;
  term.kind = ActionKind::kTerm;
  term.targets = {{4001, 4101}, {4002, 4102}};
  term.wait = milliseconds(10000);
  EXPECT_EQ(DescribeStep(term, ViewWith({{900, true}, {4001, false}, {4002, true}}, 7, 1),
                         milliseconds(10000), ""),
            "term: TERM to pids 4001,4002 (2), wait up to 10.0 s: 1 exited, 1 left; GPUs 7 clean, "
            "1 busy (10.0 s)");

  Action stop;
  stop.kind = ActionKind::kStopUnits;
  stop.units = {"vllm.service"};
  Action kill = term;
  kill.kind = ActionKind::kKill;
  stop.fused = {kill};
  EXPECT_EQ(DescribeStep(stop, ViewWith({}, 8, 0), milliseconds(1500), "sudo: no"),
            "stop_units+kill: stop vllm.service; KILL to pids 4001,4002 (2), wait up to 10.0 s: "
            "2 exited, 0 left; GPUs 8 clean (1.5 s), failed: sudo: no");
}

TEST(StepLogTest, TheWatchsRepeatedRescansAreCounted) {
  Action rescan;
  rescan.kind = ActionKind::kRescan;
  const HostView view = ViewWith({{900, true}}, 8, 0);
  StepLines lines;
  const std::string once = "rescan: 1 holder (0 to act on, 1 left alone); GPUs 8 clean";
  EXPECT_EQ(lines.Add(rescan, view, milliseconds(2100), ""),
            std::vector<std::string>{once + " (2.1 s)"});
  for (int i = 0; i < 9; ++i) EXPECT_TRUE(lines.Add(rescan, view, milliseconds(2000), "").empty());
  // A different line says the count first.
  Action verify;
  verify.kind = ActionKind::kVerify;
  EXPECT_EQ(lines.Add(verify, view, milliseconds(300), ""),
            (std::vector<std::string>{"rescan: the same 9 more times (18.0 s)",
                                      "verify: 1 holder (0 to act on, 1 left alone); GPUs 8 clean "
                                      "(0.3 s)"}));
  EXPECT_TRUE(lines.Close().empty());
  // A re-scan that found something else is said; a run cut by the end is counted by Close.
  EXPECT_EQ(lines.Add(rescan, ViewWith({{900, true}}, 7, 1), milliseconds(2000), "").size(), 1U);
  EXPECT_EQ(lines.Add(rescan, view, milliseconds(2000), "").size(), 1U);
  EXPECT_TRUE(lines.Add(rescan, view, milliseconds(2000), "").empty());
  EXPECT_EQ(lines.Close(), std::vector<std::string>{"rescan: the same 1 more time (2.0 s)"});
  // A failed step is always said.
  EXPECT_EQ(lines.Add(rescan, view, milliseconds(2000), "lost").size(), 1U);
  EXPECT_EQ(lines.Add(rescan, view, milliseconds(2000), "lost").size(), 1U);
}

}  // namespace
}  // namespace fleetreap
