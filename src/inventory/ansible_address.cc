// Ansible's host-key grammar: parse_address's regular expressions written
// out as small matchers (std::regex has no lookbehind, which the host-name
// rule needs), and expand_hostname_range's string surgery, quirks included
// (a begin past its end gives no host; "[ab:cd]" is a letter range).
#include "fleetreap/inventory/ansible_address.h"

#include <cctype>
#include <cstdint>
#include <string>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_pattern.h"

namespace fleetreap {
namespace {

const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

bool AllOf(const std::string& s, int (*pred)(int)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Python's s.split(":").
std::vector<std::string> SplitColons(const std::string& s) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == ':') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

// "[x:y]" or "[x:y:step]" at s[i]; "kind" picks the begin/end alphabet:
// 'n' digits, 'h' hex digits, 'a' one letter each or digits. Sets *end past "]".
bool RangeAt(const std::string& s, size_t i, char kind, size_t* end) {
  if (i >= s.size() || s[i] != '[') return false;
  size_t close = s.find(']', i);
  if (close == std::string::npos) return false;
  std::string body = s.substr(i + 1, close - i - 1);
  const std::vector<std::string> parts = SplitColons(body);
  if (parts.size() < 2 || parts.size() > 3) return false;
  if (parts.size() == 3 && !AllOf(parts[2], isdigit)) return false;
  bool ok = false;
  if (kind == 'h') {
    ok = AllOf(parts[0], isxdigit) && AllOf(parts[1], isxdigit);
  } else if (kind == 'n') {
    ok = AllOf(parts[0], isdigit) && AllOf(parts[1], isdigit);
  } else {
    ok = (AllOf(parts[0], isdigit) && AllOf(parts[1], isdigit)) ||
         (parts[0].size() == 1 && parts[1].size() == 1 && AllOf(parts[0], isalpha) &&
          AllOf(parts[1], isalpha));
  }
  if (ok) *end = close + 1;
  return ok;
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         (static_cast<unsigned char>(c) & 0x80);
}

bool IsIpv4(const std::string& s) {
  size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
    size_t end = 0;
    if (RangeAt(s, i, 'n', &end)) {
      i = end;
      continue;
    }
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    std::string d = s.substr(i, j - i);
    bool ok = (!d.empty() && d.size() <= 2) ||
              (d.size() == 3 && (d[0] == '0' || d[0] == '1' ||
                                 (d[0] == '2' && (d[1] < '5' || (d[1] == '5' && d[2] <= '5')))));
    if (!ok) return false;
    i = j;
  }
  return i == s.size();
}

// One IPv6 component (1-4 hex digits or a hex range) at s[*i].
bool Ipv6Component(const std::string& s, size_t* i) {
  size_t end = 0;
  if (RangeAt(s, *i, 'h', &end)) {
    *i = end;
    return true;
  }
  size_t j = *i;
  while (j < s.size() && j - *i < 4 && std::isxdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == *i) return false;
  *i = j;
  return true;
}

// Python's alternation in parse_address's ipv6 rule binds "^" to the first
// branch and "$" to the last, and re.match anchors only the start: most
// branches need only match a prefix. This mirrors that.
bool IsIpv6(const std::string& s) {
  size_t i = 0;
  int groups = 0;
  if (s.compare(0, 2, "::") == 0) return true;
  while (groups < 7) {
    size_t j = i;
    if (!Ipv6Component(s, &j) || j >= s.size() || s[j] != ':') break;
    i = j + 1;
    ++groups;
    if (i < s.size() && s[i] == ':') return true;  // (C:){1,6}: and C::
  }
  if (groups == 7) {
    size_t j = i;
    if (Ipv6Component(s, &j)) return true;
  }
  return false;
}

bool IsHostName(const std::string& s) {
  size_t i = 0;
  while (true) {
    size_t start = i;
    char last = 0;
    while (i < s.size() && s[i] != '.') {
      size_t end = 0;
      if (RangeAt(s, i, 'a', &end)) {
        i = end;
        last = ']';
      } else if (IsWordChar(s[i]) || (s[i] == '-' && i > start)) {
        last = s[i++];
      } else {
        return false;
      }
    }
    if (i == start || last == '_' || last == '-') return false;
    if (i == s.size()) return true;
    ++i;
  }
}

// hostport: ((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$
bool SplitHostPort(const std::string& s, std::string* host, int* port) {
  size_t i = 0;
  while (i < s.size() && s[i] != ':') {
    if (s[i] == ']') return false;
    if (s[i] == '[') {
      size_t close = s.find(']', i);
      if (close == std::string::npos) return false;
      i = close + 1;
    } else {
      ++i;
    }
  }
  if (i >= s.size()) return false;
  std::string digits = s.substr(i + 1);
  if (!ParseDigits(digits, 9, port)) return false;
  *host = s.substr(0, i);
  return true;
}

// Python's int() of a range bound: optional blanks and sign, digits with
// single underscores between them.
bool PythonInt(const std::string& text, int64_t* value) {
  size_t b = text.find_first_not_of(" \t");
  size_t e = text.find_last_not_of(" \t");
  if (b == std::string::npos) return false;
  std::string s = text.substr(b, e - b + 1);
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      digits += s[i];
    } else if (s[i] != '_' || i == 0 || i + 1 == s.size() || s[i + 1] == '_') {
      return false;
    }
  }
  if (digits.empty() || digits.size() > 15) return false;
  *value = std::stoll(digits) * (negative ? -1 : 1);
  return true;
}

Status RangeError(const std::string& pattern, const std::string& problem) {
  return Status::Error(ErrorKind::kInvalidInput, "host range \"" + pattern + "\": " + problem);
}

// A ClusterShell range set in brackets ("01-04", "1-3,7", "1-9/2").
bool LooksClusterShell(const std::string& body) {
  return body.find_first_not_of("0123456789-,/") == std::string::npos &&
         body.find_first_of("-,") != std::string::npos;
}

Status Expand(const std::string& pattern, const std::string& line,
              std::vector<std::string>* names) {
  const std::string& marked = line;
  size_t open = marked.find('['), close = marked.find(']');
  if (close == std::string::npos) return RangeError(pattern, "missing \"]\"");
  if (open == std::string::npos) return RangeError(pattern, "\"]\" without \"[\"");
  if (marked.find('|') != std::string::npos) return RangeError(pattern, "\"|\" in a host range");
  size_t first = std::min(open, close), second = std::max(open, close);
  const std::string head = marked.substr(0, first);
  const std::string body = marked.substr(first + 1, second - first - 1);
  const std::string tail = marked.substr(second + 1);
  const std::vector<std::string> bounds = SplitColons(body);
  if (bounds.size() != 2 && bounds.size() != 3) {
    if (LooksClusterShell(body)) {
      std::string hint = "";
      size_t dash = body.find('-');
      if (body.find_first_of(",/") == std::string::npos && dash != std::string::npos) {
        hint = ": write " + head + "[" + body.substr(0, dash) + ":" + body.substr(dash + 1) + "]" +
               tail;
      }
      return RangeError(pattern,
                        "Ansible reads only [begin:end] or [begin:end:step] "
                        "ranges, not ClusterShell's [" +
                            body + "]" + hint);
    }
    return RangeError(pattern, "\"" + body + "\" is not begin:end or begin:end:step");
  }
  std::string beg = bounds[0].empty() ? "0" : bounds[0];
  const std::string& end = bounds[1];
  if (end.empty()) return RangeError(pattern, "missing end in \"" + body + "\"");
  size_t width = 0;
  if (beg[0] == '0' && beg.size() > 1) {
    width = beg.size();
    if (end.size() != width) {
      return RangeError(pattern, "zero-padded begin \"" + beg +
                                     "\" needs an end of the same width, got \"" + end + "\"");
    }
  }
  int64_t step = 1;
  if (bounds.size() == 3 && !PythonInt(bounds[2], &step)) {
    return RangeError(pattern, "step \"" + bounds[2] + "\" is not a number");
  }
  std::vector<std::string> values;
  const std::string letters = kLetters;
  size_t lb = letters.find(beg), le = letters.find(end);
  if (lb != std::string::npos && le != std::string::npos && step != 0) {
    if (lb > le) return RangeError(pattern, "start " + beg + " is after end " + end);
    if (step < 0) return RangeError(pattern, "step " + bounds[2] + " is negative");
    for (size_t c = lb; c <= le; c += static_cast<size_t>(step)) {
      values.push_back(std::string(1, letters[c]));
    }
  } else {
    int64_t b = 0, e = 0;
    if (!PythonInt(beg, &b) || !PythonInt(end, &e)) {
      return RangeError(pattern, "\"" + body + "\" is neither a number range nor a letter range");
    }
    if (step == 0) return RangeError(pattern, "step must not be 0");
    // Ansible reads no host at all from these; that is a typo, never a plan.
    if (b > e) return RangeError(pattern, "start " + beg + " is after end " + end);
    if (step < 0) return RangeError(pattern, "step " + bounds[2] + " is negative");
    if ((step > 0 && e >= b && (e - b) / step >= static_cast<int64_t>(kMaxExpandedHosts)) ||
        (step < 0 && b > e + 1 && (b - e) / -step >= static_cast<int64_t>(kMaxExpandedHosts))) {
      return RangeError(pattern,
                        "expands to more than " + std::to_string(kMaxExpandedHosts) + " names");
    }
    for (int64_t v = b; step > 0 ? v < e + 1 : v > e + 1; v += step) {
      std::string text = std::to_string(v < 0 ? -v : v);
      size_t pad = width > (v < 0 ? 1 : 0) ? width - (v < 0 ? 1 : 0) : 0;
      if (text.size() < pad) text.insert(0, pad - text.size(), '0');
      values.push_back((v < 0 ? "-" : "") + text);
    }
  }
  for (const std::string& v : values) {
    std::string name = head + v + tail;
    if (name.find('[') != std::string::npos) {
      Status s = Expand(pattern, name, names);
      if (!s.ok()) return s;
    } else {
      names->push_back(std::move(name));
    }
    if (names->size() > kMaxExpandedHosts) {
      return RangeError(pattern,
                        "expands to more than " + std::to_string(kMaxExpandedHosts) + " names");
    }
  }
  return Status::Ok();
}

}  // namespace

bool ParseAnsibleAddress(const std::string& text, std::string* host, int* port) {
  std::string address = text;
  *port = -1;
  if (address.size() > 2 && address[0] == '[') {
    size_t sep = address.rfind("]:");
    if (sep != std::string::npos && sep > 1 && ParseDigits(address.substr(sep + 2), 9, port)) {
      address = address.substr(1, sep - 1);
    }
  }
  std::string bare;
  int p = -1;
  if (SplitHostPort(address, &bare, &p)) {
    address = bare;
    *port = p;
  }
  if (!IsIpv4(address) && !IsIpv6(address) && !IsHostName(address)) return false;
  *host = address;
  return true;
}

Status ExpandAnsibleHostRange(const std::string& pattern, std::vector<std::string>* names) {
  if (pattern.find('[') == std::string::npos) {
    names->push_back(pattern);
    return Status::Ok();
  }
  std::vector<std::string> out;
  Status s = Expand(pattern, pattern, &out);
  if (!s.ok()) return s;
  names->insert(names->end(), out.begin(), out.end());
  return Status::Ok();
}

Status ExpandAnsibleHostKey(const std::string& key, std::vector<std::string>* names, int* port) {
  std::string host;
  if (!ParseAnsibleAddress(key, &host, port)) {
    host = key;
    *port = -1;
  }
  return ExpandAnsibleHostRange(host, names);
}

}  // namespace fleetreap
