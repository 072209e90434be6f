// FoldHostNames: ClusterShell-style folding of host names into range sets.
#include "fleetreap/base/host_name_fold.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fleetreap {
namespace {

constexpr size_t kMaxDigits = 18;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A name cut into text around its numeric fields: texts.size() == fields.size()
// + 1. While folding, a field holds either literal digits or a "[...]" set.
struct Shape {
  std::vector<std::string> texts;
  std::vector<std::string> fields;
  std::string first;  // the naturally smallest name this item stands for
};

Shape Cut(const std::string& name) {
  Shape shape;
  shape.texts.emplace_back();
  shape.first = name;
  size_t i = 0;
  while (i < name.size()) {
    size_t j = i;
    while (j < name.size() && IsDigit(name[j])) ++j;
    if (j > i && j - i <= kMaxDigits) {
      shape.fields.push_back(name.substr(i, j - i));
      shape.texts.emplace_back();
      i = j;
    } else if (j > i) {
      shape.texts.back() += name.substr(i, j - i);
      i = j;
    } else {
      shape.texts.back() += name[i++];
    }
  }
  return shape;
}

// Natural order: digit runs compare by value, so gpu9 < gpu10.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

std::string Pad(uint64_t value, size_t width) {
  std::string text = std::to_string(value);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

// Folds literal digit strings into range-set fields: one per padding class.
// "01".."09","10" share width 2 -> "[01-10]"; "1" and "01" stay apart.
std::vector<std::pair<std::string, size_t>> FoldField(const std::vector<std::string>& digits) {
  std::map<size_t, std::vector<uint64_t>> by_width;
  for (const std::string& d : digits) {
    if (d.size() > 1 && d[0] == '0') by_width[d.size()];
  }
  for (const std::string& d : digits) {
    size_t width = 0;
    if (d.size() > 1 && d[0] == '0') {
      width = d.size();
    } else {
      auto it = by_width.upper_bound(d.size());
      if (it != by_width.begin()) width = (--it)->first;
    }
    by_width[width].push_back(std::stoull(d));
  }
  std::vector<std::pair<std::string, size_t>> out;  // text, index of class
  for (auto& [width, values] : by_width) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (values.empty()) continue;
    if (values.size() == 1) {
      out.emplace_back(Pad(values[0], width), width);
      continue;
    }
    std::string set = "[";
    for (size_t i = 0; i < values.size();) {
      size_t j = i;
      while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
      if (i > 0) set += ',';
      set += Pad(values[i], width);
      if (j > i) set += '-' + Pad(values[j], width);
      i = j + 1;
    }
    out.emplace_back(set + "]", width);
  }
  return out;
}

// Which padding class a literal digit string landed in, matching FoldField.
size_t ClassOf(const std::string& d, const std::vector<std::pair<std::string, size_t>>& classes) {
  if (d.size() > 1 && d[0] == '0') return d.size();
  size_t best = 0;
  for (const auto& c : classes) {
    if (c.second <= d.size() && c.second > best) best = c.second;
  }
  return best;
}

// Folds field "pos" of items that agree on every other field.
std::vector<Shape> FoldPosition(std::vector<Shape> items, size_t pos) {
  std::unordered_map<std::string, std::vector<size_t>> groups;
  std::vector<std::string> order;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string key;
    for (size_t f = 0; f < items[i].fields.size(); ++f) {
      if (f != pos) key += items[i].fields[f] + '\0';
    }
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(i);
  }
  std::vector<Shape> out;
  for (const std::string& key : order) {
    const std::vector<size_t>& members = groups[key];
    std::vector<std::string> digits;
    for (size_t i : members) digits.push_back(items[i].fields[pos]);
    auto classes = FoldField(digits);
    for (const auto& [text, width] : classes) {
      Shape folded = items[members[0]];
      folded.fields[pos] = text;
      bool any = false;
      for (size_t i : members) {
        if (ClassOf(items[i].fields[pos], classes) != width) continue;
        if (!any || NaturalLess(items[i].first, folded.first)) {
          folded.first = items[i].first;
        }
        any = true;
      }
      out.push_back(std::move(folded));
    }
  }
  return out;
}

}  // namespace

std::string FoldHostNames(const std::vector<std::string>& names) {
  // Bucket by the text around the numbers; only names of one shape fold.
  std::unordered_map<std::string, std::vector<Shape>> buckets;
  for (const std::string& name : names) {
    Shape shape = Cut(name);
    std::string key;
    for (const std::string& t : shape.texts) key += t + '\0';
    buckets[key].push_back(std::move(shape));
  }
  std::vector<Shape> folded;
  for (auto& [key, items] : buckets) {
    size_t fields = items[0].fields.size();
    if (fields == 0) {
      folded.push_back(items[0]);
      continue;
    }
    for (size_t pos = fields; pos-- > 0;) {
      items = FoldPosition(std::move(items), pos);
    }
    for (Shape& s : items) folded.push_back(std::move(s));
  }
  std::sort(folded.begin(), folded.end(),
            [](const Shape& a, const Shape& b) { return NaturalLess(a.first, b.first); });
  std::string out;
  for (const Shape& s : folded) {
    if (!out.empty()) out += ',';
    for (size_t i = 0; i < s.fields.size(); ++i) out += s.texts[i] + s.fields[i];
    out += s.texts.back();
  }
  return out;
}

}  // namespace fleetreap
