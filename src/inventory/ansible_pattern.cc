// Ansible's host-pattern primitives, after inventory/manager.py and Python's
// fnmatch.py (3.11).
#include "fleetreap/inventory/ansible_pattern.h"

#include <regex>
#include <string>
#include <vector>

#include "fleetreap/inventory/ansible_address.h"

namespace fleetreap {
namespace {

std::string Strip(const std::string& s) {
  const char* blanks = " \t\n\r\v\f";
  size_t b = s.find_first_not_of(blanks);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(blanks) - b + 1);
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::vector<std::string> SplitAnsiblePattern(const std::string& pattern) {
  std::vector<std::string> parts;
  if (pattern.find(',') != std::string::npos) {
    size_t start = 0;
    while (true) {
      size_t comma = pattern.find(',', start);
      parts.push_back(pattern.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    std::string host;
    int port = -1;
    if (ParseAnsibleAddress(pattern, &host, &port)) {
      parts.push_back(pattern);
    } else {
      // (?:[^\s:\[\]]|\[[^\]]*\])+ found left to right
      std::string current;
      for (size_t i = 0; i < pattern.size();) {
        char c = pattern[i];
        size_t close = c == '[' ? pattern.find(']', i + 1) : std::string::npos;
        if (c == '[' && close != std::string::npos) {
          current += pattern.substr(i, close - i + 1);
          i = close + 1;
        } else if (IsBlank(c) || c == ':' || c == '[' || c == ']') {
          if (!current.empty()) parts.push_back(current);
          current.clear();
          ++i;
        } else {
          current += c;
          ++i;
        }
      }
      if (!current.empty()) parts.push_back(current);
    }
  }
  std::vector<std::string> terms;
  for (const std::string& p : parts) {
    std::string t = Strip(p);
    if (!t.empty()) terms.push_back(t);
  }
  return terms;
}

AnsibleGlob::AnsibleGlob(const std::string& glob) {
  const size_t n = glob.size();
  for (size_t i = 0; i < n; ++i) {
    char c = glob[i];
    if (c == '*') {
      if (items_.empty() || items_.back().kind != Item::Kind::kStar) {
        items_.emplace_back(Item::Kind::kStar);
      }
      continue;
    }
    if (c == '?') {
      items_.emplace_back(Item::Kind::kAny);
      continue;
    }
    if (c == '[') {
      size_t j = i + 1;
      if (j < n && glob[j] == '!') ++j;
      if (j < n && glob[j] == ']') ++j;
      while (j < n && glob[j] != ']') ++j;
      if (j < n) {
        Item item(Item::Kind::kClass);
        std::string stuff = glob.substr(i + 1, j - i - 1);
        size_t k = 0;
        if (!stuff.empty() && stuff[0] == '!') {
          item.negate = true;
          k = 1;
        }
        for (; k < stuff.size(); ++k) {
          unsigned char lo = static_cast<unsigned char>(stuff[k]);
          if (k + 2 < stuff.size() && stuff[k + 1] == '-') {
            unsigned char hi = static_cast<unsigned char>(stuff[k + 2]);
            if (lo <= hi) item.ranges.emplace_back(lo, hi);  // Python drops z-a
            k += 2;
          } else {
            item.ranges.emplace_back(lo, lo);
          }
        }
        items_.push_back(std::move(item));
        i = j;
        continue;
      }
    }
    Item literal(Item::Kind::kLiteral);
    literal.literal = c;
    items_.push_back(literal);
  }
}

bool AnsibleGlob::ItemMatches(const Item& item, char c) {
  switch (item.kind) {
    case Item::Kind::kLiteral: return item.literal == c;
    case Item::Kind::kClass: {
      bool in = false;
      for (const auto& r : item.ranges) {
        unsigned char u = static_cast<unsigned char>(c);
        in = in || (u >= r.first && u <= r.second);
      }
      return in != item.negate;
    }
    default: return true;
  }
}

bool AnsibleGlob::MatchFrom(size_t p, const std::string& s, size_t i) const {
  while (p < items_.size()) {
    if (items_[p].kind == Item::Kind::kStar) {
      for (size_t k = i; k <= s.size(); ++k) {
        if (MatchFrom(p + 1, s, k)) return true;
      }
      return false;
    }
    if (i >= s.size() || !ItemMatches(items_[p], s[i])) return false;
    ++p;
    ++i;
  }
  return i == s.size();
}

bool AnsibleGlob::Matches(const std::string& name) const { return MatchFrom(0, name, 0); }

bool AnsibleGlobMatch(const std::string& glob, const std::string& name) {
  return AnsibleGlob(glob).Matches(name);
}

Subscript SplitSubscript(const std::string& pattern, std::string* expression) {
  static const std::regex re(R"(^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$)");
  Subscript sub;
  *expression = pattern;
  std::smatch m;
  if (pattern.empty() || pattern[0] == '~' || !std::regex_match(pattern, m, re)) return sub;
  auto number = [](const std::string& digits) {
    std::string d = digits.substr(0, std::min<size_t>(digits.size(), 15));
    return std::stol(d);
  };
  *expression = m[1].str();
  sub.present = true;
  if (m[2].matched) {
    sub.single = true;
    sub.start = number(m[2].str());
  } else {
    sub.start = number(m[3].str());
    sub.end = m[5].str().empty() ? -1 : number(m[5].str());
  }
  return sub;
}

bool ApplySubscript(const Subscript& sub, size_t count, std::vector<size_t>* positions) {
  positions->clear();
  const long n = static_cast<long>(count);
  auto single = [&](long index) {
    if (index < -n || index >= n) return false;
    positions->push_back(static_cast<size_t>(index < 0 ? index + n : index));
    return true;
  };
  if (sub.single || sub.end == 0) return single(sub.start);  // Ansible: "if end:" is false for 0
  long end = sub.end == -1 ? n - 1 : sub.end;
  long stop = std::min(end + 1, n);
  if (stop < 0) stop = std::max(0L, stop + n);
  for (long i = sub.start; i < stop; ++i) positions->push_back(static_cast<size_t>(i));
  return true;
}

std::string PythonRegexDifference(const std::string& re) {
  for (size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '\\' && i + 1 < re.size()) {
      char e = re[i + 1];
      if (e == 'A' || e == 'Z' || e == 'z' || e == 'G' || e == 'N' || e == 'a') {
        return "\\" + std::string(1, e);
      }
      ++i;
    } else if (re[i] == '(' && i + 2 < re.size() && re[i + 1] == '?' && re[i + 2] != ':' &&
               re[i + 2] != '=' && re[i + 2] != '!') {
      return re.substr(i, 3);
    } else if ((re[i] == '*' || re[i] == '+' || re[i] == '?' || re[i] == '}') &&
               i + 1 < re.size() && re[i + 1] == '+') {
      return re.substr(i, 2);
    } else if (re[i] == '{' &&
               (i == 0 || std::string("*+?{").find(re[i - 1]) != std::string::npos)) {
      return "{";
    }
  }
  return "";
}

}  // namespace fleetreap
