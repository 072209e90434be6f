#include "fleetreap/inventory/host_pattern.h"

#include <cctype>
#include <cstdint>
#include <utility>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

// Numbers longer than this are left as text: they do not fit in uint64_t.
constexpr size_t kMaxDigits = 18;

bool IsLetter(const std::string& s) {
  return s.size() == 1 && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'));
}

// The width a number keeps when it is printed back: "08" keeps 2, "8" none.
size_t PaddingOf(const std::string& digits) {
  return digits.size() > 1 && digits[0] == '0' ? digits.size() : 0;
}

std::string Pad(uint64_t value, size_t width) {
  std::string text = std::to_string(value);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

Status RangeError(const std::string& pattern, const std::string& problem) {
  return Status::Error(ErrorKind::kInvalidInput, "host range \"" + pattern + "\": " + problem);
}

// Appends the values of one numeric range "beg".."end" by "step".
Status AppendNumbers(const std::string& pattern, const std::string& beg, const std::string& end,
                     uint64_t step, std::vector<std::string>* values) {
  const uint64_t first = std::stoull(beg);
  const uint64_t last = std::stoull(end);
  if (first > last) {
    return RangeError(pattern, "start " + beg + " is after end " + end);
  }
  if ((last - first) / step + values->size() >= kMaxExpandedHosts) {
    return RangeError(pattern,
                      "expands to more than " + std::to_string(kMaxExpandedHosts) + " names");
  }
  const size_t width = PaddingOf(beg);
  for (uint64_t v = first; v <= last; v += step) {
    values->push_back(Pad(v, width));
    if (last - v < step) break;
  }
  return Status::Ok();
}

Status ParseStep(const std::string& pattern, const std::string& text, uint64_t* step) {
  if (!IsDigits(text, kMaxDigits) || std::stoull(text) == 0) {
    return RangeError(pattern, "step \"" + text + "\" must be a positive number");
  }
  *step = std::stoull(text);
  return Status::Ok();
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) return parts;
    start = pos + 1;
  }
}

// Ansible: "beg:end" or "beg:end:step"; numbers or single letters.
Status ParseAnsibleRange(const std::string& pattern, const std::string& body,
                         std::vector<std::string>* values) {
  std::vector<std::string> parts = Split(body, ':');
  if (parts.size() > 3) {
    return RangeError(pattern, "\"" + body + "\" is not a range");
  }
  std::string beg = parts[0].empty() ? "0" : parts[0];
  const std::string& end = parts[1];
  if (end.empty()) return RangeError(pattern, "missing end in \"" + body + "\"");
  uint64_t step = 1;
  if (parts.size() == 3) {
    Status s = ParseStep(pattern, parts[2], &step);
    if (!s.ok()) return s;
  }
  if (IsDigits(beg, kMaxDigits) && IsDigits(end, kMaxDigits)) {
    return AppendNumbers(pattern, beg, end, step, values);
  }
  if (IsLetter(beg) && IsLetter(end) &&
      std::islower(static_cast<unsigned char>(beg[0])) ==
          std::islower(static_cast<unsigned char>(end[0]))) {
    if (beg[0] > end[0]) {
      return RangeError(pattern, "start " + beg + " is after end " + end);
    }
    for (uint64_t c = static_cast<unsigned char>(beg[0]); c <= static_cast<unsigned char>(end[0]);
         c += step) {
      values->push_back(std::string(1, static_cast<char>(c)));
    }
    return Status::Ok();
  }
  return RangeError(pattern, "\"" + body + "\" is neither a number range nor a letter range");
}

// ClusterShell: "a,b-c,d-e/step", numbers only.
Status ParseRangeSet(const std::string& pattern, const std::string& body,
                     std::vector<std::string>* values) {
  for (const std::string& element : Split(body, ',')) {
    std::string range = element;
    uint64_t step = 1;
    size_t slash = range.find('/');
    if (slash != std::string::npos) {
      Status s = ParseStep(pattern, range.substr(slash + 1), &step);
      if (!s.ok()) return s;
      range.resize(slash);
    }
    size_t dash = range.find('-');
    std::string beg = range.substr(0, dash);
    std::string end = dash == std::string::npos ? beg : range.substr(dash + 1);
    if (!IsDigits(beg, kMaxDigits) || !IsDigits(end, kMaxDigits)) {
      if (element.empty()) return RangeError(pattern, "empty range");
      return RangeError(pattern, "\"" + element + "\" is not a number range");
    }
    Status s = AppendNumbers(pattern, beg, end, step, values);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

bool HasHostRange(const std::string& pattern) {
  return pattern.find_first_of("[]") != std::string::npos;
}

Status ExpandHostPattern(const std::string& pattern, std::vector<std::string>* names) {
  // The pattern as alternating literal text and bracket value lists.
  std::vector<std::string> texts(1);
  std::vector<std::vector<std::string>> ranges;
  size_t total = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == ']') return RangeError(pattern, "\"]\" without \"[\"");
    if (c != '[') {
      texts.back() += c;
      continue;
    }
    size_t close = pattern.find_first_of("[]", i + 1);
    if (close == std::string::npos) return RangeError(pattern, "missing \"]\"");
    if (pattern[close] == '[') return RangeError(pattern, "\"[\" inside a range");
    std::string body = pattern.substr(i + 1, close - i - 1);
    if (body.empty()) return RangeError(pattern, "empty range");
    std::vector<std::string> values;
    Status s = body.find(':') != std::string::npos ? ParseAnsibleRange(pattern, body, &values)
                                                   : ParseRangeSet(pattern, body, &values);
    if (!s.ok()) return s;
    total *= values.size();
    if (total > kMaxExpandedHosts) {
      return RangeError(pattern,
                        "expands to more than " + std::to_string(kMaxExpandedHosts) + " names");
    }
    ranges.push_back(std::move(values));
    texts.emplace_back();
    i = close;
  }
  // Odometer over the ranges, rightmost fastest.
  std::vector<size_t> at(ranges.size(), 0);
  names->reserve(names->size() + total);
  while (true) {
    std::string name = texts[0];
    for (size_t r = 0; r < ranges.size(); ++r) {
      name += ranges[r][at[r]];
      name += texts[r + 1];
    }
    names->push_back(std::move(name));
    size_t r = ranges.size();
    while (r > 0) {
      --r;
      if (++at[r] < ranges[r].size()) break;
      at[r] = 0;
      if (r == 0) return Status::Ok();
    }
    if (ranges.empty()) return Status::Ok();
  }
}

std::vector<std::string> SplitHostList(const std::string& text) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

}  // namespace fleetreap
