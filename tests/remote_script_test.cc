#include "fleetreap/remote_script.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

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
    Write(dir_ + "/bin/systemctl",
          "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> " +
              dir_ + "/args\nexit 0\n",
          0755);
  }
  ~ScriptRunner() {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {}
  }
  void Write(const std::string& path, const std::string& text, int mode) {
    std::string parent = path.substr(0, path.rfind('/'));
    mkdir(parent.c_str(), 0755);
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
  }
  // Runs "script" with /bin/sh in the scratch directory; returns stdout.
  std::string Run(const std::string& script) {
    Write(dir_ + "/script.sh", script, 0644);
    std::string cmd = "cd '" + dir_ + "' && PATH='" + dir_ +
                      "/bin':/usr/bin:/bin /bin/sh script.sh 2>/dev/null";
    std::string out;
    FILE* pipe = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    pclose(pipe);
    return out;
  }
  std::string Args() {
    std::ifstream in(dir_ + "/args");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  bool Exists(const std::string& name) {
    return access((dir_ + "/" + name).c_str(), F_OK) == 0;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

const std::vector<std::string> kHostile = {
    "a'; touch pwned1; echo '",
    "$(touch pwned2)",
    "`touch pwned3`",
    "x\ntouch pwned4",
    "x; touch pwned5",
    "\"; touch pwned6; \"",
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

TEST(RemoteScriptTest, HostileValuesInScanAndShmDoNothing) {
  ScriptRunner runner;
  std::string out = runner.Run(ScanScript(kHostile, milliseconds(2000)));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  std::string args = runner.Args();
  for (const std::string& unit : kHostile) {
    EXPECT_NE(args.find("\n" + unit + "\n"), std::string::npos) << unit;
  }
  runner.Run(ShmCleanScript(kHostile, /*dry_run=*/true));
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
  std::string out = runner.Run(ScanScript({}, milliseconds(2000)));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  EXPECT_GT(scan.shell_pid, 1);
  EXPECT_FALSE(scan.ancestors.empty());
  EXPECT_EQ(scan.nvidia_smi_exit, 9);
  EXPECT_EQ(scan.nvidia_smi_out,
            "NVIDIA-SMI has failed because it couldn't communicate with the "
            "NVIDIA driver.\n");
  EXPECT_TRUE(scan.active_units.empty());
  EXPECT_EQ(runner.Args(), "");  // no units: systemctl is not asked
}

TEST(RemoteScriptTest, SignalNeverHitsAReusedPid) {
  // Our own PID with a start time that is not its own stands for a PID that
  // was reused between scan and kill: it must be reported gone, not signalled.
  ScriptRunner runner;
  std::vector<Target> targets = {{static_cast<int>(getpid()), 1},
                                 {999999999, 5}};
  std::string out = runner.Run(
      SignalScript("KILL", targets, milliseconds(300), milliseconds(100)));
  SignalOutput result;
  ASSERT_TRUE(ParseSignalOutput(out, &result).ok()) << out;
  EXPECT_EQ(result.gone, (std::vector<int>{static_cast<int>(getpid()), 999999999}));
  EXPECT_TRUE(result.sent.empty());
  EXPECT_TRUE(result.left.empty());
}

TEST(RemoteScriptTest, ScanListsChildrenOfWatchedParentsAfterTheSignalTime) {
  // The scan's shell is itself a child of the shell the runner starts; the
  // signal script's "now" is its own start time. Watching the runner's
  // shell (our child) lists the scan's shell with a start time at or after
  // that of an earlier signal script.
  ScriptRunner runner;
  SignalOutput sig;
  ASSERT_TRUE(ParseSignalOutput(runner.Run(SignalScript("TERM", {}, milliseconds(0),
                                                        milliseconds(100))),
                                &sig).ok());
  EXPECT_GT(sig.now, 0u);
  std::string script = ScanScript({}, milliseconds(2000), true, {static_cast<int>(getpid())});
  std::string out = runner.Run(script);
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

TEST(RemoteScriptTest, ShmCleanRemovesOnlyUnusedMatches) {
  // Not run against /dev/shm: the script is parsed only; the integration
  // tests run it inside simulated hosts.
  std::string script = ShmCleanScript({"nccl-*", "psm_*"}, false);
  EXPECT_NE(script.find("p='nccl-*'"), std::string::npos);
  EXPECT_NE(script.find("rm -f -- \"$n\""), std::string::npos);
  EXPECT_EQ(ShmCleanScript({"nccl-*"}, true).find("rm "), std::string::npos);
}

TEST(RemoteScriptTest, Parsers) {
  SignalOutput sig;
  ASSERT_TRUE(ParseSignalOutput("sent 10\ngone 11\nfailed 12\nleft 10 D\n@@end\n",
                                &sig).ok());
  EXPECT_EQ(sig.sent, std::vector<int>{10});
  EXPECT_EQ(sig.gone, std::vector<int>{11});
  EXPECT_EQ(sig.failed, std::vector<int>{12});
  ASSERT_EQ(sig.left.size(), 1u);
  EXPECT_EQ(sig.left[0].second, 'D');
  EXPECT_EQ(ParseSignalOutput("sent 10\n", &sig).message(),
            "signal: output is truncated (no @@end line)");
  EXPECT_EQ(ParseSignalOutput("boom\n@@end\n", &sig).kind(), ErrorKind::kParse);
  ASSERT_TRUE(ParseSignalOutput("now 123456789\nsent 10\n@@end\n", &sig).ok());
  EXPECT_EQ(sig.now, 123456789u);
  EXPECT_EQ(ParseSignalOutput("now x1\n@@end\n", &sig).message(),
            "signal: unexpected line \"now x1\"");
  EXPECT_EQ(ParseSignalOutput("sent 99999999999\n@@end\n", &sig).kind(), ErrorKind::kParse);

  ShmOutput shm;
  ASSERT_TRUE(ParseShmOutput("removed nccl-AbC123\ninuse psm_1\n@@end\n", &shm).ok());
  EXPECT_EQ(shm.removed, std::vector<std::string>{"nccl-AbC123"});
  EXPECT_EQ(shm.in_use, std::vector<std::string>{"psm_1"});

  std::vector<GpuReset> resets;
  ASSERT_TRUE(ParseGpuResetOutput(
                  "reset 3 255\n| GPU 00000000:0B:00.0 is currently in use by "
                  "another process.\n|\nreset 4 0\n| GPU reset ok\n@@end\n",
                  &resets).ok());
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(resets[0].gpu, 3);
  EXPECT_EQ(resets[0].exit_code, 255);
  EXPECT_EQ(resets[0].message,
            "GPU 00000000:0B:00.0 is currently in use by another process.");
  EXPECT_EQ(resets[1].exit_code, 0);

  ScanOutput scan;
  EXPECT_EQ(ParseScanOutput("@@session\n12 11\n@@units\n", &scan).message(),
            "scan: output is truncated (no @@end line)");
  ASSERT_TRUE(ParseScanOutput("@@session\n12 11 5\n@@units\nvllm.service\n"
                              "@@nvsmi-err\n\n@@nvsmi-out\n0, 0\n@@nvsmi-rc 0\n"
                              "@@holders\nend\n@@end\n",
                              &scan).ok());
  EXPECT_EQ(scan.shell_pid, 12);
  EXPECT_EQ(scan.ancestors, (std::vector<int>{11, 5}));
  EXPECT_EQ(scan.active_units, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(scan.nvidia_smi_err, "");
  EXPECT_EQ(scan.nvidia_smi_out, "0, 0\n");
  EXPECT_EQ(scan.holder_scan, "end\n");
  EXPECT_TRUE(scan.children.empty());

  ASSERT_TRUE(ParseScanOutput("@@session\n12\n@@nvsmi-rc 0\n@@children\n"
                              "425 0 0 supervisor.py\n425 811 3456 python3 -u w.py\n@@end\n",
                              &scan).ok());
  ASSERT_EQ(scan.parents.size(), 1u);
  EXPECT_EQ(scan.parents[0].comm, "supervisor.py");
  ASSERT_EQ(scan.children.size(), 1u);
  EXPECT_EQ(scan.children[0].parent, 425);
  EXPECT_EQ(scan.children[0].pid, 811);
  EXPECT_EQ(scan.children[0].start_time, 3456u);
  EXPECT_EQ(scan.children[0].comm, "python3 -u w.py");
  EXPECT_EQ(ParseScanOutput("@@session\n12\n@@nvsmi-rc 0\n@@children\n425 811\n@@end\n",
                            &scan).message(),
            "scan: unexpected line \"425 811\"");
}

}  // namespace
}  // namespace fleetreap
