#include "fleetreap/report/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace fleetreap {

bool ShouldUseColor(const std::string& color_flag, bool is_terminal, const char* no_color_env) {
  if (color_flag == "always") return true;
  if (color_flag == "never") return false;
  if (no_color_env != nullptr && no_color_env[0] != '\0') return false;
  return is_terminal;
}

bool IsTerminal(std::FILE* stream) { return stream != nullptr && isatty(fileno(stream)) == 1; }

int TerminalWidth(std::FILE* stream) {
  if (!IsTerminal(stream)) return 0;
  struct winsize size {};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

bool ShouldUseColorFor(std::FILE* stream, const std::string& color_flag) {
  return ShouldUseColor(color_flag, IsTerminal(stream), std::getenv("NO_COLOR"));
}

}  // namespace fleetreap
