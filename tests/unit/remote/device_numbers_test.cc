// The device numbers a scan reports: the NVIDIA character majors
// ("majors", from /proc/devices) and each GPU's minor ("minor", from the
// driver's information files), read by the walk's perl where the host has
// it, else by the shell (nvm, the minors' loop), by the same rules. Both ways
// must report the same numbers for the same files, however they are spaced
// or spelled. /proc/devices is a crafted file, bind-mounted over it in a
// mount namespace of the scan's own (unshare -m); the driver's folder is the
// test's own: nothing outside the test's scratch directory changes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

// The scan, with perl or without, its driver folder's files written first
// (path under gpus/, text); false where the scan could not run in a mount
// namespace of its own.
bool ScanWith(bool perl, const std::string& devices,
              const std::vector<std::pair<std::string, std::string>>& driver, ScanOutput* scan) {
  ScriptRunner runner;
  runner.Write(runner.dir() + "/devices", devices, 0644);
  for (const auto& [path, text] : driver) {
    std::string dir = runner.dir() + "/gpus/" + path.substr(0, path.find('/'));
    runner.Write(runner.dir() + "/gpus/.keep", "", 0644);
    mkdir(dir.c_str(), 0755);
    runner.Write(runner.dir() + "/gpus/" + path, text, 0644);
  }
  HostPaths paths;
  paths.dev_dir = runner.dir() + "/dev";
  paths.driver_dir = runner.dir() + "/gpus";
  ScanRequest request;
  request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
  std::string script = "mount --bind '" + runner.dir() + "/devices' /proc/devices || exit 3\n" +
                       ScanScript(request, paths);
  if (!perl) script = WithoutPerl(script);
  std::string out;
  if (!RunInOwnMountNamespace(runner.dir(), script, &out)) return false;
  Status status = ParseScanOutput(out, scan);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return status.ok();
}

TEST(DeviceNumbersTest, PerlAndTheShellReadTheSameMajors) {
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
  ScanOutput perl, shell;
  if (!ScanWith(true, devices, {}, &perl) || !ScanWith(false, devices, {}, &shell)) {
    GTEST_SKIP() << "no mount namespace here";
  }
  EXPECT_EQ(perl.majors, shell.majors);
  EXPECT_EQ(perl.majors, (std::map<int, std::string>{{195, "nvidia"},
                                                     {508, "nvidia-uvm"},
                                                     {510, "nvidia-caps"},
                                                     {512, "nvidia-modeset"},
                                                     {513, "nvidia-tab"}}));
}

TEST(DeviceNumbersTest, PerlAndTheShellReadTheSameMinors) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a mount namespace)";
  const std::string devices = "Character devices:\n195 nvidia\n";
  const std::vector<std::pair<std::string, std::string>> driver = {
      {"0000:19:00.0/information",
       "Model: \t\t NVIDIA H200\nBus Location: \t 0000:19:00.0\nDevice Minor: \t 3\n"
       "Device Minor: 9\n"},
      {"0000:3b:00.0/information", "Device  Minor: 4\nDevice Minor:\t5 6\n"},
      {"0000:4c:00.0/information", "Device Minor: x7\nDevice Minor: 8\n"},
      {"0000:5d:00.0/information", "Device Minor: 1"},
      {"0000 6e:00.0/information", "Device Minor:2\n"},
      {".0000:7f:00.0/information", "Device Minor: 6\n"},
      {"0000:8a:00.0/other", "Device Minor: 7\n"},
      {"0000:9b:00.0/information", " Device Minor: 11\nDevice Minor::12\nDevice Minor: 13:\n"}};
  ScanOutput perl, shell;
  if (!ScanWith(true, devices, driver, &perl) || !ScanWith(false, devices, driver, &shell)) {
    GTEST_SKIP() << "no mount namespace here";
  }
  EXPECT_EQ(perl.minors, shell.minors);
  EXPECT_EQ(perl.minors, (std::map<std::string, int>{
                             {"0000:19:00.0", 3}, {"0000:3b:00.0", 5}, {"0000 6e:00.0", 2}}));
}

}  // namespace
}  // namespace fleetreap
