#include "fleetreap/report/html_escape.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(HtmlEscapeTest, Table) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  struct Row {
    std::string in;
    std::string out;
  };
  const Row rows[] = {
      {"gpu01", "gpu01"},
      {"</script><script>alert(1)</script>",
       "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"},
      {"\"'><img src=x onerror=alert(1)>", "&quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;"},
      {"a & b &amp;", "a &amp; b &amp;amp;"},
      {"line\nnext\ttab", "line\nnext\ttab"},
      {"esc\x1b[2J\r\x7f", "esc" + r + "[2J" + r + r},
      {std::string("nul\0x", 5), "nul" + r + "x"},
      {"bad \xFF\xC0\xAF", "bad " + r + r + r},
      {"caf\xC3\xA9 \xE2\x82\xAC", "caf\xC3\xA9 \xE2\x82\xAC"},
  };
  for (const Row& row : rows) EXPECT_EQ(HtmlEscape(row.in), row.out) << row.in;
}

}  // namespace
}  // namespace fleetreap
