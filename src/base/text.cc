#include "fleetreap/base/text.h"

namespace fleetreap {

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
