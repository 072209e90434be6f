// Utf8: text a host controls (process names, command lines, messages) made
// valid UTF-8 before it goes into a report format that requires it (JUnit
// XML, Markdown), as the JSON writer does with nlohmann's replace handler.
// Pure function; thread-safe.
#pragma once

#include <string>

namespace fleetreap {

/// "text" with every byte that does not start or continue a well-formed
/// UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing past
/// U+10FFFF, no truncated sequence) replaced by U+FFFD, one per bad byte.
/// Valid text comes back unchanged.
std::string ReplaceInvalidUtf8(const std::string& text);

}  // namespace fleetreap
