#include "fleetreap/report/report_html.h"

#include <gtest/gtest.h>

#include <regex>

#include "fleetreap/report/utf8.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(ReportHtmlTest, MixedFleetHasEverySection) {
  const RunReport run = testing_fixture::MixedFleet();
  const std::string page = RenderHtml(run);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
  EXPECT_TRUE(Has(page, "content=\"default-src 'none';")) << "no request may leave the page";
  EXPECT_FALSE(Has(page, "http:") || Has(page, "https:") || Has(page, "src=")) << page;
  EXPECT_TRUE(Has(page, "<h1 id=\"verdict\" class=\"notready\">NOT READY: 12/16 hosts clean"))
      << page;
  EXPECT_TRUE(Has(page, "<span class=\"k\">10 clean</span>"));
  // The grid: the ten clean hosts fold into one row, the two cleaned ones into another,
  // problems first; one <details> per host.
  EXPECT_TRUE(Has(page, "<a href=\"#h0\">gpu[01-04,06,08-12]</a></th><td class=\"k\">clean</td>"))
      << page;
  EXPECT_TRUE(Has(page, "<a href=\"#h4\">gpu[05,07]</a></th><td class=\"k\">cleaned</td>"));
  EXPECT_LT(page.find("<a href=\"#h12\">gpu13</a>"), page.find("<a href=\"#h4\">gpu[05,07]"));
  EXPECT_TRUE(Has(page, "<i class=\"s-ghost\" title=\"GPU 3 after: ghost, 2048 MiB\"></i>"));
  EXPECT_EQ(Count(page, "<table class=\"grid\">"), 1u) << "one grid, by outcome";
  EXPECT_TRUE(Has(page, "<td class=\"k\">clean</td><td class=\"grp\">ungrouped</td>"));
  EXPECT_EQ(Count(page, "<details class=\"host "), run.hosts.size());
  // The funnel: 8 + 8 + 8 job holders found (the daemons are protected), TERM 24, KILL 5,
  // the unkillable one left.
  EXPECT_TRUE(Has(page, "<tr><th>found</th><td>24</td>")) << page;
  EXPECT_TRUE(Has(page, "<tr><th>sent TERM</th><td>24</td>"));
  EXPECT_TRUE(Has(page, "<tr><th>sent KILL</th><td>5</td>"));
  EXPECT_TRUE(Has(page, "<tr><th>left</th><td>1</td>"));
  // Timelines: gpu14 (10 s connecting) is among the slowest; a cleaned host's TERM wait shows.
  EXPECT_TRUE(Has(page, "<span class=\"st-term\" style=\"width:"));
  EXPECT_TRUE(Has(page, "title=\"term 10.0 s\""));
  EXPECT_TRUE(Has(page, "<a href=\"#h13\">gpu14</a></th><td>1.2 s</td>")) << page;
  // Details: the reason, the units, /dev/shm, the holders.
  EXPECT_TRUE(Has(page, "<dt>reason</dt><dd>Timeout connecting to 127.0.1.14</dd>")) << page;
  EXPECT_TRUE(Has(page, "<dt>units stopped</dt><dd class=\"cmd\">vllm.service</dd>"));
  EXPECT_TRUE(Has(page, "/dev/shm/nccl-abc123, /dev/shm/torch_4000_1"));
  EXPECT_TRUE(Has(page,
                  "<td>4000</td><td>python3</td><td>svc-infer</td><td>0</td>"
                  "<td>terminated</td>"));
  EXPECT_TRUE(Has(page,
                  "Access denied for &#39;root&#39; &lt;publickey&gt; &amp; "
                  "&quot;password&quot;"));
}

TEST(ReportHtmlTest, GridIsByOutcomeThenFirstInventoryGroup) {
  RunReport run = testing_fixture::MixedFleet();
  for (size_t i = 0; i < run.hosts.size(); ++i) {
    run.hosts[i].groups =
        i < 8 ? std::vector<std::string>{"rack_a", "h200"} : std::vector<std::string>{"rack_b"};
  }
  run.hosts[15].groups.clear();
  const std::string page = RenderHtml(run);
  // The clean hosts of each rack share a row, rack_a's first; no row is h200's.
  const size_t a = page.find("<td class=\"k\">clean</td><td class=\"grp\">rack_a</td>");
  const size_t b = page.find("<td class=\"k\">clean</td><td class=\"grp\">rack_b</td>");
  ASSERT_NE(a, std::string::npos) << page;
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_FALSE(Has(page, "<td class=\"grp\">h200</td>"));
  // Problems come first, whatever their group.
  EXPECT_LT(page.find("<a href=\"#h12\">gpu13</a>"), a);
  EXPECT_TRUE(Has(page, "<td class=\"grp\">ungrouped</td>"));
  EXPECT_TRUE(Has(page, "<dt>groups</dt><dd class=\"cmd\">rack_a, h200</dd>"));
}

TEST(ReportHtmlTest, HostileTextCannotInjectMarkup) {
  RunReport run = testing_fixture::MixedFleet();
  HostReport& host = run.hosts[4];
  host.name = "</script><script>alert(1)</script>";
  host.groups = {"g\"><script>alert(2)</script>"};
  host.error_message = "line one\nline two <b>bold</b>";
  host.units_stopped = {"evil'.service"};
  host.holders[0].comm = "\"'><img src=x onerror=alert(3)>";
  host.holders[0].cmdline = "python3 \xFF\xFE -c '</details><iframe>' \x1b[2J";
  host.holders[0].user = "<!--";
  host.timings.push_back({"term\"><script>alert(4)</script>", std::chrono::milliseconds(5)});
  host.gpus_before[0].bus_id = "</td>";
  host.gpus_before[0].index = -1;
  run.not_started = {"<b>late</b>"};
  const std::string page = RenderHtml(run);
  EXPECT_EQ(Count(page, "<script"), 1u) << "only the page's own script";
  EXPECT_EQ(Count(page, "</script>"), 1u);
  for (const char* bad :
       {"<img", "<iframe", "</details><iframe", "<b>bold", "<b>late", "<!--", "alert(2)</script"}) {
    EXPECT_FALSE(Has(page, bad)) << bad;
  }
  EXPECT_EQ(ReplaceInvalidUtf8(page), page) << "the page is valid UTF-8";
  EXPECT_FALSE(Has(page, "\x1b"));
  EXPECT_TRUE(Has(page, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(Has(page, "<td class=\"grp\">g&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;</td>"));
  EXPECT_TRUE(Has(page, "&quot;&#39;&gt;&lt;img src=x onerror=alert(3)&gt;"));
  EXPECT_TRUE(Has(page, "python3 \xEF\xBF\xBD\xEF\xBF\xBD -c &#39;&lt;/details&gt;"));
  EXPECT_TRUE(Has(page, "class=\"st-termscriptalert4script\""));
  EXPECT_TRUE(Has(page, "&lt;b&gt;late&lt;/b&gt;: interrupted"));
  // Every attribute value is quoted and holds no raw quote: each tag's quotes pair up.
  const std::regex tag("<[a-z][^>]*>");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::string text = it->str();
    if (text.rfind("<script", 0) == 0 || text.rfind("<meta", 0) == 0) continue;
    EXPECT_EQ(Count(text, "\"") % 2, 0u) << text;
    EXPECT_FALSE(Has(text, "'")) << text;
  }
}

TEST(ReportHtmlTest, ThousandHostsStayCompact) {
  const RunReport run = testing_fixture::ThousandHostFleet();
  const std::string page = RenderHtml(run);
  EXPECT_EQ(Count(page, "<details class=\"host "), 1000u);
  // The clean hosts share one row, the cleaned ones another, each ghost GPU position one.
  const size_t rows = Count(page, "<tr class=\"o-");
  EXPECT_LT(rows, 40u) << rows;
  EXPECT_LT(page.size(), 3u * 1024 * 1024) << page.size();
  RecordProperty("bytes", static_cast<int>(page.size()));
  EXPECT_EQ(Count(page, "<tr><th><a href=\"#h"), 20u) << "the 20 slowest hosts' timelines";
}

TEST(ReportHtmlTest, DryRunSaysSo) {
  const std::string page = RenderHtml(testing_fixture::DryRunFleet());
  EXPECT_TRUE(Has(page, "<h1 id=\"verdict\" class=\"dry\">DRY RUN:")) << page;
  EXPECT_TRUE(Has(page, "a dry run signals nothing"));
  EXPECT_TRUE(Has(page, "<dt>units to stop</dt><dd class=\"cmd\">vllm.service</dd>"));
  EXPECT_TRUE(Has(page, "<tr><th>left</th><td>4</td>"));
}

}  // namespace
}  // namespace fleetreap
