// Terminal: what fleetreap may do to the stream it writes to, decided once,
// up front, as pure functions of the facts (is it a terminal, is NO_COLOR
// set, what did --color say), so the decisions are testable. Thread-safe.
#pragma once

#include <cstdio>
#include <string>

namespace fleetreap {

/// Whether human output gets ANSI colours. "color_flag" is --color: "always"
/// and "never" force the answer, whatever NO_COLOR says (an explicit flag
/// wins, as https://no-color.org asks); anything else ("auto") means "only
/// on a terminal, and not when NO_COLOR is set": a non-empty "no_color_env"
/// (the value of $NO_COLOR, nullptr when unset) turns it off.
bool ShouldUseColor(const std::string& color_flag, bool is_terminal, const char* no_color_env);

/// True when "stream" is a terminal (isatty on its descriptor).
bool IsTerminal(std::FILE* stream);

/// The width of the terminal behind "stream" in columns; 0 when it is no
/// terminal or does not say.
int TerminalWidth(std::FILE* stream);

/// The same decision for a real stream, reading $NO_COLOR from the environment.
bool ShouldUseColorFor(std::FILE* stream, const std::string& color_flag);

}  // namespace fleetreap
