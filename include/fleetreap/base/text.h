// Text: the small string helpers the parsers and classifiers share: trimming,
// searching, and quoting a piece of a host's output inside an error message.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fleetreap {

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

}  // namespace fleetreap
