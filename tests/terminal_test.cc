#include "fleetreap/report/terminal.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(TerminalTest, ColourOnlyOnATerminalAndNeverWithNoColor) {
  struct Row {
    const char* flag;
    bool is_terminal;
    const char* no_color;
    bool color;
  };
  const Row rows[] = {
      {"auto", true, nullptr, true},
      {"auto", false, nullptr, false},
      {"auto", true, "1", false},
      {"auto", true, "", true},  // empty NO_COLOR counts as unset
      {"always", false, nullptr, true},
      {"always", true, "1", false},  // NO_COLOR wins over --color=always
      {"never", true, nullptr, false},
      {"never", false, nullptr, false},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(ShouldUseColor(row.flag, row.is_terminal, row.no_color), row.color)
        << row.flag << " tty=" << row.is_terminal
        << " NO_COLOR=" << (row.no_color ? row.no_color : "(unset)");
  }
}

TEST(TerminalTest, NullStreamIsNoTerminal) { EXPECT_FALSE(IsTerminal(nullptr)); }

}  // namespace
}  // namespace fleetreap
