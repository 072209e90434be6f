// The units that own the holders, read from their cgroup files: by the
// details' perl where the host has it (PLD's first line), else by the scan's
// shell loop. Both ways must ask systemctl show for the same units, in the
// same order, whatever the cgroup paths hold. The holder's cgroup file is a
// crafted one, bind-mounted over /proc/PID/cgroup in a mount namespace of the
// scan's own (unshare -m): nothing outside the test's scratch directory and
// its own child changes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "support/holder_process.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

class HolderUnitsTest : public ::testing::TestWithParam<bool> {
 protected:
  void TearDown() override {
    if (holder_ > 0) {
      kill(holder_, SIGKILL);
      waitpid(holder_, nullptr, 0);
    }
  }

  // The "show" call's arguments after "--", one per line; "" when the scan
  // could not run in its own mount namespace.
  std::string ShowArguments(const std::string& cgroup_text) {
    runner_.Write(runner_.dir() + "/dev/nvidia0", "", 0644);
    runner_.Write(runner_.dir() + "/cgroup", cgroup_text, 0644);
    holder_ = ForkHolder(runner_.dir() + "/dev/nvidia0");
    usleep(100 * 1000);
    HostPaths paths;
    paths.dev_dir = runner_.dir() + "/dev";
    paths.driver_dir = runner_.dir() + "/gpus";
    ScanRequest request;
    request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
    std::string script = "mount --bind '" + runner_.dir() + "/cgroup' /proc/" +
                         std::to_string(holder_) + "/cgroup || exit 3\n" +
                         ScanScript(request, paths);
    if (!GetParam()) script = WithoutPerl(script);
    std::string out;
    if (!RunInOwnMountNamespace(runner_.dir(), script, &out)) return "";
    std::string args = runner_.Args();
    const size_t at = args.find("--\n");
    return at == std::string::npos ? "(no show)" : args.substr(at + 3);
  }

  ScriptRunner runner_;
  pid_t holder_ = -1;
};

TEST_P(HolderUnitsTest, BothWaysAskForTheSameUnitsInTheSameOrder) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a mount namespace)";
  const std::string cgroup =
      "12:name=systemd:/system.slice/a.service\n"
      "0::/system.slice/odd name.service/b.service\n"
      "0::/user.slice/x.service/ c.service \n"
      "1:cpu:/d.service\n"
      "  0::/e.service/f.service/e.service\n"
      "0::/$(id).service/ok@1.service//g.service/\n"
      "0::/h.slice/a.service/.service/\\\\.service\n"
      "0::/last.service";
  const std::string args = ShowArguments(cgroup);
  if (args.empty()) GTEST_SKIP() << "no mount namespace here";
  EXPECT_EQ(args,
            "a.service\nb.service\nx.service\ne.service\nf.service\nok@1.service\n"
            "g.service\n");
}

TEST_P(HolderUnitsTest, NoUnitNoShow) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a mount namespace)";
  const std::string args = ShowArguments("0::/\n9:name=systemd:/user.slice\n");
  if (args.empty()) GTEST_SKIP() << "no mount namespace here";
  EXPECT_EQ(args, "(no show)");
}

INSTANTIATE_TEST_SUITE_P(PerlAndShell, HolderUnitsTest, ::testing::Bool());

}  // namespace
}  // namespace fleetreap
