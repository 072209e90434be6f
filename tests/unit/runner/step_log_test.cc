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

}  // namespace
}  // namespace fleetreap
