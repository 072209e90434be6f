#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "fleetreap/base/text.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"
#include "support/script_dir.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// A scratch directory with a fake systemctl that records its arguments, one
// per line, so a test sees exactly what the remote shell passed.
class ScriptRunner {
 public:
  ScriptRunner() {
    char tmpl[] = "/tmp/fleetreap-rs-XXXXXX";
    dir_ = mkdtemp(tmpl);
    Write(
        dir_ + "/bin/systemctl",
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> " + dir_ + "/args\nexit 0\n",
        0755);
  }
  ~ScriptRunner() {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  void Write(const std::string& path, const std::string& text, int mode) {
    std::string parent = path.substr(0, path.rfind('/'));
    mkdir(parent.c_str(), 0755);
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
  }
  // Runs "script" with /bin/sh in the scratch directory; returns stdout.
  std::string Run(const std::string& script) { return RunScriptIn(dir_, script); }
  std::string Args() {
    std::ifstream in(dir_ + "/args");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  bool Exists(const std::string& name) { return access((dir_ + "/" + name).c_str(), F_OK) == 0; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

const std::vector<std::string> kHostile = {
    "a'; touch pwned1; echo '",  "$(touch pwned2)", "`touch pwned3`",
    "x\ntouch pwned4",           "x; touch pwned5", "\"; touch pwned6; \"",
    "x.service && touch pwned7",
};

TEST(RemoteScriptTest, HostileUnitNamesReachSystemctlAsOneWord) {
  ScriptRunner runner;
  std::string out = runner.Run(StopUnitsScript(kHostile, milliseconds(5000)));
  std::vector<UnitStop> stops;
  ASSERT_TRUE(ParseStopUnitsOutput(out, kHostile, &stops).ok()) << out;
  ASSERT_EQ(stops.size(), kHostile.size());
  std::string expected_args;
  for (const std::string& unit : kHostile) {
    expected_args += "stop\n--\n" + unit + "\n";
  }
  EXPECT_EQ(runner.Args(), expected_args);
  for (int i = 1; i <= 7; ++i) {
    EXPECT_FALSE(runner.Exists("pwned" + std::to_string(i))) << i;
  }
  EXPECT_EQ(stops[0].exit_code, 0);
  EXPECT_EQ(stops[3].unit, kHostile[3]);
}

ScanRequest Request(std::vector<std::string> units = {}, std::vector<int> watch = {}) {
  ScanRequest request;
  request.units = std::move(units);
  request.nvidia_smi_timeout = milliseconds(2000);
  request.watch = std::move(watch);
  return request;
}

TEST(RemoteScriptTest, HostileValuesInScanAndShmDoNothing) {
  ScriptRunner runner;
  std::string out = runner.Run(ScanScript(Request(kHostile)));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  std::string args = runner.Args();
  for (const std::string& unit : kHostile) {
    EXPECT_NE(args.find("\n" + unit + "\n"), std::string::npos) << unit;
  }
  HostPaths paths;
  paths.shm_dir = runner.dir();
  runner.Run(ShmCleanScript(kHostile, /*dry_run=*/true, paths));
  for (int i = 1; i <= 7; ++i) {
    EXPECT_FALSE(runner.Exists("pwned" + std::to_string(i))) << i;
  }
}

TEST(RemoteScriptTest, ScanReportsSessionAndNvidiaSmiFailure) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t "
               "communicate with the NVIDIA driver.' \nexit 9\n",
               0755);
  std::string out = runner.Run(ScanScript(Request()));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_GT(scan.shell_pid, 1);
  EXPECT_GT(scan.clock, 0u);  // the scan shell's start time
  EXPECT_FALSE(scan.ancestors.empty());
  EXPECT_EQ(scan.nvidia_smi_exit, 9);
  EXPECT_EQ(scan.nvidia_smi_out,
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
  EXPECT_EQ(scan.apps_exit, 9);
  EXPECT_TRUE(scan.active_units.empty());
  EXPECT_EQ(scan.units_exit, -1);
  // No units: systemctl is not asked for them.
  EXPECT_EQ(runner.Args().find("list-units"), std::string::npos);
}

TEST(RemoteScriptTest, ScanAsksAgainWithoutTheRecoveryFieldWhenRefused) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\ncase \"$*\" in *gpu_recovery_action*)\n"
               "  echo 'Field \"gpu_recovery_action\" is not a valid field to query.'; exit 2;;\n"
               "*query-gpu*) echo 'index, memory.used [MiB]'; echo '0, 0';;\n"
               "*) echo 'pid, gpu_uuid'; echo '4242, GPU-1';;\nesac\n",
               0755);
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(Request())), &scan).ok());
  EXPECT_EQ(scan.nvidia_smi_exit, 0);
  EXPECT_EQ(scan.nvidia_smi_out, "index, memory.used [MiB]\n0, 0");
  EXPECT_EQ(scan.apps_out, "pid, gpu_uuid\n4242, GPU-1");
  // The PID nvidia-smi charged is described (here: gone, so no texts).
  EXPECT_TRUE(scan.holders);
}

// The compute-apps query runs beside the GPU query: each stand-in query
// marks that it started and waits (bounded) for the other's mark.
TEST(RemoteScriptTest, ScanRunsTheAppsQueryBesideTheGpuQuery) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\ncase \"$*\" in *query-gpu*) me=gpu; other=apps;; *) me=apps; "
               "other=gpu;; esac\ntouch \"$me.started\"; i=0\n"
               "while [ ! -e \"$other.started\" ] && [ $i -lt 30 ]; do /bin/sleep 0.1; "
               "i=$((i+1)); done\n"
               "if [ -e \"$other.started\" ]; then echo \"$me beside\"; else echo \"$me "
               "alone\"; fi\n",
               0755);
  mkdir((runner.dir() + "/tmp").c_str(), 0700);
  ScanOutput scan;
  std::string out =
      runner.Run("TMPDIR=" + runner.dir() + "/tmp; export TMPDIR\n" + ScanScript(Request()));
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_EQ(scan.nvidia_smi_out, "gpu beside");
  EXPECT_EQ(scan.apps_out, "apps beside");
  EXPECT_EQ(scan.apps_exit, 0);
  // Its file is removed once read.
  EXPECT_EQ(std::system(("rmdir '" + runner.dir() + "/tmp'").c_str()), 0);
}

// A flooding compute-apps query cannot fill the host's disk: its file stops
// at the ulimit (8 or 16 MiB by the shell's block size) and the query fails.
TEST(RemoteScriptTest, ScanKeepsTheAppsQuerysFileBounded) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\ncase \"$*\" in *query-gpu*) echo 'index'; exit 0;; esac\n"
               "exec head -c 40000000 /dev/zero\n",
               0755);
  mkdir((runner.dir() + "/tmp").c_str(), 0700);
  ScanOutput scan;
  std::string out =
      runner.Run("TMPDIR=" + runner.dir() + "/tmp; export TMPDIR\n" + ScanScript(Request()));
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out.substr(0, 200);
  EXPECT_EQ(scan.nvidia_smi_exit, 0);
  EXPECT_NE(scan.apps_exit, 0);
  EXPECT_LE(out.size(), 16u << 20);
  EXPECT_EQ(std::system(("rmdir '" + runner.dir() + "/tmp'").c_str()), 0);
}

// An old driver names one field it does not know at a time: each is left
// out in turn; one that names none gets the base fields alone.
// The GPU queries a stand-in nvidia-smi logged to "calls", in order (the
// compute-apps query, run beside them, left out).
std::vector<std::string> GpuQueriesAsked(const std::string& calls) {
  std::ifstream in(calls);
  std::vector<std::string> asked;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("--query-gpu=", 0) == 0) asked.push_back(line);
  }
  return asked;
}

TEST(RemoteScriptTest, ScanLeavesOutEachFieldTheDriverRefuses) {
  ScriptRunner runner;
  const std::string calls = runner.dir() + "/calls";
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\nprintf '%s\\n' \"$1\" >> " + calls +
                   "\ncase \"$*\" in *fabric.state*)\n"
                   "  echo 'Field \"fabric.state\" is not a valid field to query.'; exit 2;;\n"
                   "*gpu_recovery_action*)\n"
                   "  echo 'Field \"gpu_recovery_action\" is not a valid field to query.'; exit "
                   "2;;\n"
                   "*query-gpu*) echo 'index, memory.used [MiB]'; echo '0, 0';;\n"
                   "*) echo 'pid'; echo '4242';;\nesac\n",
               0755);
  ScanRequest request = Request();
  request.readiness = true;
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request)), &scan).ok());
  EXPECT_EQ(scan.nvidia_smi_out, "index, memory.used [MiB]\n0, 0");
  // The compute-apps query runs beside the GPU queries: read apart.
  std::vector<std::string> asked = GpuQueriesAsked(calls);
  ASSERT_EQ(asked.size(), 3u);
  const std::string all = "--query-gpu=" + Join(ScanGpuFields(), ",");
  EXPECT_EQ(asked[0], all);
  EXPECT_EQ(asked[1].find("fabric.state"), std::string::npos);
  EXPECT_NE(asked[1].find("gpu_recovery_action,ecc.mode.current"), std::string::npos);
  EXPECT_NE(asked[1].find("fabric.status"), std::string::npos);
  EXPECT_EQ(asked[2].find("gpu_recovery_action"), std::string::npos);
  EXPECT_NE(asked[2].find("remapped_rows.pending"), std::string::npos);

  // A refusal that names no field of ours: the base fields, then no more.
  runner.Write(runner.dir() + "/bin/nvidia-smi",
               "#!/bin/sh\nprintf '%s\\n' \"$1\" >> " + calls +
                   "\necho 'Field \"x\" is not a valid field to query.'; exit 2\n",
               0755);
  std::remove(calls.c_str());
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request)), &scan).ok());
  asked = GpuQueriesAsked(calls);
  ASSERT_EQ(asked.size(), 2u) << scan.nvidia_smi_out;
  EXPECT_EQ(asked[1], "--query-gpu=" + Join(GpuQueryFieldsWithoutRecovery(), ","));
}

// The readiness part on a stand-in host: the driver's GPU folders, the
// NVSwitch nodes, and the kernel log's boot record and Xid lines only.
TEST(RemoteScriptTest, ScanReadsTheReadinessStandIns) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/bin/nvidia-smi", "#!/bin/sh\necho 'index'; echo 0\n", 0755);
  runner.Write(runner.dir() + "/driver/.made", "", 0644);  // Write makes one folder level
  runner.Write(runner.dir() + "/driver/0000:19:00.0/information", "Device Minor: 0\n", 0644);
  runner.Write(runner.dir() + "/driver/0000:3b:00.0/information", "Device Minor: 1\n", 0644);
  runner.Write(runner.dir() + "/dev/nvidia-nvswitch0", "", 0644);
  runner.Write(runner.dir() + "/dev/nvidia-nvswitch1", "", 0644);
  runner.Write(runner.dir() + "/dev/nvidia-nvswitchctl", "", 0644);
  const std::string boot = "6,0,1000,-;Linux version 6.8.0";
  const std::string xid =
      "4,1207,88000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.";
  runner.Write(runner.dir() + "/kmsg",
               boot + "\n6,1,1001,-;usb 1-1: new device\n SUBSYSTEM=usb\n" + xid + "\n", 0600);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  paths.driver_dir = runner.dir() + "/driver";
  paths.kmsg = runner.dir() + "/kmsg";
  ScanRequest request = Request();
  request.holders = false;
  request.readiness = true;
  request.kernel_log = true;
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request, paths)), &scan).ok());
  ASSERT_TRUE(scan.readiness);
  EXPECT_EQ(scan.driver_gpus, (std::vector<std::string>{"0000:19:00.0", "0000:3b:00.0"}));
  EXPECT_EQ(scan.nvswitches, 2);
  // Looked for (whether one runs here depends on this machine's processes:
  // a simulated NVSwitch host's is one of them).
  EXPECT_NE(scan.fabric_manager, -1);
  EXPECT_EQ(scan.kmsg_exit, 0);
  EXPECT_EQ(scan.kmsg_out, boot + "\n" + xid);

  paths.kmsg = runner.dir() + "/no-such-log";
  paths.dev_dir = runner.dir() + "/bin";
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request, paths)), &scan).ok());
  EXPECT_EQ(scan.kmsg_exit, 1);
  EXPECT_EQ(scan.nvswitches, 0);
  EXPECT_EQ(scan.fabric_manager, -1);
  request.kernel_log = false;
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request, paths)), &scan).ok());
  EXPECT_EQ(scan.kmsg_exit, -1);
  request.readiness = false;
  ASSERT_TRUE(ParseScanOutput(runner.Run(ScanScript(request, paths)), &scan).ok());
  EXPECT_FALSE(scan.readiness);
}

TEST(RemoteScriptTest, SignalNeverHitsAReusedPid) {
  // Our own PID with a start time that is not its own stands for a PID that
  // was reused between scan and kill: it must be reported gone, not signalled.
  ScriptRunner runner;
  std::vector<Target> targets = {{static_cast<int>(getpid()), 1, true},
                                 {static_cast<int>(getpid()), 1, false},
                                 {999999999, 5, true}};
  targets.erase(targets.begin() + 1);
  std::string out = runner.Run(SignalScript("KILL", targets, milliseconds(300), milliseconds(100)));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.gone, (std::vector<int>{static_cast<int>(getpid()), 999999999}));
  EXPECT_TRUE(result.sent.empty());
  EXPECT_TRUE(result.left.empty());
}

// Children this test starts and ends, by PID: "holder" holds a stand-in
// device file, "bystander" the same program without it.
class SignalLiveTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  pid_t Start(const std::string& file) {
    pid_t pid = fork();
    if (pid == 0) {
      if (!file.empty()) {
        int fd = open(file.c_str(), O_RDONLY);
        if (fd < 0) _exit(3);
      }
      execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(4);
    }
    children_.push_back(pid);
    return pid;
  }
  static uint64_t StartTime(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Holder holder;
    EXPECT_TRUE(ParseProcStat(text, &holder).ok());
    return holder.start_time;
  }
  std::vector<pid_t> children_;
};

TEST_F(SignalLiveTest, SignalsOnlyWhatStillHoldsADevice) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  pid_t bystander = Start("");
  pid_t charged = Start("");
  usleep(200 * 1000);  // the children have exec'd
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::vector<Target> targets = {{holder, StartTime(holder), true},
                                 {bystander, StartTime(bystander), true},
                                 {charged, StartTime(charged), false}};
  std::sort(targets.begin(), targets.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  std::string out =
      runner.Run(SignalScript("TERM", targets, milliseconds(1000), milliseconds(50), paths));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  // One that only nvidia-smi charged and that holds no device file now is
  // not signalled either (a real CUDA process holds them: safety.md).
  EXPECT_EQ(result.sent, std::vector<int>{holder});
  std::vector<int> gone = {bystander, charged};
  std::sort(gone.begin(), gone.end());
  std::sort(result.gone.begin(), result.gone.end());
  EXPECT_EQ(result.gone, gone);
  // Our children stay zombies until reaped: their every thread has exited,
  // their files are closed, so they are gone (the wait ends with them).
  EXPECT_TRUE(result.left.empty()) << out;
  EXPECT_EQ(kill(bystander, 0), 0);  // never signalled
  EXPECT_EQ(kill(charged, 0), 0);
}

// A leader in state Z whose thread still holds the device is alive: it is
// signalled (not "gone"), and once its thread is gone too it is gone, even
// unreaped. A process that only maps the device is signalled as a holder.
TEST_F(SignalLiveTest, ZombieLeaderWithLiveThreadsAndMappingOnlyHoldersAreSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  runner.Write(runner.dir() + "/dev/nvidia1", "", 0644);
  static std::string file;
  file = runner.dir() + "/dev/nvidia0";
  pid_t leader = fork();
  if (leader == 0) {
    pthread_t thread;
    auto hold = [](void*) -> void* {
      if (open(file.c_str(), O_RDONLY) < 0) _exit(3);
      for (;;) pause();
      return nullptr;
    };
    if (pthread_create(&thread, nullptr, hold, nullptr) != 0) _exit(5);
    syscall(SYS_exit, 0);  // the leader alone exits (pthread_exit would unwind into gtest)
  }
  children_.push_back(leader);
  const std::string mapped = runner.dir() + "/dev/nvidia1";
  pid_t mapper = fork();
  if (mapper == 0) {
    int fd = open(mapped.c_str(), O_RDWR);
    if (fd < 0 || mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) _exit(3);
    close(fd);
    for (;;) pause();
  }
  children_.push_back(mapper);
  usleep(300 * 1000);  // the leader has exited, the mapper has closed its fd
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::vector<Target> targets = {{leader, StartTime(leader), true},
                                 {mapper, StartTime(mapper), true}};
  std::sort(targets.begin(), targets.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  std::string out =
      runner.Run(SignalScript("TERM", targets, milliseconds(2000), milliseconds(50), paths));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  std::vector<int> sent = {leader, mapper};
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(result.sent, sent) << out;
  EXPECT_TRUE(result.gone.empty()) << out;
  EXPECT_TRUE(result.left.empty()) << out;
}

// A holder that exits between the check and the kill (kill(1) says "no such
// process") is gone, not refused: the host is not failed for it. kill is
// played by a function that ends the process first and then fails.
// The scan's clock is its shell's start time: a target born at or after it
// may be a reused PID paired with an older nvidia-smi answer, and is gone.
TEST_F(SignalLiveTest, TargetsBornAfterTheScanBeganAreNeverSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  const uint64_t born = StartTime(holder);
  std::vector<Target> targets = {{holder, born, true}};
  for (uint64_t scan_start : {born - 1, born}) {
    std::string out = runner.Run(SignalScript("KILL", targets, milliseconds(300), milliseconds(50),
                                              paths, {}, AuditRequest(), scan_start));
    SignalReply result;
    ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
    EXPECT_EQ(result.gone, std::vector<int>{holder}) << scan_start;
    EXPECT_TRUE(result.sent.empty());
  }
  EXPECT_EQ(kill(holder, 0), 0);  // never signalled
  std::string out = runner.Run(SignalScript("KILL", targets, milliseconds(1000), milliseconds(50),
                                            paths, {}, AuditRequest(), born + 1));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.sent, std::vector<int>{holder});
}

// A holder that closed its device file after the scan and opened it again
// (on another fd) before the kill still holds it at the kill: signalled.
TEST_F(SignalLiveTest, HolderThatReopensItsDeviceIsStillSignalled) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  const std::string dev = runner.dir() + "/dev/nvidia0";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c",
          "exec 3<\"$0\"; sleep 0.3; exec 3<&-; sleep 0.3; exec 7<\"$0\" sleep 30", dev.c_str(),
          static_cast<char*>(nullptr));
    _exit(4);
  }
  children_.push_back(pid);
  usleep(100 * 1000);
  const uint64_t born = StartTime(pid);
  usleep(900 * 1000);  // closed, then opened again on fd 7 by the exec'd sleep
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::string out = runner.Run(SignalScript("KILL", {{pid, born, true}}, milliseconds(1000),
                                            milliseconds(50), paths, {}, AuditRequest(), born + 1));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.sent, std::vector<int>{pid}) << out;
}

TEST_F(SignalLiveTest, HolderThatExitsBeforeItsSignalIsGone) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  // kill(1)'s path (a perl that answers nothing); signal_pidfd_test has the pidfd one.
  runner.Write(runner.dir() + "/bin/perl", "#!/bin/sh\nexit 0\n", 0755);
  std::string racing = "kill() { command kill -s KILL \"$3\"; sleep 0.2; return 1; }\n";
  std::string out = runner.Run(racing + SignalScript("TERM", {{holder, StartTime(holder), true}},
                                                     milliseconds(300), milliseconds(50), paths));
  SignalReply result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.gone, std::vector<int>{holder});
  EXPECT_TRUE(result.sent.empty());
  EXPECT_TRUE(result.failed.empty());
}

// The wait looks at its targets every 10 ms for its first second, then every
// poll: the schedule of its sleeps, recorded by a stand-in sleep (a holder
// that ignores TERM keeps it waiting to the end). Before, the first look came
// two polls after the signal, through tail --pid slices.
TEST_F(SignalLiveTest, WaitLooksEveryTenMsForItsFirstSecondThenEveryPoll) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/dev/nvidia0", "", 0644);
  runner.Write(runner.dir() + "/bin/sleep",
               "#!/bin/sh\necho \"$1\" >> " + runner.dir() + "/sleeps\nexec /bin/sleep \"$1\"\n",
               0755);
  signal(SIGTERM, SIG_IGN);  // inherited through exec by the holder alone
  pid_t holder = Start(runner.dir() + "/dev/nvidia0");
  signal(SIGTERM, SIG_DFL);
  usleep(200 * 1000);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  std::string out = runner.Run(SignalScript("TERM", {{holder, StartTime(holder), true}},
                                            milliseconds(1500), milliseconds(100), paths));
  std::ifstream in(runner.dir() + "/sleeps");
  std::vector<std::string> sleeps;
  for (std::string line; std::getline(in, line);) sleeps.push_back(line);
  ASSERT_GE(sleeps.size(), 3u) << out;
  EXPECT_EQ(sleeps.front(), "0.01");
  size_t i = 0;
  while (i < sleeps.size() && sleeps[i] == "0.01") ++i;
  ASSERT_LT(i, sleeps.size()) << "no poll after the first second";
  for (size_t j = i; j + 1 < sleeps.size(); ++j) EXPECT_EQ(sleeps[j], "0.10") << j;
}

// Every script the host runs: no nvidia-smi process query asks for a field
// a user controls (real nvidia-smi prints argv[0]'s newlines raw in CSV).
TEST(RemoteScriptTest, NoQueryAsksForAUserField) {
  ScanRequest table = Request({"vllm.service"}, {42});
  table.table = true;
  const std::vector<Target> targets = {{42, 7, true}, {43, 8, false}};
  const std::string scripts[] = {
      ScanScript(Request()),
      ScanScript(table),
      PerGpuQueryScript({0, 3}, milliseconds(1000)),
      StopUnitsScript({"vllm.service"}, milliseconds(1000)),
      SignalScript("TERM", targets, milliseconds(1000), milliseconds(100)),
      ShmCleanScript({"nccl-*"}, false),
      GpuResetScript({0}, milliseconds(1000)),
  };
  const std::set<std::string> allowed = {"pid", "gpu_uuid", "gpu_bus_id", "used_gpu_memory"};
  int queries = 0;
  for (const std::string& script : scripts) {
    EXPECT_EQ(script.find("process_name"), std::string::npos);
    for (const char* query : {"--query-compute-apps=", "--query-accounted-apps="}) {
      for (size_t at = script.find(query); at != std::string::npos;
           at = script.find(query, at + 1)) {
        ++queries;
        std::string fields = script.substr(at + std::string(query).size());
        fields = fields.substr(0, fields.find_first_of(" '\n"));
        std::stringstream list(fields);
        for (std::string field; std::getline(list, field, ',');) {
          EXPECT_TRUE(allowed.count(field)) << query << field;
        }
      }
    }
  }
  EXPECT_EQ(queries, 3);  // the two scans', the reset's (pid alone)
}

TEST(RemoteScriptTest, GpuResetIsBoundedPerGpu) {
  std::string script = GpuResetScript({3, 5}, milliseconds(30000));
  EXPECT_NE(script.find("timeout -k 2 30 nvidia-smi --gpu-reset -i 3 "), std::string::npos);
  EXPECT_NE(script.find("timeout -k 2 30 nvidia-smi --gpu-reset -i 5 "), std::string::npos);
}

TEST(RemoteScriptTest, ScanListsChildrenOfWatchedParentsAfterTheSignalTime) {
  // The scan's shell is itself a child of the shell the runner starts; the
  // signal script's "now" is its own start time. Watching the runner's
  // shell (our child) lists the scan's shell with a start time at or after
  // that of an earlier signal script.
  ScriptRunner runner;
  SignalReply sig;
  ASSERT_TRUE(ParseSignalOutput(
                  runner.Run(SignalScript("TERM", {}, milliseconds(0), milliseconds(100))), &sig)
                  .ok());
  EXPECT_GT(sig.now, 0u);
  std::string out = runner.Run(ScanScript(Request({}, {static_cast<int>(getpid())})));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  ASSERT_EQ(scan.children.size(), 1u) << out;  // the popen'd shell
  EXPECT_EQ(scan.children[0].parent, static_cast<int>(getpid()));
  EXPECT_GE(scan.children[0].start_time, sig.now);
  EXPECT_EQ(scan.children[0].comm, "sh");
  ASSERT_EQ(scan.parents.size(), 1u);  // and the watched parent, by name
  EXPECT_EQ(scan.parents[0].parent, static_cast<int>(getpid()));
  EXPECT_EQ(scan.parents[0].comm, "fleetreap_tests");
}

// A random file name: any byte but NUL and '/', never "." or "..".
std::string RandomName(std::mt19937& random) {
  std::uniform_int_distribution<int> length(1, 40), byte(1, 255);
  std::string name = "nccl-";
  for (int i = length(random); i > 0; --i) {
    char c = static_cast<char>(byte(random));
    if (c != '/') name += c;
  }
  return name;
}

TEST(RemoteScriptTest, ShmCleanKeepsWhatIsInUseAndReadsEveryName) {
  ScriptRunner runner;
  std::string shm = runner.dir() + "/shm";
  mkdir(shm.c_str(), 0755);
  HostPaths paths;
  paths.shm_dir = shm;
  std::mt19937 random(20261201);
  std::set<std::string> stale = {"nccl-old", "nccl-z\n@@end\n@@session\n0, 0", "nccl-@@end",
                                 "psm_x\\n", "nccl-\x1b[2J"};
  for (int i = 0; i < 40; ++i) stale.insert(RandomName(random));
  for (const std::string& name : stale) std::ofstream(shm + "/" + name) << "x";
  std::ofstream(shm + "/nccl-open") << "x";
  std::ofstream(shm + "/nccl-mapped") << "x";
  std::ofstream(shm + "/keep.db") << "x";
  mkdir((shm + "/nccl-dir").c_str(), 0755);
  std::ofstream(shm + "/nccl-dir/nccl-inner") << "x";
  if (symlink("/etc/hostname", (shm + "/nccl-link").c_str()) != 0) FAIL();
  int open_fd = open((shm + "/nccl-open").c_str(), O_RDONLY);
  int map_fd = open((shm + "/nccl-mapped").c_str(), O_RDONLY);
  void* map = mmap(nullptr, 1, PROT_READ, MAP_SHARED, map_fd, 0);
  close(map_fd);
  ASSERT_NE(map, MAP_FAILED);

  ShmOutput dry;
  std::string out = runner.Run(ShmCleanScript({"nccl-*", "psm_*"}, true, paths));
  ASSERT_TRUE(ParseShmOutput(out, &dry).ok()) << out;
  EXPECT_EQ(std::set<std::string>(dry.removed.begin(), dry.removed.end()), stale);
  EXPECT_EQ(std::set<std::string>(dry.in_use.begin(), dry.in_use.end()),
            (std::set<std::string>{"nccl-open", "nccl-mapped"}));

  ShmOutput real;
  out = runner.Run(ShmCleanScript({"nccl-*", "psm_*"}, false, paths));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(std::set<std::string>(real.removed.begin(), real.removed.end()), stale);
  EXPECT_TRUE(real.failed.empty());
  for (const char* kept :
       {"nccl-open", "nccl-mapped", "keep.db", "nccl-dir/nccl-inner", "nccl-link"}) {
    EXPECT_TRUE(runner.Exists("shm/" + std::string(kept))) << kept;
  }
  EXPECT_TRUE(runner.Exists("../../etc/hostname") || access("/etc/hostname", F_OK) == 0);
  for (const std::string& name : stale) EXPECT_FALSE(runner.Exists("shm/" + name));
  munmap(map, 1);
  close(open_fd);
}

// Only the inodes the step listed are removed: a file made after the
// listing (here by a find that makes one as it ends) was checked by no
// one, and is left for the next run.
// The runner's shm folder holding one stale segment, nccl-old.
HostPaths ShmWithAStaleSegment(ScriptRunner& runner) {
  HostPaths paths;
  paths.shm_dir = runner.dir() + "/shm";
  mkdir(paths.shm_dir.c_str(), 0755);
  std::ofstream(paths.shm_dir + "/nccl-old") << "x";
  return paths;
}

TEST(RemoteScriptTest, ShmCleanRemovesOnlyTheFilesItListed) {
  ScriptRunner runner;
  const HostPaths paths = ShmWithAStaleSegment(runner);
  const std::string& shm = paths.shm_dir;
  runner.Write(runner.dir() + "/bin/find",
               "#!/bin/sh\n/usr/bin/find \"$@\"; r=$?\nfor a in \"$@\"; do case $a in '%i ') "
               "[ -e " +
                   runner.dir() + "/made ] || { : >" + runner.dir() + "/made; echo x >" + shm +
                   "/nccl-late; };; esac; done\nexit $r\n",
               0755);
  ShmOutput real;
  std::string out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(real.removed, std::vector<std::string>{"nccl-old"});
  EXPECT_TRUE(real.in_use.empty());
  EXPECT_TRUE(runner.Exists("made"));
  EXPECT_TRUE(runner.Exists("shm/nccl-late"));
  EXPECT_FALSE(runner.Exists("shm/nccl-old"));
}

// A walk of the holders that cannot run (an argument list too long on a
// host of ~100,000 processes: find exits 126) leaves every candidate in
// use: nothing is removed on a guess.
TEST(RemoteScriptTest, ShmCleanRemovesNothingWhenTheHoldersWalkFails) {
  for (const char* failing : {"*/maps", "*/task"}) {
    ScriptRunner runner;
    const HostPaths paths = ShmWithAStaleSegment(runner);
    runner.Write(runner.dir() + "/bin/find",
                 std::string("#!/bin/sh\nfor a in \"$@\"; do case $a in ") + failing +
                     ") echo 'find: Argument list too long' >&2; exit 126;; esac; done\n"
                     "exec /usr/bin/find \"$@\"\n",
                 0755);
    ShmOutput real;
    std::string out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths));
    ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
    EXPECT_TRUE(real.removed.empty()) << failing;
    EXPECT_EQ(real.in_use, std::vector<std::string>{"nccl-old"}) << failing;
    EXPECT_TRUE(runner.Exists("shm/nccl-old")) << failing;
  }
}

// A holder walk that cannot start (find or grep exiting 126: an argument
// list too long on a host of ~100,000 processes) is said ("blind"), never
// read as no holder; a walk that ran is not.
TEST(RemoteScriptTest, ScanSaysWhenTheHolderWalkCouldNotRun) {
  struct Row {
    const char* tool;
    const char* failing;
  };
  for (const Row& row : {Row{"find", "*/task"}, Row{"grep", "*/maps"}, Row{"", ""}}) {
    ScriptRunner runner;
    if (*row.tool != '\0') {
      runner.Write(
          runner.dir() + "/bin/" + row.tool,
          std::string("#!/bin/sh\nfor a in \"$@\"; do case $a in ") + row.failing +
              ") echo 'Argument list too long' >&2; exit 126;; esac; done\nexec /usr/bin/" +
              row.tool + " \"$@\"\n",
          0755);
    }
    std::string out = runner.Run(ScanScript(Request()));
    ScanOutput scan;
    ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
    EXPECT_EQ(scan.holder_walk_failed, *row.tool != '\0') << row.tool;
  }
}

// Under a scope only the selected files are candidates, each by inode and
// only while its owner is the uid given: the others are neither removed nor
// listed, and a selected file still in use is kept.
TEST(RemoteScriptTest, ShmCleanUnderAScopeRemovesOnlyTheSelected) {
  ScriptRunner runner;
  std::string shm = runner.dir() + "/shm";
  mkdir(shm.c_str(), 0755);
  HostPaths paths;
  paths.shm_dir = shm;
  const int uid = static_cast<int>(getuid());
  auto inode = [&](const std::string& name) {
    struct stat st;
    std::ofstream(shm + "/" + name) << "x";
    EXPECT_EQ(stat((shm + "/" + name).c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_ino);
  };
  const uint64_t ours = inode("nccl-ours\n@@end"), open_one = inode("nccl-open");
  const uint64_t other_uid = inode("nccl-other-uid");
  inode("nccl-tenant");
  const uint64_t no_pattern = inode("keep.db");
  int open_fd = open((shm + "/nccl-open").c_str(), O_RDONLY);
  ShmSelection selection;
  selection.all = false;
  selection.only = {{ours, uid}, {open_one, uid}, {other_uid, uid + 1}, {no_pattern, uid}};

  ShmOutput dry;
  std::string out = runner.Run(ShmCleanScript({"nccl-*"}, true, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &dry).ok()) << out;
  EXPECT_EQ(dry.removed, std::vector<std::string>{"nccl-ours\n@@end"});
  EXPECT_EQ(dry.in_use, std::vector<std::string>{"nccl-open"});

  ShmOutput real;
  out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_EQ(real.removed, std::vector<std::string>{"nccl-ours\n@@end"});
  EXPECT_EQ(real.in_use, std::vector<std::string>{"nccl-open"});
  EXPECT_TRUE(real.failed.empty());
  EXPECT_FALSE(runner.Exists("shm/nccl-ours\n@@end"));
  for (const char* kept : {"nccl-open", "nccl-other-uid", "nccl-tenant", "keep.db"}) {
    EXPECT_TRUE(runner.Exists("shm/" + std::string(kept))) << kept;
  }

  // Nothing selected: nothing is a candidate.
  selection.only.clear();
  out = runner.Run(ShmCleanScript({"nccl-*"}, false, paths, AuditRequest(), selection));
  ASSERT_TRUE(ParseShmOutput(out, &real).ok()) << out;
  EXPECT_TRUE(real.removed.empty() && real.in_use.empty() && real.failed.empty()) << out;
  EXPECT_TRUE(runner.Exists("shm/nccl-tenant"));
  close(open_fd);
}

}  // namespace
}  // namespace fleetreap
