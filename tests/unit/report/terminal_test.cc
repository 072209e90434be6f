#include "fleetreap/report/terminal.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(TerminalTest, ColourOnATerminalWithoutNoColorUnlessTheFlagSays) {
  struct Row {
    const char* flag;
    bool is_terminal;
    const char* no_color;
    bool color;
  };
  // An explicit --color always or never wins over NO_COLOR (no-color.org).
  const Row rows[] = {
      {"auto", true, nullptr, true},     // a terminal
      {"auto", false, nullptr, false},   // a pipe
      {"auto", true, "1", false},        // NO_COLOR
      {"auto", true, "", true},          // empty NO_COLOR counts as unset
      {"always", false, nullptr, true},  // forced on
      {"always", true, "1", true},       // the flag wins over NO_COLOR
      {"always", false, "1", true},      // the flag wins over NO_COLOR
      {"never", true, nullptr, false},   // forced off
      {"never", true, "", false},        // forced off
      {"never", false, nullptr, false},  // forced off
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
