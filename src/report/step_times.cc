#include "fleetreap/report/step_times.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

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
  StepTimesFold fold;
  for (size_t i = 0; i < report.hosts.size(); ++i) fold.Add(i, report.hosts[i]);
  return fold.Render();
}

void StepTimesFold::Add(size_t index, const HostReport& host) {
  const std::vector<StepTiming> timings = TimingsOf(host);
  for (size_t place = 0; place < timings.size(); ++place) {
    const StepTiming& timing = timings[place];
    auto it = std::find_if(steps_.begin(), steps_.end(),
                           [&timing](const Step& s) { return s.step == timing.step; });
    if (it == steps_.end()) {
      it = steps_.insert(steps_.end(),
                         Step{timing.step, {index, place}, {}, timing.duration, index, host.name});
    }
    it->first = std::min(it->first, std::make_pair(index, place));
    it->times.push_back(timing.duration);
    // The slowest: the longest time, the later host of equal ones.
    if (std::make_pair(timing.duration, index) > std::make_pair(it->slowest, it->slowest_index)) {
      it->slowest = timing.duration;
      it->slowest_index = index;
      it->slowest_host = host.name;
    }
  }
}

std::string StepTimesFold::Render() const {
  if (steps_.empty()) return "";
  std::vector<Step> steps = steps_;
  // In the order steps first appear; the time between steps goes last,
  // whichever host first had some.
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.first < b.first; });
  std::stable_partition(steps.begin(), steps.end(),
                        [](const Step& s) { return s.step != kBetweenSteps; });
  size_t step_width = 0;
  for (const Step& s : steps) step_width = std::max(step_width, s.step.size());
  std::string out = "where the time went (median / slowest host, per step):\n";
  for (Step& s : steps) {
    std::sort(s.times.begin(), s.times.end());
    const milliseconds median = s.times[(s.times.size() - 1) / 2];
    out += "    " + s.step + std::string(step_width - s.step.size() + 2, ' ') +
           FormatSeconds(median) + " / " + FormatSeconds(s.slowest) + " " + s.slowest_host + " (" +
           std::to_string(s.times.size()) + (s.times.size() == 1 ? " host)\n" : " hosts)\n");
  }
  return out;
}

}  // namespace fleetreap
