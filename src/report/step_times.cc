#include "fleetreap/report/step_times.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// Every host's time in one step, with the host's index in the report.
struct StepSamples {
  std::string step;
  std::vector<std::pair<milliseconds, size_t>> samples;
};

// The host's timings, then kBetweenSteps when its duration holds more.
std::vector<StepTiming> TimingsOf(const HostReport& host) {
  std::vector<StepTiming> timings = host.timings;
  milliseconds timed{0};
  for (const StepTiming& timing : timings) timed += timing.duration;
  if (!timings.empty() && host.duration > timed) {
    timings.push_back({kBetweenSteps, host.duration - timed});
  }
  return timings;
}

std::vector<StepSamples> CollectSteps(const RunReport& report) {
  std::vector<StepSamples> steps;
  for (size_t i = 0; i < report.hosts.size(); ++i) {
    for (const StepTiming& timing : TimingsOf(report.hosts[i])) {
      auto it = std::find_if(steps.begin(), steps.end(),
                             [&timing](const StepSamples& s) { return s.step == timing.step; });
      if (it == steps.end()) it = steps.insert(steps.end(), StepSamples{timing.step, {}});
      it->samples.emplace_back(timing.duration, i);
    }
  }
  // The time between steps goes last, whichever host first had some.
  std::stable_partition(steps.begin(), steps.end(),
                        [](const StepSamples& s) { return s.step != kBetweenSteps; });
  return steps;
}

}  // namespace

std::string DescribeTimings(const HostReport& host) {
  std::string out;
  for (const StepTiming& timing : TimingsOf(host)) {
    if (!out.empty()) out += ", ";
    out += timing.step + " " + FormatSeconds(timing.duration);
  }
  return out;
}

std::string RenderStepTimes(const RunReport& report) {
  std::vector<StepSamples> steps = CollectSteps(report);
  if (steps.empty()) return "";
  size_t step_width = 0;
  for (const StepSamples& s : steps) step_width = std::max(step_width, s.step.size());
  std::string out = "where the time went (median / slowest host, per step):\n";
  for (StepSamples& s : steps) {
    std::sort(s.samples.begin(), s.samples.end());
    const milliseconds median = s.samples[(s.samples.size() - 1) / 2].first;
    const auto& slowest = s.samples.back();
    out += "    " + s.step + std::string(step_width - s.step.size() + 2, ' ') +
           FormatSeconds(median) + " / " + FormatSeconds(slowest.first) + " " +
           report.hosts[slowest.second].name + " (" + std::to_string(s.samples.size()) +
           (s.samples.size() == 1 ? " host)\n" : " hosts)\n");
  }
  return out;
}

}  // namespace fleetreap
