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
  struct Run {
    StepTiming total;
    int runs;
  };
  std::vector<Run> steps;  // each step once, where it first ran
  for (const StepTiming& timing : TimingsOf(host)) {
    auto it = std::find_if(steps.begin(), steps.end(),
                           [&timing](const Run& r) { return r.total.step == timing.step; });
    if (it == steps.end()) {
      steps.push_back({timing, 1});
    } else {
      it->total.duration += timing.duration;
      ++it->runs;
    }
  }
  std::string out;
  for (const Run& run : steps) {
    if (!out.empty()) out += ", ";
    out += run.total.step + " " + FormatSeconds(run.total.duration);
    if (run.runs > 1) out += " (" + std::to_string(run.runs) + " runs)";
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
      it = steps_.insert(steps_.end(), Step{timing.step, {index, place}, {}, 0, {}});
    }
    it->first = std::min(it->first, std::make_pair(index, place));
    // A step a host ran several times (a re-scan while watching for
    // restarts) counts once for the host, with its runs' total.
    auto [host_time, added] = it->per_host.emplace(index, milliseconds{0});
    host_time->second += timing.duration;
    if (added) it->names.emplace(index, host.name);
    ++it->runs;
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
  for (const Step& s : steps) {
    std::vector<milliseconds> times;
    size_t slowest = 0;  // the longest time, the later host of equal ones
    milliseconds longest{-1};
    for (const auto& [index, time] : s.per_host) {
      times.push_back(time);
      if (time >= longest) {
        longest = time;
        slowest = index;
      }
    }
    std::sort(times.begin(), times.end());
    const milliseconds median = times[(times.size() - 1) / 2];
    const size_t hosts = s.per_host.size();
    std::string count = std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
    if (s.runs > hosts) count += ", " + std::to_string(s.runs) + " runs";
    out += "    " + s.step + std::string(step_width - s.step.size() + 2, ' ') +
           FormatSeconds(median) + " / " + FormatSeconds(longest) + " " + s.names.at(slowest) +
           " (" + count + ")\n";
  }
  return out;
}

}  // namespace fleetreap
