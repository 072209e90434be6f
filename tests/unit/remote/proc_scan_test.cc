#include "fleetreap/remote/proc_scan.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "fleetreap/base/text.h"
#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "support/without_perl.h"

extern char** environ;

namespace fleetreap {
namespace {

std::string Stat(int pid, const std::string& comm, char state, int ppid, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) +
         " 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 " + std::to_string(start) +
         " 8192 100 18446744073709551615\n";
}

// "PID start=S ppid=P state=X user=U comm=[C] exe=[E] cmdline=[L] gpus=0,1 devices=..."
std::string Render(const Holder& h) {
  std::vector<std::string> gpus;
  for (int gpu : h.gpus) gpus.push_back(std::to_string(gpu));
  return std::to_string(h.pid) + " start=" + std::to_string(h.start_time) +
         " ppid=" + std::to_string(h.ppid) + " state=" + h.state + " user=" + h.user + " comm=[" +
         h.comm + "] exe=[" + h.exe + "] cmdline=[" + h.cmdline + "] gpus=" + Join(gpus, ",") +
         " devices=" + Join(h.devices, ",");
}

std::string Render(const std::vector<Holder>& holders) {
  std::string text;
  for (const Holder& holder : holders) text += Render(holder) + "\n";
  return text;
}

TEST(ProcScanTest, ParsesStatAfterTheLastParenthesis) {
  struct Row {
    std::string stat;
    const char* expected;  // "pid comm state ppid start" or the error
  };
  const Row rows[] = {
      {Stat(4242, "python3", 'S', 1, 987654), "4242 [python3] S 1 987654"},
      {Stat(7, "VLLM::EngineCor", 'R', 6, 12), "7 [VLLM::EngineCor] R 6 12"},
      {Stat(8, "a) (b", 'D', 2, 13), "8 [a) (b] D 2 13"},
      {Stat(9, ") Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", 'Z', 3, 14),
       "9 [) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20] Z 3 14"},
      {Stat(10, "new\nline", 'S', 1, 15), "10 [new?line] S 1 15"},
      {Stat(11, "", 'S', 1, 16), "11 [] S 1 16"},
      {"12 (x) S 1 2 3", "parse: proc stat: expected at least 20 fields after comm, got 4"},
      {"12 x S 1", "parse: proc stat: missing \"(comm)\""},
      {"", "parse: proc stat: missing \"(comm)\""},
      {Stat(0, "x", 'S', 1, 1), "parse: proc stat: bad pid"},
      {"x" + Stat(1, "x", 'S', 1, 1), "parse: proc stat: bad pid"},
      {Stat(1, "x", 'S', -1, 1), "parse: proc stat: bad ppid"},
      {"13 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0", "parse: proc stat: bad start time"},
      {"13 (x) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", "parse: proc stat: bad state"},
  };
  for (const Row& row : rows) {
    Holder holder;
    Status status = ParseProcStat(row.stat, &holder);
    std::string got = status.ok() ? std::to_string(holder.pid) + " [" + holder.comm + "] " +
                                        holder.state + " " + std::to_string(holder.ppid) + " " +
                                        std::to_string(holder.start_time)
                                  : status.ToString();
    EXPECT_EQ(got, row.expected) << row.stat;
  }
}

TEST(ProcScanTest, GpuIndexOfDevice) {
  const std::pair<const char*, int> rows[] = {
      {"/dev/nvidia0", 0},
      {"/dev/nvidia7", 7},
      {"/dev/nvidia15", 15},
      {"/tmp/x/nvidia3", 3},
      {"/dev/nvidiactl", -1},
      {"/dev/nvidia-uvm", -1},
      {"/dev/nvidia-uvm-tools", -1},
      {"/dev/nvidia-modeset", -1},
      {"/dev/nvidia-caps/nvidia-cap1", -1},
      {"/dev/nvidia", -1},
      {"/dev/nvidia0x", -1},
      {"/dev/nvidia99999", -1},
      {"", -1},
  };
  for (const auto& [path, index] : rows) EXPECT_EQ(GpuIndexOfDevice(path), index) << path;
}

// A scan's process texts, as the dump sends them.
ProcessText Text(int pid, const std::string& comm, const std::string& uid, const std::string& exe,
                 std::vector<std::string> argv) {
  ProcessText text;
  text.stat = Stat(pid, comm, 'S', 1, 1000 + pid);
  text.status = "Name:\t" + comm + "\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t" + uid + "\t" +
                uid + "\t" + uid + "\t" + uid + "\nGid:\t0\t0\t0\t0\n";
  text.has_exe = !exe.empty();
  text.exe = exe;
  text.argv = std::move(argv);
  return text;
}

TEST(ProcScanTest, DeviceNames) {
  const std::map<int, std::string> majors = {
      {195, "nvidia"},          {238, "nvidia-uvm"},
      {241, "nvidia-caps"},     {242, "nvidia-caps-imex-channels"},
      {243, "nvidia-nvswitch"}, {244, "nvidia-foo"}};
  const std::tuple<int, int, const char*> rows[] = {
      {195, 0, "/dev/nvidia0"},
      {195, 7, "/dev/nvidia7"},
      {195, 255, "/dev/nvidiactl"},
      {195, 254, "/dev/nvidia-modeset"},
      {238, 0, "/dev/nvidia-uvm"},
      {238, 1, "/dev/nvidia-uvm-tools"},
      {241, 1, "/dev/nvidia-caps/nvidia-cap1"},
      {242, 0, "/dev/nvidia-caps-imex-channels/channel0"},
      {243, 2, "/dev/nvidia-nvswitch2"},
      {244, 3, "nvidia-foo 244:3"},
      {250, 1, "nvidia 250:1"},
  };
  for (const auto& [major, minor, name] : rows) {
    EXPECT_EQ(DeviceName(major, minor, majors), name) << major << ":" << minor;
  }
}

TEST(ProcScanTest, HoldersFromScan) {
  ScanOutput scan;
  scan.majors = {{195, "nvidia"}, {238, "nvidia-uvm"}, {241, "nvidia-caps"}};
  scan.passwd = "root:x:0:0:root:/root:/bin/bash\nvllm:x:1000:1000::/home/vllm:/bin/sh\n";
  // Worker 300 holds every GPU's file (peer access), nvidiactl and uvm, by
  // number; 20 holds a cap; 55 exited before it was described; 60 holds
  // plain files by path; 61 holds /dev/nvidia0 both ways (one fd).
  scan.fds = {{300, 4, 195, 3, ""},
              {300, 5, 195, 255, ""},
              {300, 6, 195, 0, ""},
              {300, 7, 238, 0, ""},
              {20, 3, 241, 1, ""},
              {55, 3, 195, 0, ""},
              {60, 3, -1, -1, "/dev/nvidia2"},
              {60, 4, -1, -1, "/dev/nvidiactl"},
              {61, 3, 195, 1, ""},
              {61, 3, -1, -1, "/dev/nvidia1"}};
  const std::vector<std::string> hostile = {"x\n1 (y) R", "--a\tb", "c\nd", ""};
  scan.processes[20] =
      Text(20, "nv-hostengine", "0", "/usr/bin/nv-hostengine", {"/usr/bin/nv-hostengine", "-n"});
  scan.processes[300] =
      Text(300, "VLLM::Worker_TP", "1000", "/usr/bin/python3.11 (deleted)", hostile);
  scan.processes[60] = Text(60, "a) (b\n", "4242", "", {});
  scan.processes[61] = Text(61, "x", "0", "/x", {"x"});
  std::vector<Holder> holders;
  HolderScanInfo info;
  ASSERT_TRUE(HoldersFromScan(scan, &holders, &info).ok());
  EXPECT_EQ(Render(holders),
            "20 start=1020 ppid=1 state=S user=root comm=[nv-hostengine] "
            "exe=[/usr/bin/nv-hostengine] cmdline=[/usr/bin/nv-hostengine -n] gpus= "
            "devices=/dev/nvidia-caps/nvidia-cap1\n"
            "60 start=1060 ppid=1 state=S user=4242 comm=[a) (b?] exe=[] cmdline=[] gpus=2 "
            "devices=/dev/nvidia2,/dev/nvidiactl\n"
            "61 start=1061 ppid=1 state=S user=root comm=[x] exe=[/x] cmdline=[x] gpus=1 "
            "devices=/dev/nvidia1\n"
            "300 start=1300 ppid=1 state=S user=vllm comm=[VLLM::Worker_TP] "
            "exe=[/usr/bin/python3.11 (deleted)] cmdline=[x 1 (y) R --a b c d] gpus=0,3 "
            "devices=/dev/nvidia-uvm,/dev/nvidia0,/dev/nvidia3,/dev/nvidiactl\n");
  EXPECT_EQ(info.gone, std::vector<int>{55});
  EXPECT_EQ(info.device_gpus, 4);

  // nvidia-smi charges 300 on GPU 3 (already held), and 77, which holds no
  // fd (described), and 88, which this /proc does not show.
  scan.processes[77] = Text(77, "pt_main_thread", "0", "/usr/bin/python3", {"python3"});
  std::vector<GpuReading> gpus(4);
  for (int i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = "GPU-" + std::to_string(i);
    gpus[i].bus_id = "00000000:1" + std::to_string(i) + ":00.0";
  }
  std::vector<ComputeApp> apps(3);
  apps[0].pid = 300;
  apps[0].gpu_uuid = "GPU-3";
  apps[1].pid = 77;
  apps[1].gpu_bus_id = "0000:12:00.0";
  apps[2].pid = 88;
  apps[2].gpu_uuid = "GPU-1";
  ChargeComputeApps(apps, DescribeProcesses(scan, {77, 88}), gpus, &holders);
  ASSERT_EQ(holders.size(), 6u);
  EXPECT_EQ(Render(holders[3]),
            "77 start=1077 ppid=1 state=S user=root comm=[pt_main_thread] exe=[/usr/bin/python3] "
            "cmdline=[python3] gpus=2 devices=");
  EXPECT_EQ(Render(holders[4]),
            "88 start=0 ppid=0 state=? user= comm=[] exe=[] cmdline=[] gpus=1 devices=");
  EXPECT_EQ(holders[4].protected_by, "not in this host's /proc");
  EXPECT_EQ(holders[5].gpus, (std::vector<int>{0, 3}));
}

// A plain file named /dev/nvidia9999 (a user's own mount namespace) is no
// GPU of a host whose driver lists minors 0-1: the process holding only it
// is no holder, and no GPU 9999 is expected.
TEST(ProcScanTest, PlainFilesAreGpusOnlyWhenTheDriverHasTheMinor) {
  ScanOutput scan;
  scan.majors = {{195, "nvidia"}};
  scan.minors = {{"00000000:10:00.0", 0}, {"00000000:11:00.0", 1}};
  scan.fds = {{70, 3, -1, -1, "/dev/nvidia9999"},
              {71, 3, -1, -1, "/dev/nvidia1"},
              {72, 3, -1, -1, "/dev/nvidia7"},
              {72, 4, -1, -1, "/dev/nvidiactl"}};
  for (int pid : {70, 71, 72}) scan.processes[pid] = Text(pid, "x", "0", "/x", {"x"});
  std::vector<Holder> holders;
  HolderScanInfo info;
  ASSERT_TRUE(HoldersFromScan(scan, &holders, &info).ok());
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(holders[0].pid, 71);
  EXPECT_EQ(holders[0].gpus, std::vector<int>{1});
  EXPECT_EQ(holders[1].pid, 72);
  EXPECT_TRUE(holders[1].gpus.empty());
  EXPECT_EQ(holders[1].devices, std::vector<std::string>{"/dev/nvidiactl"});
  EXPECT_EQ(info.device_gpus, 2);
}

TEST(ProcScanTest, RejectsAStatOfAnotherPid) {
  ScanOutput scan;
  scan.fds = {{7, 3, 195, 0, ""}};
  scan.processes[7].stat = Stat(8, "x", 'S', 1, 1);
  std::vector<Holder> holders;
  EXPECT_EQ(HoldersFromScan(scan, &holders).ToString(), "parse: proc stat of pid 7 names pid 8");
  scan.processes[7].stat = "7 (x) S 1";
  EXPECT_EQ(HoldersFromScan(scan, &holders).ToString(),
            "parse: proc stat: expected at least 20 fields after comm, got 2");
}

// Runs the real snippet with /bin/sh against stand-in device files held by
// children this test starts (and ends, by their PIDs). A hostile program
// name (")", "(", newline, space) and argv[0] (tab, newline) must come
// back intact and framed. Each test runs twice: the walk by perl (where this
// machine has it) and by the shell path a host without perl takes.
class ScanLiveTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fleetreap-scan-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    dev_ = dir_ + "/dev";
    std::filesystem::create_directories(dev_ + "/nvidia-caps");
    for (const char* name :
         {"nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm", "nvidia-caps/nvidia-cap1"}) {
      std::ofstream(dev_ + "/" + name).put('\n');
    }
    for (const auto& [bus_id, minor] : {std::pair{"0000:3a:00.0", 0}, {"0000:18:00.0", 2}}) {
      std::filesystem::create_directories(dir_ + "/gpus/" + bus_id);
      std::ofstream(dir_ + "/gpus/" + bus_id + "/information")
          << "Model: \t\t NVIDIA H200\nBus Location: \t " << bus_id << "\nDevice Minor: \t "
          << minor << "\nGPU Excluded:\t No\n";
    }
    hostile_exe_ = dir_ + "/sl) x(\n y";
    std::filesystem::copy_file("/bin/sleep", hostile_exe_);
    std::filesystem::permissions(hostile_exe_, std::filesystem::perms::owner_all);
  }

  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }

  // Starts "exe" with "argv", holding "files" open on fds 3, 4, ...
  pid_t Spawn(const std::string& exe, std::vector<std::string> argv,
              const std::vector<std::string>& files) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    int fd = 3;
    for (const std::string& file : files) {
      posix_spawn_file_actions_addopen(&actions, fd++, (dev_ + "/" + file).c_str(), O_RDONLY, 0);
    }
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, exe.c_str(), &actions, nullptr, args.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    children_.push_back(pid);
    return pid;
  }

  ScanOutput RunScan() {
    HostPaths paths;
    paths.dev_dir = dev_;
    paths.driver_dir = dir_ + "/gpus";
    ScanRequest request;
    request.nvidia_smi_timeout = std::chrono::milliseconds(1000);
    std::string path = dir_ + "/scan.sh";
    std::ofstream(path) << (GetParam() ? ScanScript(request, paths)
                                       : WithoutPerl(ScanScript(request, paths)));
    FILE* pipe = popen(("/bin/sh " + path + " 2>/dev/null").c_str(), "r");
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0);
    ScanOutput scan;
    Status status = ParseScanOutput(out, &scan);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return scan;
  }

  std::string dir_, dev_, hostile_exe_;
  std::vector<pid_t> children_;
};

TEST_P(ScanLiveTest, FindsHoldersByPath) {
  pid_t hostile =
      Spawn(hostile_exe_, {"sle\teper\nx", "60", "1"}, {"nvidia0", "nvidiactl", "nvidia2"});
  pid_t plain = Spawn("/bin/sleep", {"sleep", "61"}, {"nvidia-caps/nvidia-cap1", "nvidia-uvm"});
  ScanOutput scan = RunScan();
  std::vector<Holder> holders;
  HolderScanInfo info;
  Status status = HoldersFromScan(scan, &holders, &info);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(scan.minors, (std::map<std::string, int>{{"0000:18:00.0", 2}, {"0000:3a:00.0", 0}}));
  ASSERT_EQ(holders.size(), 2u);
  const Holder& a = holders[0].pid == hostile ? holders[0] : holders[1];
  const Holder& b = holders[0].pid == hostile ? holders[1] : holders[0];
  EXPECT_EQ(a.pid, hostile);
  EXPECT_EQ(a.comm, "sl) x(? y");
  EXPECT_EQ(a.exe, dir_ + "/sl) x(? y");
  EXPECT_EQ(a.cmdline, "sle eper x 60 1");
  EXPECT_EQ(a.gpus, (std::vector<int>{0, 2}));
  EXPECT_EQ(Join(a.devices, ","), dev_ + "/nvidia0," + dev_ + "/nvidia2," + dev_ + "/nvidiactl");
  EXPECT_EQ(a.ppid, getpid());
  EXPECT_EQ(a.user, "root");
  EXPECT_EQ(b.pid, plain);
  EXPECT_EQ(b.comm, "sleep");
  EXPECT_TRUE(b.gpus.empty());
  EXPECT_EQ(Join(b.devices, ","), dev_ + "/nvidia-caps/nvidia-cap1," + dev_ + "/nvidia-uvm");
  std::ifstream stat("/proc/" + std::to_string(plain) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  Holder direct;
  ASSERT_TRUE(ParseProcStat(text, &direct).ok());
  EXPECT_EQ(b.start_time, direct.start_time);
}

// Seen on an H200: a process that keeps only mappings of a device file
// (it closed its fds), and one whose main thread exited while another
// thread holds the fds (state Z, /proc/PID/fd empty). Both are holders,
// by the maps pass and the fds of every thread.
TEST_P(ScanLiveTest, FindsMappingOnlyAndLeaderExitedHolders) {
  const std::string mapped = dev_ + "/nvidia0", threaded = dev_ + "/nvidia2";
  pid_t mapper = fork();
  if (mapper == 0) {
    int fd = open(mapped.c_str(), O_RDWR);
    if (fd < 0 || mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) _exit(3);
    close(fd);
    for (;;) pause();
  }
  children_.push_back(mapper);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t leader = fork();
  if (leader == 0) {
    static std::string file;
    static int ready_fd;
    file = threaded;
    ready_fd = ready[1];
    pthread_t thread;
    auto hold = [](void*) -> void* {
      if (open(file.c_str(), O_RDONLY) < 0) _exit(3);
      if (write(ready_fd, "r", 1) != 1) _exit(4);
      for (;;) pause();
      return nullptr;
    };
    if (pthread_create(&thread, nullptr, hold, nullptr) != 0) _exit(5);
    syscall(SYS_exit, 0);  // the leader alone exits (pthread_exit would unwind into gtest)
  }
  children_.push_back(leader);
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  for (int i = 0; i < 100; ++i) {  // the leader has exited
    Holder h;
    std::ifstream stat("/proc/" + std::to_string(leader) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (ParseProcStat(text, &h).ok() && h.state == 'Z') break;
    usleep(10000);
  }
  usleep(100000);  // the mapper has mapped and closed
  ScanOutput scan = RunScan();
  std::vector<Holder> holders;
  ASSERT_TRUE(HoldersFromScan(scan, &holders).ok());
  ASSERT_EQ(holders.size(), 2u);
  const Holder& m = holders[0].pid == mapper ? holders[0] : holders[1];
  const Holder& t = holders[0].pid == mapper ? holders[1] : holders[0];
  EXPECT_EQ(m.pid, mapper);
  EXPECT_EQ(m.gpus, std::vector<int>{0});
  EXPECT_EQ(Join(m.devices, ","), mapped);
  EXPECT_EQ(t.pid, leader);
  EXPECT_EQ(t.state, 'Z');
  EXPECT_EQ(t.gpus, std::vector<int>{2});
  EXPECT_EQ(Join(t.devices, ","), threaded);
}

TEST_P(ScanLiveTest, NothingHeld) {
  std::vector<Holder> holders;
  ASSERT_TRUE(HoldersFromScan(RunScan(), &holders).ok());
  EXPECT_TRUE(holders.empty());
}

INSTANTIATE_TEST_SUITE_P(PerlAndShell, ScanLiveTest, ::testing::Bool());

}  // namespace
}  // namespace fleetreap
