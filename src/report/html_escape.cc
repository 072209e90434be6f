#include "fleetreap/report/html_escape.h"

#include "fleetreap/report/utf8.h"

namespace fleetreap {

std::string HtmlEscape(const std::string& text) {
  std::string out;
  const std::string valid = ReplaceInvalidUtf8(text);
  out.reserve(valid.size());
  for (char c : valid) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace fleetreap
