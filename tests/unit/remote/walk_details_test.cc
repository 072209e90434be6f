// The holders' details by the walk's perl (perl_walk.cc, perl_details.cc):
// where no table and no watched parent can add PIDs to describe, the perl
// that walks and runs the queries also describes the charged PIDs and the
// holders, in the same run, and its records come after the queries'. They
// must read as the details' own perl and the shell's dump read them. Run
// with /bin/sh against children this test starts and ends by PID.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "support/holder_process.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

class WalkDetailsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runner_.Write(runner_.dir() + "/dev/nvidia0", "", 0644);
    holder_ = ForkHolder(runner_.dir() + "/dev/nvidia0");
    charged_ = ForkHolder("");
    usleep(200 * 1000);  // both have exec'd
    paths_.dev_dir = runner_.dir() + "/dev";
    // The GPU query answers; the apps query charges "charged_".
    runner_.Write(runner_.dir() + "/bin/nvidia-smi",
                  "#!/bin/sh\ncase \"$*\" in *query-compute-apps*) echo '" +
                      std::to_string(charged_) + ", GPU-1, 00000000:01:00.0, 100';; *) echo '0, " +
                      "GPU-1, x, 00000000:01:00.0, 100, 200';; esac\n",
                  0755);
    // Each perl run's argument count, in a file.
    runner_.Write(
        runner_.dir() + "/bin/perl",
        "#!/bin/sh\necho \"$#\" >>" + runner_.dir() + "/calls\nexec /usr/bin/perl \"$@\"\n", 0755);
  }
  void TearDown() override {
    for (pid_t pid : {holder_, charged_}) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // The scan's output, as a host with perl (or without) prints it.
  std::string Run(const ScanRequest& request, bool perl) {
    std::remove((runner_.dir() + "/calls").c_str());
    const std::string script = ScanScript(request, paths_);
    return runner_.Run(perl ? script : WithoutPerl(script));
  }
  int PerlRuns() {
    std::ifstream in(runner_.dir() + "/calls");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  static ScanOutput Parse(const std::string& out) {
    ScanOutput scan;
    EXPECT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
    return scan;
  }

  ScriptRunner runner_;
  HostPaths paths_;
  pid_t holder_ = 0;
  pid_t charged_ = 0;
};

// The fields of a stat text that do not change while a sleep sleeps: up to
// the state, the parent, and the start time (the 22nd); the rest counts
// faults and ticks.
std::string SteadyStat(const std::string& stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return stat;
  std::istringstream fields(stat.substr(close + 2));
  std::string out = stat.substr(0, close + 1), field;
  for (int i = 3; fields >> field; ++i) {
    if (i <= 4 || i == 22) out += " " + field;
  }
  return out;
}

// The lines of a status text that do not change while a sleep sleeps (not
// SigQ, the user's queued signals, nor the counts of switches and memory).
std::string SteadyStatus(const std::string& status) {
  std::istringstream lines(status);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    const std::string key = line.substr(0, line.find(':'));
    if (key == "Name" || key == "Tgid" || key == "Pid" || key == "PPid" || key == "Uid" ||
        key == "Gid" || key == "NSpid") {
      out += line + "\n";
    }
  }
  return out;
}

void ExpectSameDetails(const ScanOutput& a, const ScanOutput& b, int pid, const char* what) {
  SCOPED_TRACE(std::string(what) + " PID " + std::to_string(pid));
  ASSERT_TRUE(a.processes.count(pid));
  ASSERT_TRUE(b.processes.count(pid));
  const ProcessText& x = a.processes.at(pid);
  const ProcessText& y = b.processes.at(pid);
  EXPECT_FALSE(x.stat.empty());
  EXPECT_FALSE(SteadyStatus(x.status).empty());
  EXPECT_EQ(SteadyStat(x.stat), SteadyStat(y.stat));
  EXPECT_EQ(SteadyStatus(x.status), SteadyStatus(y.status));
  EXPECT_EQ(x.argv, y.argv);
  EXPECT_EQ(x.cgroup, y.cgroup);
  EXPECT_EQ(x.has_exe, y.has_exe);
  EXPECT_EQ(x.exe, y.exe);
  EXPECT_EQ(x.exe_uid, y.exe_uid);
  EXPECT_EQ(x.exe_mode, y.exe_mode);
  EXPECT_EQ(x.preloaded, y.preloaded);
}

TEST_F(WalkDetailsTest, TheWalksPerlDescribesWhatTheDetailsPerlAndTheShellDescribe) {
  const std::string walked = Run(Request(), true);
  EXPECT_EQ(PerlRuns(), 1) << "one perl walks, queries and describes";
  // With the table asked for, its PIDs come after the walk: the details'
  // own perl describes them all, as before.
  ScanRequest with_table = Request();
  with_table.table = true;
  const std::string described = Run(with_table, true);
  EXPECT_EQ(PerlRuns(), 2);
  const std::string shell = Run(Request(), false);
  // The walk's records come after the queries', before the table's.
  const size_t apps = walked.find(std::string("apps 0:"));
  const size_t details = walked.find("/proc/" + std::to_string(holder_) + "/stat:");
  const size_t table = walked.find(std::string("table -"));
  ASSERT_NE(details, std::string::npos) << walked;
  EXPECT_LT(apps, details);
  EXPECT_LT(details, table);
  const ScanOutput a = Parse(walked), b = Parse(described), c = Parse(shell);
  for (int pid : {holder_, charged_}) {
    ExpectSameDetails(a, b, pid, "walk's perl, details' perl");
    ExpectSameDetails(a, c, pid, "walk's perl, shell");
  }
  EXPECT_EQ(a.passwd, c.passwd);
  EXPECT_EQ(a.owner_units, c.owner_units);
  EXPECT_EQ(a.owner_units, b.owner_units);
  EXPECT_EQ(a.pid_namespace, c.pid_namespace);
  EXPECT_FALSE(a.pid_namespace.empty());
  EXPECT_EQ(a.has_pid_marker, c.has_pid_marker);
  EXPECT_EQ(a.pid_files, c.pid_files);
}

// A watched parent's children are described too: they come after the walk,
// so the details' own perl describes everything, once.
TEST_F(WalkDetailsTest, WithAWatchedParentTheDetailsPerlDescribesEveryPid) {
  const std::string out = Run(Request({}, {static_cast<int>(getpid())}), true);
  EXPECT_EQ(PerlRuns(), 2);
  const ScanOutput scan = Parse(out);
  EXPECT_TRUE(scan.processes.count(holder_));
  EXPECT_TRUE(scan.processes.count(charged_));
  // Each PID described once: its argv not doubled.
  EXPECT_EQ(scan.processes.at(holder_).argv, (std::vector<std::string>{"sleep", "30"}));
}

}  // namespace
}  // namespace fleetreap
