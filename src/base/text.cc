#include "fleetreap/base/text.h"

namespace fleetreap {

std::string FirstLine(const std::string& text, size_t max_chars) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > max_chars ? line.substr(0, max_chars) : line;
}

std::string Trim(const std::string& text) {
  const char* blanks = " \t\r\n";
  size_t begin = text.find_first_not_of(blanks);
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(blanks);
  return text.substr(begin, end - begin + 1);
}

std::string QuoteForMessage(const std::string& value, size_t max_chars) {
  std::string quoted = "\"";
  for (size_t i = 0; i < value.size() && i < max_chars; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    quoted += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (value.size() > max_chars) quoted += "...";
  return quoted + "\"";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

std::vector<std::string> SplitLinesLikePython(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1e')) {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      lines.push_back(std::move(line));
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::string JoinNonEmpty(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

bool IsDigits(const std::string& text, size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ParseDigits(const std::string& text, size_t max_digits, int* value) {
  if (max_digits > 9 || !IsDigits(text, max_digits)) return false;
  *value = std::stoi(text);
  return true;
}

bool ParseDigits(const std::string& text, size_t max_digits, int64_t* value) {
  if (max_digits > 18 || !IsDigits(text, max_digits)) return false;
  *value = std::stoll(text);
  return true;
}

bool ParseUnsigned(const std::string& text, uint64_t max, uint64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (digit > max || number > (max - digit) / 10) return false;
    number = number * 10 + digit;
  }
  *value = number;
  return true;
}

std::string EscapeControlBytes(const std::string& text, size_t max_chars, bool backslashes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\' && backslashes) {
      out += "\\\\";
    } else if (c == '\t' || c == '\r' || c == '\n') {
      out += c == '\t' ? "\\t" : c == '\r' ? "\\r" : "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

}  // namespace fleetreap
