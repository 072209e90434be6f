// TextWrap: breaking text into lines that fit a terminal's width, for the
// table, the plan and the progress log. Widths are counted in bytes, so a
// colour escape or a multibyte character only ever wraps a line early,
// never late. A piece longer than a line is kept whole, never cut. Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fleetreap {

/// "text" cut after each "sep", every piece keeping its separator:
/// CutAfter("a, b, c", ", ") -> {"a, ", "b, ", "c"}.
std::vector<std::string> CutAfter(const std::string& text, const std::string& sep);

/// "pieces" laid out from column "first" on, as many to a line as fit in
/// "width"; continuation lines start with "indent" spaces. A piece's
/// trailing space is not counted (nor kept) at a line's end. Every line,
/// the last included, ends in LF; the first carries no indent (the caller
/// has written its first "first" columns).
std::string FillLines(const std::vector<std::string>& pieces, size_t first, size_t indent,
                      size_t width);

/// "text" word-wrapped (broken after spaces) from column "indent" on, its
/// continuation lines indented as far: FillLines(CutAfter(text, " "),
/// indent, indent, width).
std::string WrapWords(const std::string& text, size_t indent, size_t width);

/// One log line longer than "width" columns word-wrapped from column 0 with
/// its continuation lines indented by "indent"; a "width" of 0 keeps it
/// whole. Ends in LF.
std::string WrapLine(const std::string& text, size_t indent, size_t width);

}  // namespace fleetreap
