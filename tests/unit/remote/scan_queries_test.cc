// The scan's GPU and compute-apps queries: where the host has perl the
// walk's perl runs them and prints their records; without perl the shell
// runs them beside the walk. Both ways give the same records for the same
// nvidia-smi, whatever it prints: NUL bytes, trailing blank lines, lines
// that look like the walk's own (H, QD, fd), a flood, a hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "fleetreap/remote/scan_output.h"
#include "support/holder_process.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

struct Both {
  ScanOutput perl, shell;
};

// The scan run both ways with "nvidia_smi" as the stand-in nvidia-smi.
Both RunBothWays(const std::string& nvidia_smi, ScanRequest request = Request()) {
  Both both;
  for (bool perl : {true, false}) {
    ScriptRunner runner;
    runner.Write(runner.dir() + "/bin/nvidia-smi", "#!/bin/sh\n" + nvidia_smi, 0755);
    const std::string script = ScanScript(request);
    const std::string out = runner.Run(perl ? script : WithoutPerl(script));
    ScanOutput* scan = perl ? &both.perl : &both.shell;
    EXPECT_TRUE(ParseScanOutput(out, scan).ok()) << (perl ? "perl: " : "shell: ") << out;
  }
  return both;
}

void ExpectSame(const Both& both) {
  EXPECT_EQ(both.perl.nvidia_smi_exit, both.shell.nvidia_smi_exit);
  EXPECT_EQ(both.perl.nvidia_smi_out, both.shell.nvidia_smi_out);
  EXPECT_EQ(both.perl.apps_exit, both.shell.apps_exit);
  EXPECT_EQ(both.perl.apps_out, both.shell.apps_out);
  EXPECT_EQ(both.perl.table_exit, both.shell.table_exit);
  EXPECT_EQ(both.perl.holder_walk_failed, both.shell.holder_walk_failed);
  std::set<int> perl_pids, shell_pids;
  for (const auto& [pid, text] : both.perl.processes) perl_pids.insert(pid);
  for (const auto& [pid, text] : both.shell.processes) shell_pids.insert(pid);
  EXPECT_EQ(perl_pids, shell_pids) << "the PIDs described";
}

// The parents of "pid", parent first, PID 1 left out (as a scan says them).
std::vector<int> AncestorsOf(int pid) {
  std::vector<int> chain;
  for (int i = 0; pid > 1 && i < 64; ++i) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    int parent = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("PPid:", 0) == 0) parent = std::stoi(line.substr(5));
    }
    pid = parent;
    if (pid > 1) chain.push_back(pid);
  }
  return chain;
}

// The walk's perl prints the session and the clock before the queries'
// records; the shell prints them itself. Both say the scan's shell, its
// parents (the shell that popen started, then this test and its own
// parents) and the shell's start time, no earlier than this test's own and
// not in the future.
TEST(ScanQueriesTest, TheSessionAndTheClockReadTheSameBothWays) {
  Both both = RunBothWays("echo index; exit 0\n");
  std::vector<int> mine = AncestorsOf(getpid());
  mine.insert(mine.begin(), getpid());
  for (const ScanOutput* scan : {&both.perl, &both.shell}) {
    ASSERT_EQ(scan->ancestors.size(), mine.size() + 1) << (scan == &both.perl ? "perl" : "shell");
    EXPECT_EQ(std::vector<int>(scan->ancestors.begin() + 1, scan->ancestors.end()), mine);
    EXPECT_GE(scan->clock, ProcessStartTime(getpid()));
    double uptime = 0;
    std::ifstream("/proc/uptime") >> uptime;
    EXPECT_LE(scan->clock, static_cast<uint64_t>((uptime + 1) * sysconf(_SC_CLK_TCK)));
  }
}

TEST(ScanQueriesTest, HostileOutputReadsTheSameBothWays) {
  // The apps charge this test's own PID, and say lines the walk's output
  // uses; the GPU query ends with NULs and blank lines.
  const std::string pid = std::to_string(getpid());
  Both both = RunBothWays(
      "case \"$*\" in\n"
      "  *query-gpu*) printf '0, 0\\000x\\nQ 0\\nH 1\\n.\\n\\n\\n'; exit 0;;\n"
      "  *query-compute-apps*) printf '" +
      pid +
      ", GPU-1, 00:01, 5\\nQD 1\\nfd 1 3 195 0\\n"
      "1x, y\\n\\047\\042\\n'; exit 3;;\n"
      "esac\nexit 0\n");
  ExpectSame(both);
  EXPECT_EQ(both.perl.nvidia_smi_out, "0, 0x\nQ 0\nH 1\n.");
  EXPECT_EQ(both.perl.apps_exit, 3);
  EXPECT_EQ(both.perl.processes.count(1), 0u) << "a line is not a holder";
  EXPECT_EQ(both.perl.processes.count(getpid()), 1u) << "the PID the apps charge, described";
}

TEST(ScanQueriesTest, AHungQueryIsCutBothWays) {
  ScanRequest request = Request();
  request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
  Both both =
      RunBothWays("case \"$*\" in *query-gpu*) exec sleep 30;; esac\necho '1, x'\n", request);
  ExpectSame(both);
  EXPECT_EQ(both.perl.nvidia_smi_exit, 124);
  EXPECT_EQ(both.perl.apps_exit, -1) << "not read after a hung GPU query";
}

// A query that ignores TERM (and keeps a child of its own in its group) is
// killed a second after its bound, both ways (timeout -k 1; perl's own bound
// on the perl path), and the scan goes on: 137, the apps query not read.
TEST(ScanQueriesTest, AQueryThatIgnoresTermIsKilledBothWays) {
  ScanRequest request = Request();
  request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
  Both both = RunBothWays(
      "case \"$*\" in *query-gpu*) trap '' TERM; sleep 30 & wait; sleep 30;; esac\n"
      "echo '1, x'\n",
      request);
  ExpectSame(both);
  EXPECT_EQ(both.perl.nvidia_smi_exit, 137);
  EXPECT_EQ(both.perl.apps_exit, -1) << "not read after a hung GPU query";
}

// Seen under load with a million fds: the walk outlasted the queries'
// bound, the queries had ended long before, and perl read them as hung. A
// query that ended while perl could not look is its own exit: the stand-in
// GPU query stops its parent (the walk's perl, which it belongs to: the
// test's own descendant) past the 2 s bound and has it continued 4 s later
// (room for a busy machine to start the stand-ins within the bound).
TEST(ScanQueriesTest, AQueryThatEndedWhileTheWalkRanIsNotReadAsHung) {
  ScanRequest request = Request();
  request.nvidia_smi_timeout = std::chrono::milliseconds(2000);
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\ncase \"$*\" in *query-gpu*)\n"
               "  p=$PPID; kill -STOP $p; (sleep 4; kill -CONT $p) >/dev/null 2>&1 </dev/null &\n"
               "  echo index; echo 0; exit 0;;\nesac\necho pid\n",
               0755);
  const std::string out = runner.Run(ScanScript(request));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_EQ(scan.nvidia_smi_exit, 0) << out;
  EXPECT_EQ(scan.nvidia_smi_out, "index\n0");
  EXPECT_EQ(scan.apps_exit, 0) << out;
}

TEST(ScanQueriesTest, AFloodIsCutBothWays) {
  Both both = RunBothWays(
      "case \"$*\" in *query-gpu*) echo 'index'; exit 0;; esac\nexec head -c 20000000 /dev/zero\n");
  EXPECT_EQ(both.perl.nvidia_smi_exit, 0);
  EXPECT_NE(both.perl.apps_exit, 0);
  EXPECT_NE(both.shell.apps_exit, 0);
  EXPECT_EQ(both.perl.apps_out, both.shell.apps_out) << "NULs only: nothing either way";
}

TEST(ScanQueriesTest, ANotFoundNvidiaSmiReadsTheSameBothWays) {
  Both both = RunBothWays("exit 127\n");
  ExpectSame(both);
  EXPECT_EQ(both.perl.nvidia_smi_exit, 127);
}

}  // namespace
}  // namespace fleetreap
