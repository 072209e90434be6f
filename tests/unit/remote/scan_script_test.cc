#include "fleetreap/remote/scan_script.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "fleetreap/base/text.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"
#include "support/script_runner.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(ScanScriptTest, HostileValuesInScanAndShmDoNothing) {
  ScriptRunner runner;
  std::string out = runner.Run(ScanScript(Request(kHostile)));
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
  // Each reaches systemctl show whole, one argument, as a glob that matches
  // only itself (its last character in brackets).
  std::string args = runner.Args();
  for (const std::string& unit : kHostile) {
    const std::string glob = unit.substr(0, unit.size() - 1) + "[" + unit.back() + "]";
    EXPECT_NE(args.find("\n" + glob + "\n"), std::string::npos) << unit;
  }
  EXPECT_EQ(args.rfind("show\n", 0), 0u) << args;
  HostPaths paths;
  paths.shm_dir = runner.dir();
  runner.Run(ShmCleanScript(kHostile, /*dry_run=*/true, paths));
  for (int i = 1; i <= 7; ++i) {
    EXPECT_FALSE(runner.Exists("pwned" + std::to_string(i))) << i;
  }
}

TEST(ScanScriptTest, ScanReportsSessionAndNvidiaSmiFailure) {
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
  // No units: systemctl is asked for none (for the holders' units only,
  // where this test runs in a service).
  EXPECT_EQ(runner.Args().find('['), std::string::npos);
  EXPECT_EQ(runner.Args().find("list-units"), std::string::npos);
}

TEST(ScanScriptTest, ScanAsksAgainWithoutTheRecoveryFieldWhenRefused) {
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
TEST(ScanScriptTest, ScanRunsTheAppsQueryBesideTheGpuQuery) {
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
TEST(ScanScriptTest, ScanKeepsTheAppsQuerysFileBounded) {
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

TEST(ScanScriptTest, ScanLeavesOutEachFieldTheDriverRefuses) {
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
TEST(ScanScriptTest, ScanReadsTheReadinessStandIns) {
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

// Every script the host runs: no nvidia-smi process query asks for a field
// a user controls (real nvidia-smi prints argv[0]'s newlines raw in CSV).
TEST(ScanScriptTest, NoQueryAsksForAUserField) {
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

TEST(ScanScriptTest, ScanListsChildrenOfWatchedParentsAfterTheSignalTime) {
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

// A holder walk that cannot start (find or grep exiting 126: an argument
// list too long on a host of ~100,000 processes) is said ("blind"), never
// read as no holder; a walk that ran is not. find and grep are the walk of
// a host without perl; where perl runs the walk, a perl that dies or prints
// nothing is blind the same way.
TEST(ScanScriptTest, ScanSaysWhenTheHolderWalkCouldNotRun) {
  struct Row {
    const char* tool;
    const char* failing;
    bool perl;
  };
  for (const Row& row : {Row{"find", "*/task", false}, Row{"grep", "*/maps", false},
                         Row{"", "", false}, Row{"", "", true}, Row{"perl", "kill -9 $$", true},
                         Row{"perl", "exit 0", true}, Row{"perl", "echo H; exit 3", true}}) {
    ScriptRunner runner;
    if (std::string(row.tool) == "perl") {
      runner.Write(runner.dir() + "/bin/perl", std::string("#!/bin/sh\n") + row.failing + "\n",
                   0755);
    } else if (*row.tool != '\0') {
      runner.Write(
          runner.dir() + "/bin/" + row.tool,
          std::string("#!/bin/sh\nfor a in \"$@\"; do case $a in ") + row.failing +
              ") echo 'Argument list too long' >&2; exit 126;; esac; done\nexec /usr/bin/" +
              row.tool + " \"$@\"\n",
          0755);
    }
    std::string script = ScanScript(Request());
    std::string out = runner.Run(row.perl ? script : WithoutPerl(script));
    ScanOutput scan;
    ASSERT_TRUE(ParseScanOutput(out, &scan).ok()) << out;
    EXPECT_EQ(scan.holder_walk_failed, *row.tool != '\0') << row.tool << " " << row.failing;
  }
}

}  // namespace
}  // namespace fleetreap
