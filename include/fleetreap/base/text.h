// Text: the small string helpers the parsers and classifiers share: trimming,
// searching, splitting into lines, joining, reading decimal numbers, and
// quoting a piece of a host's output inside an error message. Where two
// callers need different rules (which line ends, how long a number may be)
// there are two named functions, never a flag. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fleetreap {

/// The first line of "text" (up to its first LF), at most "max_chars" bytes:
/// for one-line error messages.
std::string FirstLine(const std::string& text, size_t max_chars = 200);

/// "text" without leading and trailing spaces, tabs, CRs and LFs.
std::string Trim(const std::string& text);

/// True when "part" occurs in "text".
inline bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

/// "value" in double quotes for an error message: control characters become
/// '?', and past "max_chars" it is cut and "..." added, so a host's garbage
/// can never flood or break a one-line message.
std::string QuoteForMessage(const std::string& value, size_t max_chars);

/// "text" with every control byte escaped ("\t", "\r", "\n", else "\x1b"),
/// and with "backslashes" each '\\' doubled, so that a host's bytes can
/// neither break a line nor drive a terminal; past "max_chars" bytes it is
/// cut and "..." added.
std::string EscapeControlBytes(const std::string& text, size_t max_chars, bool backslashes);

/// The lines of "text", split at LF, each without its CR; no empty last line
/// for a final LF.
std::vector<std::string> SplitLines(const std::string& text);

/// The lines of "text" as Python's str.splitlines() cuts them: at LF, CR,
/// CRLF, VT, FF and the separators 0x1c-0x1e; no empty last line for a final
/// line end.
std::vector<std::string> SplitLinesLikePython(const std::string& text);

/// "parts" with "separator" between each two: {"a", "", "b"} -> "a,,b".
std::string Join(const std::vector<std::string>& parts, const std::string& separator);

/// "parts" less the empty ones, with "separator" between each two:
/// {"a", "", "b"} -> "a,b".
std::string JoinNonEmpty(const std::vector<std::string>& parts, const std::string& separator);

/// True when "text" is 1 to "max_digits" ASCII digits: no sign, no space.
bool IsDigits(const std::string& text, size_t max_digits);

/// IsDigits(text, max_digits), then the value into "*value" (leading zeros
/// allowed). "max_digits" must keep it in range: at most 9 for int, 18 for
/// int64_t. False leaves "*value" alone.
bool ParseDigits(const std::string& text, size_t max_digits, int* value);
bool ParseDigits(const std::string& text, size_t max_digits, int64_t* value);

/// "text" as an unsigned decimal number of 1 to 20 ASCII digits (no sign, no
/// space, leading zeros allowed) whose value is at most "max". False on
/// anything else, overflow included, leaving "*value" alone.
bool ParseUnsigned(const std::string& text, uint64_t max, uint64_t* value);

}  // namespace fleetreap
