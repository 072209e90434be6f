// ParseScanOutput: the scan's records into a ScanOutput, exactly its
// grammar. The real scan runs under /bin/sh in remote_script_test.cc and
// proc_scan_test.cc; the reading into a HostSnapshot is scan_test.cc.
#include "fleetreap/remote/scan_output.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

std::string Nul(const std::string& text) { return text + '\0'; }

const std::string& ScanHead() {
  static const std::string head =
      Nul("scan 1") + Nul("session 12 11 5") + Nul("gpu 0:index, memory.used\n0, 0");
  return head;
}

TEST(ScanOutputTest, QuickScan) {
  ScanOutput scan;
  const std::string& scan_head = ScanHead();
  EXPECT_EQ(ParseScanOutput(scan_head, &scan).ToString(),
            "parse: scan output: expected \"apps RC:TEXT\", got the end");
  const std::string show = "Id=vllm.service\nActiveState=active";
  ASSERT_TRUE(
      ParseScanOutput(
          scan_head + Nul("apps -") + Nul("table -") + Nul("show 0:" + show) + Nul("end"), &scan)
          .ok());
  EXPECT_EQ(scan.shell_pid, 12);
  EXPECT_EQ(scan.ancestors, (std::vector<int>{11, 5}));
  EXPECT_EQ(scan.show_exit, 0);
  EXPECT_EQ(scan.show_out, show);
  EXPECT_EQ(scan.nvidia_smi_out, "index, memory.used\n0, 0");
  EXPECT_FALSE(scan.holders);
}

// The scan's clock (its shell's start time) follows the session; a scan
// without it (an older host script) reads as 0, unknown.
TEST(ScanOutputTest, ClockAfterTheSession) {
  ScanOutput scan;
  const std::string rest =
      Nul("gpu 0:") + Nul("apps -") + Nul("table -") + Nul("show -") + Nul("end");
  ASSERT_TRUE(
      ParseScanOutput(Nul("scan 1") + Nul("session 12") + Nul("clock 99812") + rest, &scan).ok());
  EXPECT_EQ(scan.clock, 99812u);
  ASSERT_TRUE(ParseScanOutput(Nul("scan 1") + Nul("session 12") + rest, &scan).ok());
  EXPECT_EQ(scan.clock, 0u);
  EXPECT_EQ(
      ParseScanOutput(Nul("scan 1") + Nul("session 12") + Nul("clock x") + rest, &scan).ToString(),
      "parse: scan output record 3: bad \"clock x\"");
  EXPECT_FALSE(
      ParseScanOutput(Nul("scan 1") + Nul("session 12") + Nul("clock 1 2") + rest, &scan).ok());
}

TEST(ScanOutputTest, HolderScan) {
  ScanOutput scan;
  const std::string& scan_head = ScanHead();
  std::string stat = "811 (python3\n@@end) S 425 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3456 0 0";
  ASSERT_TRUE(
      ParseScanOutput(
          scan_head + Nul("apps 0:pid\n811") + Nul("table -") +
              Nul("majors 195 nvidia 238 nvidia-uvm") + Nul("fd 811 4 195 3") +
              Nul("fdp 811 5:/dev/nvidia\n3") + Nul("minor 3:0000:1a:00.0") + Nul("kids 425 811") +
              Nul("/proc/425/stat:425 (supervisor.py) S 1 1 1 0 -1 0 0 0 0 "
                  "0 0 0 0 0 20 0 1 0 100 0 0") +
              Nul("/proc/811/stat:" + stat) + Nul("/proc/811/cmdline:a") +
              Nul("/proc/811/cmdline:") + Nul("/proc/811/cmdline:b\nc") +
              Nul("/etc/passwd:root:x:0:0::/:/bin/sh\n") + Nul("exe /proc/811:/usr/bin/python3\n") +
              Nul("exs /proc/811 0 755") + Nul("/proc/811/cgroup:0::/system.slice/vllm.service\n") +
              Nul("pidns:pid:[4026531836]") + Nul("pidf 0:811\n") +
              Nul("pidmark:pid:[4026532000]") + Nul("selfcg:0::/system.slice/ssh.service\n") +
              Nul("owners: vllm.service") + Nul("show 0:Id=vllm.service\nRestart=always\n") +
              Nul("end"),
          &scan)
          .ok());
  EXPECT_EQ(scan.processes.at(811).exe_uid, 0);
  EXPECT_EQ(scan.processes.at(811).exe_mode, 0755);
  EXPECT_EQ(scan.processes.at(811).cgroup, "0::/system.slice/vllm.service\n");
  EXPECT_EQ(scan.pid_namespace, "pid:[4026531836]");
  EXPECT_EQ(scan.pid_files.at(0), "811\n");
  EXPECT_TRUE(scan.has_pid_marker);
  EXPECT_EQ(scan.pid_marker, "pid:[4026532000]");
  EXPECT_EQ(scan.self_cgroup, "0::/system.slice/ssh.service\n");
  EXPECT_EQ(scan.owner_units, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(scan.show_exit, 0);
  EXPECT_EQ(scan.majors.at(238), "nvidia-uvm");
  ASSERT_EQ(scan.fds.size(), 2u);
  EXPECT_EQ(scan.fds[1].path, "/dev/nvidia\n3");
  EXPECT_EQ(scan.minors.at("0000:1a:00.0"), 3);
  EXPECT_EQ(scan.processes.at(811).argv, (std::vector<std::string>{"a", "", "b\nc"}));
  EXPECT_EQ(scan.processes.at(811).exe, "/usr/bin/python3\n");
  ASSERT_EQ(scan.parents.size(), 1u);
  EXPECT_EQ(scan.parents[0].comm, "supervisor.py");
  ASSERT_EQ(scan.children.size(), 1u);
  EXPECT_EQ(scan.children[0].pid, 811);
  EXPECT_EQ(scan.children[0].start_time, 3456u);
  EXPECT_EQ(scan.children[0].comm, "python3?@@end");
}

// "ctl N": control-only holders left out past the cap; "kids P -": a
// watched parent whose children the kernel does not list.
TEST(ScanOutputTest, LeftOutHoldersAndUnlistedChildren) {
  const std::string head =
      ScanHead() + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("fdp 811 5:/dev/nvidia3");
  const std::string tail = Nul("selfcg:") + Nul("owners:") + Nul("show -") + Nul("end");
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(head + Nul("ctl 2500") + Nul("minor 3:0000:1a:00.0") +
                                  Nul("kids 425 -") + Nul("kids 426 900 901") + tail,
                              &scan)
                  .ok());
  EXPECT_EQ(scan.control_only_left_out, 2500);
  EXPECT_EQ(scan.children_unlisted, std::vector<int>{425});
  EXPECT_FALSE(scan.holder_walk_failed);
  ASSERT_TRUE(ParseScanOutput(head + Nul("ctl 3") + Nul("blind") + tail, &scan).ok());
  EXPECT_TRUE(scan.holder_walk_failed);
  ASSERT_TRUE(ParseScanOutput(head + Nul("kids 425") + tail, &scan).ok());
  EXPECT_FALSE(scan.holder_walk_failed);
  EXPECT_EQ(scan.control_only_left_out, 0);  // none left out: no record
  EXPECT_TRUE(scan.children_unlisted.empty());
  struct Bad {
    std::string out;
    const char* error;
  };
  const Bad bad_scans[] = {
      {head + Nul("ctl 0") + tail, "parse: scan output record 8: bad ctl \"ctl 0\""},
      {head + Nul("ctl x") + tail, "parse: scan output record 8: bad ctl \"ctl x\""},
      {head + Nul("ctl 1 2") + tail,
       "parse: scan output record 8: expected \"ctl COUNT\", got \"ctl 1 2\""},
      {head + Nul("kids 425 - 7") + tail, "parse: scan output record 8: bad kids \"kids 425 - 7\""},
      {head + Nul("kids -") + tail, "parse: scan output record 8: bad kids \"kids -\""},
      {head + Nul("minor 3:0000:1a:00.0") + Nul("ctl 2") + tail,
       "parse: scan output record 9: expected \"FILE:TEXT\", got \"ctl 2\""},
      {head + Nul("blind 1") + tail,
       "parse: scan output record 8: expected \"blind\", got \"blind 1\""},
      {head + Nul("blind:") + tail,
       "parse: scan output record 8: expected \"blind\", got \"blind\""},
      {head + Nul("minor 3:0000:1a:00.0") + Nul("blind") + tail,
       "parse: scan output record 9: expected \"FILE:TEXT\", got \"blind\""},
  };
  for (const Bad& row : bad_scans) {
    EXPECT_EQ(ParseScanOutput(row.out, &scan).ToString(), row.error) << row.out;
  }
}

TEST(ScanOutputTest, ReadinessRecords) {
  ScanOutput scan;
  const std::string tail = Nul("apps -") + Nul("table -");
  ASSERT_TRUE(ParseScanOutput(
                  ScanHead() + tail + Nul("drv: 0000:19:00.0 0000:3b:00.0") + Nul("fabric 4 0") +
                      Nul("kmsg 0:6,0,0,-;Linux\n4,9,9,-;NVRM: Xid (PCI:0000:19:00): 79") +
                      Nul("show -") + Nul("end"),
                  &scan)
                  .ok());
  EXPECT_TRUE(scan.readiness);
  EXPECT_EQ(scan.driver_gpus, (std::vector<std::string>{"0000:19:00.0", "0000:3b:00.0"}));
  EXPECT_EQ(scan.nvswitches, 4);
  EXPECT_EQ(scan.fabric_manager, 0);
  EXPECT_EQ(scan.kmsg_exit, 0);
  EXPECT_EQ(scan.kmsg_out, "6,0,0,-;Linux\n4,9,9,-;NVRM: Xid (PCI:0000:19:00): 79");

  ASSERT_TRUE(ParseScanOutput(ScanHead() + tail + Nul("drv:") + Nul("fabric 0 -") + Nul("kmsg 1:") +
                                  Nul("show -") + Nul("end"),
                              &scan)
                  .ok());
  EXPECT_TRUE(scan.driver_gpus.empty());
  EXPECT_EQ(scan.fabric_manager, -1);
  EXPECT_EQ(scan.kmsg_exit, 1);
  ASSERT_TRUE(ParseScanOutput(ScanHead() + tail + Nul("drv:") + Nul("fabric 0 -") + Nul("kmsg -") +
                                  Nul("show -") + Nul("end"),
                              &scan)
                  .ok());
  EXPECT_EQ(scan.kmsg_exit, -1);
  ASSERT_TRUE(ParseScanOutput(ScanHead() + tail + Nul("show -") + Nul("end"), &scan).ok());
  EXPECT_FALSE(scan.readiness);
}

TEST(ScanOutputTest, ReadinessRefusals) {
  struct Bad {
    std::string records;
    const char* error;
  };
  const Bad bad_scans[] = {
      {Nul("drv: ../../etc") + Nul("fabric 0 -") + Nul("kmsg -"),
       "parse: scan output record 6: bad driver GPU \"../../etc\""},
      {Nul("drv:") + Nul("fabric 0 1") + Nul("kmsg -"),
       "parse: scan output record 7: bad fabric record \"fabric 0 1\""},
      {Nul("drv:") + Nul("fabric 2 -") + Nul("kmsg -"),
       "parse: scan output record 7: bad fabric record \"fabric 2 -\""},
      {Nul("drv:") + Nul("fabric 2 7") + Nul("kmsg -"),
       "parse: scan output record 7: bad fabric record \"fabric 2 7\""},
      {Nul("drv:") + Nul("fabric 0 -") + Nul("kmsg 2:"),
       "parse: scan output record 8: bad kmsg record"},
      {Nul("drv:") + Nul("kmsg -"),
       "parse: scan output record 7: expected \"fabric NVSWITCHES FM\", got \"kmsg -\""},
      {Nul("drv:") + Nul("fabric 0 -"),
       "parse: scan output record 8: expected \"kmsg R:TEXT\", got \"show -\""},
  };
  ScanOutput scan;
  for (const Bad& row : bad_scans) {
    std::string out =
        ScanHead() + Nul("apps -") + Nul("table -") + row.records + Nul("show -") + Nul("end");
    EXPECT_EQ(ParseScanOutput(out, &scan).ToString(), row.error) << row.records;
  }
}

TEST(ScanOutputTest, Refusals) {
  struct Bad {
    std::string out;
    const char* error;
  };
  ScanOutput scan;
  const std::string& scan_head = ScanHead();
  const Bad bad_scans[] = {
      {scan_head + Nul("apps -") + Nul("table -") + Nul("show -") + Nul("end") + Nul("end"),
       "parse: scan output record 8: unexpected \"end\""},
      {scan_head + Nul("apps -") + Nul("table -") + Nul("show -") + Nul("unknown") + Nul("end"),
       "parse: scan output record 7: expected \"end\", got \"unknown\""},
      {scan_head + Nul("apps -") + Nul("table -") + Nul("end"),
       "parse: scan output record 6: expected \"show RC:TEXT\", got \"end\""},
      {scan_head + Nul("apps -") + Nul("table -") + Nul("show 0") + Nul("end"),
       "parse: scan output record 6: expected \"show RC:TEXT\""},
      {scan_head + Nul("apps -") + Nul("table -") + Nul("owners:") + Nul("show -") + Nul("end"),
       "parse: scan output record 6: expected \"show RC:TEXT\", got \"owners\""},
      {scan_head + Nul("apps -") + Nul("end"),
       "parse: scan output record 5: expected \"table RC:TEXT\", got \"end\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("fd 1 2 195") + Nul("end"),
       "parse: scan output record 7: expected \"fd PID FD MAJOR MINOR\", got \"fd 1 2 195\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("/proc/1/environ:x") +
           Nul("end"),
       "parse: scan output record 7: unexpected \"/proc/1/environ\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("kids x") + Nul("end"),
       "parse: scan output record 7: bad kids \"kids x\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("exs /proc/1 0 9") +
           Nul("end"),
       "parse: scan output record 7: bad exs record \"exs /proc/1 0 9\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("pidns:pid:[1]") +
           Nul("end"),
       "parse: scan output record 8: expected \"selfcg:TEXT\", got \"end\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("pidf 0:1") +
           Nul("pidf 0:2") + Nul("selfcg:") + Nul("owners:") + Nul("show -") + Nul("end"),
       "parse: scan output record 8: bad pidf record \"pidf 0\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("selfcg:") + Nul("end"),
       "parse: scan output record 8: expected \"owners:UNIT...\", got \"end\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("selfcg:") +
           Nul("owners:") + Nul("end"),
       "parse: scan output record 9: expected \"show RC:TEXT\", got \"end\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("selfcg:") +
           Nul("owners: a.service b;c.service") + Nul("show -") + Nul("end"),
       "parse: scan output record 8: bad owner unit \"b;c.service\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("selfcg:") +
           Nul("owners: vllm*.service") + Nul("show -") + Nul("end"),
       "parse: scan output record 8: bad owner unit \"vllm*.service\""},
      {scan_head + Nul("apps 0:") + Nul("table -") + Nul("majors") + Nul("selfcg:") +
           Nul("owners: .service") + Nul("show -") + Nul("end"),
       "parse: scan output record 8: bad owner unit \".service\""},
      {Nul("scan 1") + Nul("session") + Nul("end"),
       "parse: scan output record 2: bad session \"session\""},
      {Nul("@@session") + Nul("end"), "parse: scan output: record 1 has a bad tag \"@@session\""},
  };
  for (const Bad& row : bad_scans) {
    EXPECT_EQ(ParseScanOutput(row.out, &scan).ToString(), row.error) << row.out;
  }
}

}  // namespace
}  // namespace fleetreap
