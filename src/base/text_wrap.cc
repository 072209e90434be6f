#include "fleetreap/base/text_wrap.h"

namespace fleetreap {

std::vector<std::string> CutAfter(const std::string& text, const std::string& sep) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < text.size()) {
    const size_t at = text.find(sep, start);
    const size_t end = at == std::string::npos ? text.size() : at + sep.size();
    pieces.push_back(text.substr(start, end - start));
    start = end;
  }
  return pieces;
}

std::string FillLines(const std::vector<std::string>& pieces, size_t first, size_t indent,
                      size_t width) {
  std::string out;
  std::string line;
  size_t column = first;
  for (const std::string& piece : pieces) {
    if (piece.empty()) continue;
    const size_t visible = line.size() + piece.size() - (piece.back() == ' ' ? 1 : 0);
    if (!line.empty() && column + visible > width) {
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
      column = indent;
    }
    line += piece;
  }
  return out + line + "\n";
}

std::string WrapWords(const std::string& text, size_t indent, size_t width) {
  return FillLines(CutAfter(text, " "), indent, indent, width);
}

std::string WrapLine(const std::string& text, size_t indent, size_t width) {
  if (width == 0 || text.size() <= width) return text + "\n";
  return FillLines(CutAfter(text, " "), 0, indent, width);
}

}  // namespace fleetreap
