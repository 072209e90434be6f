#include "fleetreap/report/report_table.h"

#include <gtest/gtest.h>

#include "fleetreap/base/text.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::ExpectGolden;

TEST(ReportTableTest, MixedFleetGolden) {
  ExpectGolden("table.txt", RenderTable(testing_fixture::MixedFleet(), TableStyle{}));
}

TEST(ReportTableTest, MixedFleetColourGolden) {
  TableStyle style;
  style.color = true;
  ExpectGolden("table_color.txt", RenderTable(testing_fixture::MixedFleet(), style));
}

TEST(ReportTableTest, DryRunGolden) {
  ExpectGolden("table_dry_run.txt", RenderTable(testing_fixture::DryRunFleet(), TableStyle{}));
}

TEST(ReportTableTest, NoEscapeCodesWithoutColour) {
  std::string table = RenderTable(testing_fixture::MixedFleet(), TableStyle{});
  EXPECT_EQ(table.find('\033'), std::string::npos);
}

TEST(ReportTableTest, Verdicts) {
  RunReport all_clean = testing_fixture::MixedFleet();
  all_clean.hosts.resize(12);
  RunReport interrupted = all_clean;
  interrupted.interrupted = true;
  interrupted.not_started = {"gpu13", "gpu14"};
  RunReport stopped = all_clean;
  stopped.hosts.resize(2);
  stopped.hosts[1].status = HostStatus::kDirty;
  stopped.not_started = {"gpu03"};
  stopped.stopped = "stopped: every host of wave 2 of 3 failed";
  RunReport one = all_clean;
  one.hosts.resize(1);
  RunReport none;

  struct Row {
    RunReport report;
    const char* verdict;
  };
  const Row rows[] = {
      {all_clean, "READY: 12/12 hosts clean (2 cleaned) in 14.3 s (exit 0)"},
      {one, "READY: 1/1 host clean in 14.3 s (exit 0)"},
      {testing_fixture::MixedFleet(),
       "NOT READY: 12/16 hosts clean (2 cleaned), 1 dirty, 1 failed, "
       "2 unreachable in 14.3 s (exit 3)"},
      {testing_fixture::DryRunFleet(),
       "DRY RUN: 0/4 hosts clean, 2 would clean, 1 dirty, 1 unreachable "
       "in 14.3 s, nothing changed (exit 2)"},
      {interrupted, "INTERRUPTED: 12/14 hosts clean (2 cleaned), 2 not started in 14.3 s (exit 2)"},
      {none, "READY: 0/0 hosts clean in 0.0 s (exit 0)"},
      {stopped, "STOPPED: 1/3 hosts clean, 1 dirty, 1 not started in 14.3 s (exit 7)"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(RenderVerdict(row.report, TableStyle{}), row.verdict);
  }
  EXPECT_EQ(RenderTable(none, TableStyle{}), std::string(rows[5].verdict) + "\n");
}

TEST(ReportTableTest, NamesGpusByBusIdAndKeepsTheDriversWords) {
  EXPECT_EQ(RenderTable(testing_fixture::DriverSignalsFleet(), TableStyle{}),
            "gpu20       dirty  GPU 0000:B1:00.0 lost\n"
            "    GPU 0000:B1:00.0 lost: Unable to determine the device handle for "
            "GPU0000:B1:00.0: Unknown\n"
            "      Error\\x1b[2J\n"
            "gpu[21-22]  dirty  GPU 3 needs recovery (Reset)\n"
            "    gpu21: GPU 3 needs recovery: driver asks for recovery: Reset (0 MiB used)\n"
            "    gpu22: GPU 3 needs recovery: driver asks for recovery: Reset (0 MiB used)\n"
            "NOT READY: 0/3 hosts clean, 3 dirty in 14.3 s (exit 1)\n");
}

TEST(ReportTableTest, FormatSeconds) {
  EXPECT_EQ(FormatSeconds(std::chrono::milliseconds(0)), "0.0 s");
  EXPECT_EQ(FormatSeconds(std::chrono::milliseconds(1250)), "1.2 s");
  EXPECT_EQ(FormatSeconds(std::chrono::milliseconds(61000)), "61.0 s");
}

TEST(ReportTableTest, ReasonsAreGroupedWhenTheyDifferOnlyByHost) {
  RunReport run;
  for (int i = 1; i <= 3; ++i) {
    HostReport host;
    host.name = "gpu0" + std::to_string(i);
    host.address = "10.0.0." + std::to_string(i);
    host.status = HostStatus::kUnreachable;
    host.error_kind = ErrorKind::kRefused;
    host.error_message = host.name + ": connection refused by " + host.address + ":22";
    run.hosts.push_back(host);
  }
  run.hosts[2].error_kind = ErrorKind::kAuth;
  run.hosts[2].error_message = "authentication as root@gpu03 failed: no key";
  std::string table = RenderTable(run, TableStyle{});
  EXPECT_EQ(table.substr(0, table.rfind("NOT READY")),
            "gpu[01-02]  unreachable  refused\n"
            "    <host>: connection refused by <address>:22\n"
            "gpu03       unreachable  auth\n"
            "    authentication as root@gpu03 failed: no key\n");
  run.hosts[1].error_message = "something else";
  table = RenderTable(run, TableStyle{});
  EXPECT_NE(table.find("    gpu01: gpu01: connection refused by 10.0.0.1:22\n"
                       "    gpu02: something else\n"),
            std::string::npos)
      << table;
}

TEST(ReportTableTest, AThousandHostsFitTheScreen) {
  const RunReport run = testing_fixture::ThousandHostFleet();
  TableStyle style;
  style.width = 100;
  const std::string table = RenderTable(run, style);
  ExpectGolden("table_1000.txt", table);
  size_t lines = 0;
  for (const std::string& line : SplitLines(table)) {
    ++lines;
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_LE(lines, 50u) << table;  // 437 hosts with a problem, each named
  // Problems first: the first row is not clean, the clean row comes last.
  EXPECT_EQ(table.find("clean  "), table.rfind("clean  "));
  EXPECT_LT(table.find("dirty"), table.find("cleaned"));
  // -v lists the clean hosts too.
  style.verbose = true;
  EXPECT_NE(RenderTable(run, style).find("gpu[0001"), std::string::npos);
}

TEST(ReportTableTest, RowsFoldCountsAndGpuLists) {
  RunReport run = testing_fixture::MixedFleet();
  run.hosts.resize(1);
  HostReport a = testing_fixture::CleanHost("gpu01", 1);
  a.status = HostStatus::kDirty;
  a.gpus_after[6].state = GpuState::kGhost;
  HostReport b = a;
  b.name = "gpu02";
  b.gpus_after[6].state = GpuState::kClean;
  b.gpus_after[2].state = GpuState::kGhost;
  run.hosts = {a, b};
  EXPECT_EQ(RenderTable(run, TableStyle{}).substr(0, 41),
            "gpu[01-02]  dirty  GPUs 2,6 ghost memory\n");
  EXPECT_EQ(OutcomeShape(OutcomeOf(a, false).phrase), OutcomeShape(OutcomeOf(b, false).phrase));
  EXPECT_EQ(OutcomeShape(OutcomeOf(a, false).phrase), "GPU @ ghost memory");
}

// Ghost memory: the row says how much (the hosts' total when they differ,
// never a range of them), and one line under it, shared by the row's
// hosts, what frees it.
TEST(ReportTableTest, GhostMemorySaysHowMuchAndWhatFreesIt) {
  RunReport run = testing_fixture::MixedFleet();
  HostReport a = testing_fixture::CleanHost("gpu01", 1);
  a.status = HostStatus::kDirty;
  a.gpus_after[2].state = GpuState::kGhost;
  a.gpus_after[2].used_mib = 1024;
  HostReport b = testing_fixture::CleanHost("gpu02", 2);
  b.status = HostStatus::kDirty;
  b.gpus_after[2].state = GpuState::kGhost;
  b.gpus_after[2].used_mib = 10151;
  run.hosts = {a, b};
  const std::string table = RenderTable(run, TableStyle{});
  EXPECT_EQ(table.substr(0, table.find("NOT READY")),
            "gpu[01-02]  dirty  GPU 2 ghost memory (11175 MiB) across the 2 hosts\n"
            "    ghost memory needs a GPU reset: run with --playbook reset.yaml\n")
      << table;
}

// A host whose supervisor started a worker again and lives on: not ready,
// the row says what was done and that it lives on, the line under it names
// it with its stop command; at 80 columns every line fits but a word longer
// than a line.
// The verdict: one line off a terminal (width 0), however long, for the CI
// job that greps it; on an 80-column terminal broken after its commas.
TEST(ReportTableTest, TheVerdictWrapsOnlyOnATerminal) {
  RunReport run = testing_fixture::MixedFleet();
  const std::string verdict = RenderVerdict(run, TableStyle{});
  ASSERT_GT(verdict.size(), 80U) << verdict;
  const std::string piped = RenderTable(run, TableStyle{});
  EXPECT_EQ(piped.substr(piped.size() - verdict.size() - 1), verdict + "\n");
  TableStyle terminal;
  terminal.width = 80;
  const std::string table = RenderTable(run, terminal);
  for (const std::string& line : SplitLines(table)) EXPECT_LE(line.size(), 80U) << line;
  const size_t at = table.rfind("NOT READY: ");
  ASSERT_NE(at, std::string::npos) << table;
  std::string joined = table.substr(at);
  for (size_t nl = joined.find("\n    "); nl != std::string::npos; nl = joined.find("\n    ")) {
    joined.replace(nl, 5, " ");
  }
  EXPECT_EQ(joined, verdict + "\n");
}

TEST(ReportTableTest, ALiveRestarterIsTheNotReadyReasonWithin80Columns) {
  RunReport run = testing_fixture::MixedFleet();
  HostReport host = testing_fixture::CleanedHost("gpu05", 5);
  host.status = HostStatus::kNotReady;
  host.respawning_parent = "188 (supervisor.py)";
  HostFinding alive;
  alive.kind = finding_kind::kRestarterAlive;
  alive.pids = {188};
  alive.names = {"supervisor.py"};
  Holder supervisor = testing_fixture::MakeHolder(188, "supervisor.py", {}, HolderFate::kObserved);
  supervisor.cmdline = "python3 supervisor.py --restart-delay 3 --workers 8 --gpus 0,1,2,3,4,5,6,7";
  supervisor.user = "root";
  alive.processes = {supervisor};
  alive.detail = "kill 188";
  alive.reason = true;
  host.findings = {alive};
  run.hosts = {host};
  TableStyle style;
  style.width = 80;
  const std::string table = RenderTable(run, style);
  EXPECT_EQ(table.rfind("gpu05  not ready  8 killed (TERM 6, KILL 2), 1 unit stopped,\n", 0), 0U)
      << table;
  EXPECT_NE(table.find("workers respawned by their parent supervisor.py,\n"
                       "                  which lives on\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n    restarter alive: pid 188 (supervisor.py)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("stop it with: kill 188\n"), std::string::npos) << table;
  for (const std::string& line : SplitLines(table)) EXPECT_LE(line.size(), 80U) << line;
}

}  // namespace
}  // namespace fleetreap
