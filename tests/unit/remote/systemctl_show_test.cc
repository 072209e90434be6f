// ActiveUnitsShown: the playbook's active units from the scan's one
// `systemctl show` (its units as globs, and the holders' units), and
// ReadScan's units read from the same blocks.
#include "fleetreap/remote/systemctl_show.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/remote/scan.h"
#include "fleetreap/remote/scan_output.h"

namespace fleetreap {
namespace {

// A block as systemd prints it for -p Id,ActiveState,Restart,...: the
// service properties first, then the unit's.
std::string Block(const std::string& id, const std::string& state,
                  const std::string& restart = "no") {
  return "Restart=" + restart + "\nRestartUSec=100ms\nMainPID=0\nControlGroup=/system.slice/" + id +
         "\nKillMode=control-group\nId=" + id + "\nActiveState=" + state + "\n";
}

std::string Blocks(const std::vector<std::string>& blocks) {
  std::string text;
  for (const std::string& block : blocks) text += (text.empty() ? "" : "\n") + block;
  return text;
}

TEST(SystemctlShowTest, ActiveUnitsShown) {
  struct Row {
    const char* name;
    std::vector<std::string> patterns;
    std::string show;
    std::vector<std::string> active;
  };
  const std::vector<Row> rows = {
      {"a glob, its active units",
       {"vllm*.service"},
       Blocks({Block("vllm.service", "active"), Block("vllm-embed.service", "active")}),
       {"vllm-embed.service", "vllm.service"}},
      {"an exact name",
       {"trainer.service"},
       Block("trainer.service", "active"),
       {"trainer.service"}},
      {"a name not found, shown all the same",
       {"gone.service"},
       "Restart=no\nMainPID=0\nControlGroup=\nKillMode=control-group\nId=gone.service\n"
       "ActiveState=inactive\n",
       {}},
      {"inactive, failed, activating, deactivating",
       {"vllm*"},
       Blocks({Block("vllm-a.service", "inactive"), Block("vllm-b.service", "failed"),
               Block("vllm-c.service", "activating", "always"),
               Block("vllm-d.service", "deactivating")}),
       {}},
      {"a holder's unit the patterns do not name",
       {"vllm*.service"},
       Blocks({Block("slurmd.service", "active"), Block("vllm.service", "active")}),
       {"vllm.service"}},
      {"a pattern that matches a holder's unit too, shown twice",
       {"vllm*.service"},
       Blocks({Block("vllm.service", "active"), Block("vllm.service", "active")}),
       {"vllm.service"}},
      {"a name without its suffix names no unit, as in list-units",
       {"vllm"},
       Block("vllm.service", "active"),
       {}},
      {"an alias: the block's Id is the unit's own name",
       {"inference.service"},
       Block("vllm.service", "active"),
       {}},
      {"no escapes: a backslash is itself",
       {"a\\x2db*"},
       Blocks({Block("a\\x2db.service", "active"), Block("a-b.service", "active")}),
       {"a\\x2db.service"}},
      {"hostile Ids match no pattern",
       {"vllm*.service"},
       Blocks({Block("x; touch pwned.service", "active"), Block("$(touch p).service", "active")}),
       {}},
      {"a hostile pattern matches as fnmatch does, nothing runs",
       {"$(touch p)*", "x.service && touch pwned7"},
       Blocks({Block("$(touch p).service", "active"), Block("x.service", "active")}),
       {"$(touch p).service"}},
      {"list-units' order: by type, then by name, case ignored",
       {"*"},
       Blocks({Block("b.timer", "active"), Block("B.service", "active"),
               Block("a.service", "active"), Block("c.mount", "active")}),
       {"c.mount", "a.service", "B.service", "b.timer"}},
      {"no patterns, no units", {}, Block("vllm.service", "active"), {}},
      {"a block without an Id", {"*"}, "ActiveState=active\nRestart=no\n", {}},
      {"nothing shown", {"vllm*"}, "", {}},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(ActiveUnitsShown(row.show, row.patterns), row.active) << row.name;
  }
}

// The units read: the holders' units whatever their state, and the
// playbook's active ones with plain names; the playbook's other matching
// units (failed, activating) are left out, as is every unit of a quick scan.
TEST(SystemctlShowTest, ReadScanReadsTheHoldersAndTheActiveUnits) {
  ScanOutput scan;
  scan.shell_pid = 40;
  scan.holders = true;
  scan.pid_namespace = "pid:[4026531836]";
  scan.owner_units = {"slurmd.service", "vllm-b.service"};
  scan.show_exit = 0;
  scan.show_out = Blocks({Block("slurmd.service", "active"), Block("vllm-b.service", "failed"),
                          Block("vllm-a.service", "active", "always"),
                          Block("vllm-c.service", "activating", "always"),
                          Block("vllm\\x2dd.service", "active")});
  const std::vector<std::string> units = {"vllm*"};
  HostSnapshot snapshot;
  ASSERT_TRUE(ReadScan(scan, units, &snapshot).ok());
  EXPECT_EQ(snapshot.active_units,
            (std::vector<std::string>{"vllm-a.service", "vllm\\x2dd.service"}));
  std::vector<std::string> read;
  for (const auto& [name, props] : snapshot.units) read.push_back(name);
  EXPECT_EQ(read, (std::vector<std::string>{"slurmd.service", "vllm-a.service", "vllm-b.service"}));
  EXPECT_EQ(snapshot.units.at("vllm-a.service").restart, "always");

  scan.holders = false;  // a quick scan learns the active units, reads no unit
  scan.owner_units.clear();
  ASSERT_TRUE(ReadScan(scan, units, &snapshot).ok());
  EXPECT_EQ(snapshot.active_units,
            (std::vector<std::string>{"vllm-a.service", "vllm\\x2dd.service"}));
  EXPECT_TRUE(snapshot.units.empty());

  for (int exit_code : {-1, 1, 127}) {  // not run, failed, no systemctl
    scan.show_exit = exit_code;
    ASSERT_TRUE(ReadScan(scan, units, &snapshot).ok());
    EXPECT_TRUE(snapshot.active_units.empty()) << exit_code;
    EXPECT_TRUE(snapshot.units.empty()) << exit_code;
  }
}

}  // namespace
}  // namespace fleetreap
