#include "fleetreap/runner/wave_plan.h"

#include <algorithm>
#include <map>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_pattern.h"

namespace fleetreap {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> words(1);
  for (char c : text) {
    if (c == ',') {
      words.emplace_back();
    } else {
      words.back() += c;
    }
  }
  return words;
}

// "12" or "12%": the number and whether it had the percent sign.
bool ParseSizeWord(const std::string& word, int* value, bool* percent) {
  *percent = !word.empty() && word.back() == '%';
  const std::string digits = *percent ? word.substr(0, word.size() - 1) : word;
  return ParseDigits(digits, 6, value);
}

int UnitsOf(const WaveSize& size, int total) {
  if (size.count > 0) return size.count;
  return std::max(1, size.percent * total / 100);
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string CapText(const FailCap& cap) {
  return std::to_string(cap.value) + (cap.is_percent ? "%" : "");
}

}  // namespace

Status ParseWaveSizes(const std::string& flag, const std::string& text,
                      std::vector<WaveSize>* out) {
  out->clear();
  for (const std::string& word : SplitCommas(text)) {
    int value = 0;
    bool percent = false;
    const bool ok =
        ParseSizeWord(word, &value, &percent) && value >= 1 && (!percent || value <= 100);
    if (!ok) {
      out->clear();
      return Status::Error(
          ErrorKind::kUsage,
          flag + ": \"" + word + "\" is not a wave size (a count from 1, or a percentage 1%-100%)");
    }
    out->push_back(percent ? WaveSize{0, value} : WaveSize{value, 0});
  }
  return Status::Ok();
}

Status ParseFailCap(const std::string& text, FailCap* out) {
  int value = 0;
  bool percent = false;
  if (!ParseSizeWord(text, &value, &percent) || (percent && value > 100)) {
    return Status::Error(ErrorKind::kUsage, "--max-fail: \"" + text +
                                                "\" is not a cap (a count of hosts, or a "
                                                "percentage 0%-100% of each wave)");
  }
  *out = FailCap{true, percent, value};
  return Status::Ok();
}

std::vector<WaveSize> WaveSizesFor(int canary, const std::vector<WaveSize>& waves) {
  std::vector<WaveSize> sizes;
  if (canary > 0) sizes.push_back(WaveSize{canary, 0});
  if (!waves.empty()) {
    sizes.insert(sizes.end(), waves.begin(), waves.end());
  } else {
    sizes.push_back(WaveSize{0, 100});
  }
  return sizes;
}

std::vector<Wave> PlanWaves(const std::vector<WaveSize>& sizes, const std::string& by,
                            const std::vector<std::string>& unit_of) {
  // Units in the order of their first host; without "by", one per host.
  std::vector<std::string> units;
  std::vector<std::vector<size_t>> members;
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < unit_of.size(); ++i) {
    if (by.empty()) {
      units.push_back("");
      members.push_back({i});
      continue;
    }
    auto [it, added] = index_of.emplace(unit_of[i], units.size());
    if (added) {
      units.push_back(unit_of[i]);
      members.emplace_back();
    }
    members[it->second].push_back(i);
  }
  std::vector<Wave> waves;
  const int total = static_cast<int>(units.size());
  size_t next = 0;
  for (size_t w = 0; next < units.size(); ++w) {
    const WaveSize size = sizes.empty() ? WaveSize{0, 100} : sizes[std::min(w, sizes.size() - 1)];
    const size_t take = std::min(units.size() - next, static_cast<size_t>(UnitsOf(size, total)));
    Wave wave;
    for (size_t u = next; u < next + take; ++u) {
      wave.hosts.insert(wave.hosts.end(), members[u].begin(), members[u].end());
      if (!by.empty()) wave.units.push_back(units[u]);
    }
    std::sort(wave.hosts.begin(), wave.hosts.end());
    waves.push_back(std::move(wave));
    next += take;
  }
  return waves;
}

std::string StopReason(const FailCap& cap, const std::vector<WaveTally>& done, int waves) {
  if (done.empty()) return "";
  const int number = static_cast<int>(done.size());
  const std::string of = std::to_string(number) + " of " + std::to_string(waves);
  const WaveTally& last = done.back();
  int failed = 0;
  for (const WaveTally& tally : done) failed += tally.failed;
  if (cap.set && !cap.is_percent && failed > cap.value) {
    return "stopped by --max-fail " + CapText(cap) + ": " + Plural(failed, "host", "hosts") +
           " failed after wave " + of;
  }
  if (cap.set && cap.is_percent && last.hosts > 0 && last.failed * 100 > cap.value * last.hosts) {
    return "stopped by --max-fail " + CapText(cap) + ": " + std::to_string(last.failed) + " of " +
           Plural(last.hosts, "host", "hosts") + " failed in wave " + of;
  }
  if (last.hosts > 0 && last.failed == last.hosts) {
    return "stopped: every host of wave " + of + " failed";
  }
  return "";
}

std::string RenderWavePlan(const std::vector<Wave>& waves, const std::vector<std::string>& names,
                           const std::string& by, const FailCap& cap) {
  std::string out;
  for (size_t w = 0; w < waves.size(); ++w) {
    const Wave& wave = waves[w];
    std::vector<std::string> hosts;
    for (size_t i : wave.hosts) hosts.push_back(names[i]);
    out += "wave " + std::to_string(w + 1) + "/" + std::to_string(waves.size()) + ": " +
           Plural(static_cast<int>(hosts.size()), "host", "hosts");
    if (!by.empty()) {
      std::vector<std::string> units;
      for (const std::string& unit : wave.units) units.push_back(unit.empty() ? "(none)" : unit);
      out += " (" + by + " " + Join(units, ", ") + ")";
    }
    out += ": " + FoldHostNames(hosts) + "\n";
  }
  if (cap.set) {
    out += cap.is_percent
               ? "stops once more than " + CapText(cap) + " of a wave's hosts fail\n"
               : "stops once more than " + Plural(cap.value, "host fails", "hosts fail") + "\n";
  } else if (waves.size() > 1) {
    out += "stops once every host of a wave fails\n";
  }
  return out;
}

}  // namespace fleetreap
