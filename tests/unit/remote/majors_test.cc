// The NVIDIA character majors a scan reports ("majors"): read from
// /proc/devices by the walk's perl where the host has it, else by the
// shell's nvm, by the same rules (the character section only, a number and a
// name of nvidia and the name characters). Both ways must report the same
// majors for the same file, however it is spaced or spelled. The file is a
// crafted one, bind-mounted over /proc/devices in a mount namespace of the
// scan's own (unshare -m): nothing outside the test's scratch directory
// changes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

// The scan's majors, with perl or without; false where the scan could not
// run in a mount namespace of its own.
bool MajorsOf(bool perl, const std::string& devices, std::map<int, std::string>* majors) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/devices", devices, 0644);
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  paths.driver_dir = runner.dir() + "/gpus";
  ScanRequest request;
  request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
  std::string script = "mount --bind '" + runner.dir() + "/devices' /proc/devices || exit 3\n" +
                       ScanScript(request, paths);
  if (!perl) script = WithoutPerl(script);
  runner.Write(runner.dir() + "/script.sh", script, 0644);
  const std::string cmd = "cd '" + runner.dir() + "' && PATH='" + runner.dir() +
                          "/bin':/usr/bin:/bin unshare -m --propagation private /bin/sh "
                          "script.sh 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return false;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return false;
  ScanOutput scan;
  Status status = ParseScanOutput(out, &scan);
  EXPECT_TRUE(status.ok()) << status.ToString();
  *majors = scan.majors;
  return status.ok();
}

TEST(MajorsTest, PerlAndTheShellReadTheSameMajors) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a mount namespace)";
  const std::string devices =
      "Character devices:\n"
      "  1 mem\n"
      "195 nvidia-frontend\n"
      "195 nvidia\n"
      " 508 nvidia-uvm\n"
      "509 nvidia nvswitch\n"
      "510 nvidia-caps \n"
      "511 Nvidia-x\n"
      "0512 nvidia-modeset\n"
      "abc nvidia-bad\n"
      "513\tnvidia-tab\n"
      "514 nvidia_under\n"
      "\n"
      "Block devices:\n"
      "196 nvidia-block\n"
      "515 nvidia-last";
  std::map<int, std::string> with_perl, without_perl;
  if (!MajorsOf(true, devices, &with_perl) || !MajorsOf(false, devices, &without_perl)) {
    GTEST_SKIP() << "no mount namespace here";
  }
  EXPECT_EQ(with_perl, without_perl);
  EXPECT_EQ(with_perl, (std::map<int, std::string>{{195, "nvidia"},
                                                   {508, "nvidia-uvm"},
                                                   {510, "nvidia-caps"},
                                                   {512, "nvidia-modeset"},
                                                   {513, "nvidia-tab"}}));
}

}  // namespace
}  // namespace fleetreap
