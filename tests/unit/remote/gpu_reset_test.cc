// GpuResetScript run under /bin/sh with stand-in systemctl and nvidia-smi:
// the units stop, the GPUs reset only after a clean stop and an empty
// compute-process list, and the units start again on every path, the step's
// bound killing the script included (the guard). ParseGpuResetOutput reads
// what it printed.
#include "fleetreap/remote/gpu_reset.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/script_dir.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kUnits = {"nvidia-persistenced.service", "nvidia-dcgm.service"};

// A scratch directory whose stand-ins log each call ("CMD ARGS") to calls.
// systemctl: is-active prints the file "states" when there is one, else
// "inactive" for each unit after a stop and "active" after a start; stop
// exits with the number in "stop_rc". nvidia-smi: the compute-process query
// prints the file "apps"; a reset sleeps the seconds in "reset_sleep".
class ResetHost {
 public:
  ResetHost() {
    char tmpl[] = "/tmp/fleetreap-reset-XXXXXX";
    dir_ = mkdtemp(tmpl);
    mkdir((dir_ + "/bin").c_str(), 0755);
    Write("bin/systemctl",
          "#!/bin/sh\ncd " + dir_ +
              "\necho \"systemctl $*\" >> calls\n"
              "case $1 in\n"
              "stop) echo inactive > now; exit $(cat stop_rc 2>/dev/null || echo 0);;\n"
              "start) echo active > now;;\n"
              "is-active) if [ -f states ]; then cat states; else for u in $3 $4; do cat now; "
              "done; fi;;\n"
              "esac\n");
    Write("bin/nvidia-smi", "#!/bin/sh\ncd " + dir_ +
                                "\necho \"nvidia-smi $*\" >> calls\n"
                                "case $* in\n"
                                "*query-compute-apps*) cat apps 2>/dev/null; exit 0;;\n"
                                "*gpu-reset*) sleep $(cat reset_sleep 2>/dev/null || echo 0); "
                                "echo \"reset done\" >> calls; echo \"reset ok\";;\n"
                                "esac\n");
  }
  ~ResetHost() {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    chmod((dir_ + "/" + name).c_str(), 0755);
  }
  std::string Calls() const {
    std::ifstream in(dir_ + "/calls");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Waits up to "seconds" for "needle" in the calls.
  bool WaitForCall(const std::string& needle, int seconds) const {
    for (int i = 0; i < seconds * 10; ++i) {
      if (Calls().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }
  GpuResetReply Run(const std::vector<int>& gpus, const std::vector<std::string>& units) {
    GpuResetReply reply;
    std::string out = RunScriptIn(dir_, GpuResetScript(gpus, milliseconds(30000), units));
    EXPECT_TRUE(ParseGpuResetOutput(out, &reply).ok()) << out;
    return reply;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

TEST(GpuResetScriptTest, StopsResetsEachEmptyGpuAndStartsAgain) {
  ResetHost host;
  GpuResetReply reply = host.Run({1, 4}, kUnits);
  EXPECT_EQ(reply.guard_exit, 0);
  EXPECT_EQ(reply.stop_exit, 0);
  EXPECT_EQ(reply.after_stop, (std::vector<std::string>{"inactive", "inactive"}));
  ASSERT_EQ(reply.resets.size(), 2u);
  EXPECT_EQ(reply.resets[1].gpu, 4);
  EXPECT_EQ(reply.resets[1].exit_code, 0);
  EXPECT_EQ(reply.resets[1].message, "reset ok");
  EXPECT_EQ(reply.active, (std::vector<std::string>{"active", "active"}));
  const std::string units = " -- nvidia-persistenced.service nvidia-dcgm.service\n";
  EXPECT_EQ(host.Calls().substr(0, host.Calls().find("systemctl start")),
            "systemctl stop" + units + "systemctl is-active" + units +
                "nvidia-smi --query-compute-apps=pid --format=csv,noheader -i 1\n"
                "nvidia-smi --gpu-reset -i 1\nreset done\n"
                "nvidia-smi --query-compute-apps=pid --format=csv,noheader -i 4\n"
                "nvidia-smi --gpu-reset -i 4\nreset done\n");
}

TEST(GpuResetScriptTest, AFailedStopResetsNothingAndStartsTheUnits) {
  ResetHost host;
  host.Write("stop_rc", "1\n");
  GpuResetReply reply = host.Run({2}, kUnits);
  EXPECT_EQ(reply.stop_exit, 1);
  EXPECT_TRUE(reply.resets.empty());
  EXPECT_EQ(host.Calls().find("--gpu-reset"), std::string::npos);
  EXPECT_NE(host.Calls().find("systemctl start --"), std::string::npos);
  EXPECT_EQ(reply.active, (std::vector<std::string>{"active", "active"}));
}

TEST(GpuResetScriptTest, AUnitStillRunningAfterTheStopResetsNothing) {
  ResetHost host;
  host.Write("states", "inactive\nactive\n");
  GpuResetReply reply = host.Run({2}, kUnits);
  EXPECT_EQ(reply.stop_exit, 0);
  EXPECT_EQ(reply.after_stop, (std::vector<std::string>{"inactive", "active"}));
  EXPECT_TRUE(reply.resets.empty());
  EXPECT_EQ(host.Calls().find("--gpu-reset"), std::string::npos);
}

TEST(GpuResetScriptTest, AListedComputeProcessKeepsItsGpuFromTheReset) {
  ResetHost host;
  host.Write("apps", "4242\n");
  GpuResetReply reply = host.Run({3}, {});
  ASSERT_EQ(reply.resets.size(), 1u);
  EXPECT_EQ(reply.resets[0].gpu, 3);
  EXPECT_EQ(reply.resets[0].exit_code, -1);
  EXPECT_EQ(reply.resets[0].refused, "nvidia-smi lists a compute process on it (pid 4242)");
  EXPECT_EQ(host.Calls().find("--gpu-reset"), std::string::npos);
  // Without units: no guard, no systemctl.
  EXPECT_EQ(reply.guard_exit, -1);
  EXPECT_EQ(host.Calls().find("systemctl"), std::string::npos);
}

// The step's bound (timeout(1) TERMs, then KILLs, the whole process group)
// cuts the script during a reset: the guard, in a session of its own,
// starts the units again, once the reset (bounded on its own) has ended.
TEST(GpuResetScriptTest, TheGuardStartsTheUnitsWhenTheBoundKillsTheScript) {
  ResetHost host;
  host.Write("reset_sleep", "6\n");
  host.Write("script.sh", GpuResetScript({0}, milliseconds(30000), kUnits));
  std::string cmd = "cd '" + host.dir() + "' && PATH='" + host.dir() +
                    "/bin':/usr/bin:/bin timeout -k 1 4 /bin/sh script.sh >/dev/null 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_NE(host.Calls().find("nvidia-smi --gpu-reset -i 0"), std::string::npos);
  ASSERT_TRUE(host.WaitForCall("systemctl start --", 30)) << host.Calls();
  EXPECT_LT(host.Calls().find("reset done"), host.Calls().find("systemctl start --"));
  EXPECT_NE(host.Calls().find("systemctl start -- nvidia-persistenced.service "
                              "nvidia-dcgm.service"),
            std::string::npos);
}

TEST(GpuResetOutputTest, ReadsEveryRecord) {
  const std::string nul(1, '\0');
  GpuResetReply reply;
  ASSERT_TRUE(ParseGpuResetOutput("guard 0:" + nul + "stop 1:Failed to stop b" + nul +
                                      "stopped 3:inactive\nactive\n" + nul + "busy 2 9:No driver" +
                                      nul + "start 0:" + nul + "active 0:active\nactive\n" + nul +
                                      "end" + nul,
                                  &reply)
                  .ok());
  EXPECT_EQ(reply.guard_exit, 0);
  EXPECT_EQ(reply.stop_exit, 1);
  EXPECT_EQ(reply.stop_text, "Failed to stop b");
  EXPECT_EQ(reply.after_stop, (std::vector<std::string>{"inactive", "active"}));
  ASSERT_EQ(reply.resets.size(), 1u);
  EXPECT_EQ(reply.resets[0].refused,
            "nvidia-smi could not list its compute processes (exit 9: No driver)");
  EXPECT_EQ(reply.active.size(), 2u);
}

TEST(GpuResetScriptTest, GpuResetIsBoundedPerGpu) {
  std::string script = GpuResetScript({3, 5}, milliseconds(30000));
  EXPECT_NE(script.find("timeout -k 2 30 nvidia-smi --gpu-reset -i 3 "), std::string::npos);
  EXPECT_NE(script.find("timeout -k 2 30 nvidia-smi --gpu-reset -i 5 "), std::string::npos);
}

}  // namespace
}  // namespace fleetreap
