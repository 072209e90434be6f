// The audit lines as the step scripts write them, run with /bin/sh against
// a fake logger that records its arguments and its stdin.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "fleetreap/base/text.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"
#include "support/holder_process.h"
#include "support/scratch_dir.h"
#include "support/script_dir.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

class AuditScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Logger(0);
    Write(dir_ + "/bin/systemctl", "#!/bin/sh\nexit 0\n", 0755);
    request_.run_id = "20261202T061902Z-4f1c2a";
    request_.controller = "ctl1";
    request_.operator_name = "alice";
    paths_.dev_dir = dir_ + "/dev";
    paths_.shm_dir = dir_ + "/shm";
  }
  // A logger that appends its arguments and its stdin to "log", then exits
  // with "code".
  void Logger(int code) {
    Write(dir_ + "/bin/logger",
          "#!/bin/sh\necho \"ARGS $*\" >> " + dir_ + "/log\ncat >> " + dir_ + "/log\nexit " +
              std::to_string(code) + "\n",
          0755);
  }
  static void Write(const std::string& path, const std::string& text, int mode) {
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
  }
  // Runs "script" with /bin/sh in the scratch directory; returns stdout.
  std::string Run(const std::string& script) { return RunScriptIn(dir_, script); }
  // The lines logger read, its argument lines left out.
  std::vector<std::string> Logged(std::string* args = nullptr) {
    std::ifstream in(dir_ + "/log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("ARGS ", 0) == 0) {
        if (args != nullptr) *args += line + "\n";
      } else {
        lines.push_back(line);
      }
    }
    return lines;
  }
  pid_t Start(const std::string& file) {
    pid_t pid = ForkHolder(file);
    scratch_.Adopt(pid);
    return pid;
  }
  static uint64_t StartTime(pid_t pid) { return ProcessStartTime(pid); }

  ScratchDir scratch_{"audit", {"bin", "dev", "shm"}};
  const std::string dir_ = scratch_.path();
  AuditRequest request_;
  HostPaths paths_;
};

const char kRun[] = "run=20261202T061902Z-4f1c2a controller=ctl1 operator=alice ";

TEST_F(AuditScriptTest, OneLinePerSignalSentThroughOneLogger) {
  Write(dir_ + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(dir_ + "/dev/nvidia0");
  pid_t bystander = Start("");
  usleep(200 * 1000);
  std::vector<Target> targets = {{holder, StartTime(holder), true},
                                 {bystander, StartTime(bystander), true}};
  Holder described;
  described.pid = holder;
  described.start_time = StartTime(holder);
  described.exe = "/bin/sleep\nrun=forged action=kill pid=1";
  described.user = "bob";
  described.gpus = {0};
  request_.targets[holder] = AuditFieldsOf(described);
  std::string out = Run(
      SignalScript("TERM", targets, milliseconds(1000), milliseconds(50), paths_, {}, request_));
  SignalReply reply;
  ASSERT_TRUE(ParseSignalOutput(out, &reply).ok()) << out;
  EXPECT_EQ(reply.sent, std::vector<int>{holder});
  EXPECT_EQ(reply.audit.lines, 1);
  EXPECT_EQ(reply.audit.exit_code, 0);
  std::string args;
  std::vector<std::string> lines = Logged(&args);
  EXPECT_EQ(args, "ARGS --socket-errors=on -S 2048 -t fleetreap\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], std::string(kRun) + "action=term pid=" + std::to_string(holder) +
                          " start=" + std::to_string(described.start_time) +
                          " exe=/bin/sleep%0arun%3dforged%20action%3dkill%20pid%3d1 user=bob "
                          "owner=- gpus=0");
}

TEST_F(AuditScriptTest, AFailingLoggerNeverStopsTheSignals) {
  Logger(1);
  Write(dir_ + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(dir_ + "/dev/nvidia0");
  usleep(200 * 1000);
  std::vector<Target> targets = {{holder, StartTime(holder), true}};
  std::string out = Run(
      SignalScript("KILL", targets, milliseconds(1000), milliseconds(50), paths_, {}, request_));
  SignalReply reply;
  ASSERT_TRUE(ParseSignalOutput(out, &reply).ok()) << out;
  EXPECT_EQ(reply.sent, std::vector<int>{holder});
  EXPECT_TRUE(reply.audit.NotWritten());
  EXPECT_EQ(reply.audit.exit_code, 1);
  // Without a run id nothing is handed to logger and no audit record comes.
  Logger(0);
  pid_t other = Start(dir_ + "/dev/nvidia0");
  usleep(200 * 1000);
  out = Run(SignalScript("KILL", {{other, StartTime(other), true}}, milliseconds(1000),
                         milliseconds(50), paths_));
  ASSERT_TRUE(ParseSignalOutput(out, &reply).ok()) << out;
  EXPECT_EQ(reply.sent, std::vector<int>{other});
  EXPECT_EQ(reply.audit.lines, 0);
}

TEST_F(AuditScriptTest, UnitStopsAndResetsAreLogged) {
  std::vector<UnitStop> stops;
  AuditOutcome audit;
  std::string out =
      Run(StopUnitsScript({"vllm.service", "x y\nrun=forged"}, milliseconds(2000), request_));
  ASSERT_TRUE(ParseStopUnitsOutput(out, {"vllm.service", "x y\nrun=forged"}, &stops, &audit).ok())
      << out;
  EXPECT_EQ(audit.lines, 2);
  EXPECT_EQ(Logged(), (std::vector<std::string>{
                          std::string(kRun) + "action=stop_unit unit=vllm.service rc=0",
                          std::string(kRun) + "action=stop_unit unit=x%20y%0arun%3dforged rc=0"}));
}

TEST_F(AuditScriptTest, EachRemovedShmFileIsOneLineWhateverItsName) {
  const std::set<std::string> names = {"nccl-a", "nccl-b c", "nccl-\nrun=forged action=kill",
                                       "nccl-\xc3\xa9%", "nccl-\\x"};
  for (const std::string& name : names) std::ofstream(dir_ + "/shm/" + name) << "x";
  std::ofstream(dir_ + "/shm/keep.db") << "x";
  ShmOutput shm;
  std::string out = Run(ShmCleanScript({"nccl-*"}, false, paths_, request_));
  ASSERT_TRUE(ParseShmOutput(out, &shm).ok()) << out;
  EXPECT_EQ(std::set<std::string>(shm.removed.begin(), shm.removed.end()), names);
  EXPECT_EQ(shm.audit.lines, 5);
  std::set<std::string> expected;
  for (const std::string& name : names) {
    expected.insert(std::string(kRun) + "action=shm_remove file=" + AuditValue(paths_.shm_dir) +
                    "/" + AuditValue(name));
  }
  std::vector<std::string> lines = Logged();
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()), expected);
  // A dry run changes nothing and logs nothing.
  std::ofstream(dir_ + "/shm/nccl-late") << "x";
  out = Run(ShmCleanScript({"nccl-*"}, true, paths_, request_));
  ASSERT_TRUE(ParseShmOutput(out, &shm).ok()) << out;
  EXPECT_EQ(shm.audit.lines, 0);
  EXPECT_EQ(Logged().size(), 5u);
}

TEST_F(AuditScriptTest, GpuResetsAreLoggedWithTheirExitStatus) {
  // The compute-process query lists nothing; the reset exits 3.
  Write(dir_ + "/bin/nvidia-smi",
        "#!/bin/sh\ncase $* in *query-compute-apps*) exit 0;; esac\nexit 3\n", 0755);
  std::vector<GpuReset> resets;
  AuditOutcome audit;
  std::string out = Run(GpuResetScript({2}, milliseconds(2000), {}, milliseconds(30000), request_));
  ASSERT_TRUE(ParseGpuResetOutput(out, &resets, &audit).ok()) << out;
  EXPECT_EQ(audit.lines, 1);
  EXPECT_EQ(Logged(), std::vector<std::string>{std::string(kRun) + "action=gpu_reset gpu=2 rc=3"});
}

}  // namespace
}  // namespace fleetreap
