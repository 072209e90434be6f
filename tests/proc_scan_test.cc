#include "fleetreap/proc_scan.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

extern char** environ;

namespace fleetreap {
namespace {

std::string Hex(const std::string& text) {
  if (text.empty()) return "-";
  std::string hex;
  const char* digits = "0123456789abcdef";
  for (unsigned char c : text) {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return hex;
}

std::string Stat(int pid, const std::string& comm, char state, int ppid, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) +
         " 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 " + std::to_string(start) +
         " 8192 100 18446744073709551615\n";
}

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
  return joined;
}

// "PID start=S ppid=P state=X user=U comm=[C] exe=[E] cmdline=[L] gpus=0,1 devices=..."
std::string Render(const Holder& h) {
  std::vector<std::string> gpus;
  for (int gpu : h.gpus) gpus.push_back(std::to_string(gpu));
  return std::to_string(h.pid) + " start=" + std::to_string(h.start_time) +
         " ppid=" + std::to_string(h.ppid) + " state=" + h.state + " user=" + h.user +
         " comm=[" + h.comm + "] exe=[" + h.exe + "] cmdline=[" + h.cmdline + "] gpus=" +
         Join(gpus) + " devices=" + Join(h.devices);
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
      {"/dev/nvidia0", 0}, {"/dev/nvidia7", 7}, {"/dev/nvidia15", 15}, {"/tmp/x/nvidia3", 3},
      {"/dev/nvidiactl", -1}, {"/dev/nvidia-uvm", -1}, {"/dev/nvidia-uvm-tools", -1},
      {"/dev/nvidia-modeset", -1}, {"/dev/nvidia-caps/nvidia-cap1", -1}, {"/dev/nvidia", -1},
      {"/dev/nvidia0x", -1}, {"/dev/nvidia99999", -1}, {"", -1},
  };
  for (const auto& [path, index] : rows) EXPECT_EQ(GpuIndexOfDevice(path), index) << path;
}

const std::string kHeader = "fleetreap-holders 1 fuser\n";
const std::string kDev0 = Hex("/dev/nvidia0"), kDev3 = Hex("/dev/nvidia3"),
                  kCtl = Hex("/dev/nvidiactl"), kCap = Hex("/dev/nvidia-caps/nvidia-cap1");

std::string Proc(int pid, const std::string& comm, const std::string& uid,
                 const std::string& user, const std::string& exe, const std::string& cmdline) {
  return "proc " + std::to_string(pid) + " " + Hex(Stat(pid, comm, 'S', 1, 1000 + pid)) + " " +
         uid + " " + Hex(user) + " " + Hex(exe) + " " + Hex(cmdline) + "\n";
}

TEST(ProcScanTest, ParsesScanRecords) {
  struct Row {
    std::string out;
    const char* expected;
  };
  const std::string hostile = std::string("x\n1 (y) R") + '\0' + "--a\tb" + '\0' + "c\nd" + '\0';
  const Row rows[] = {
      {kHeader + "end\n", ""},
      {kHeader + "\v\n \t\nend\n", ""},  // once a crash found by fuzz_holder_scan
      {kHeader + "dev " + kDev0 + "\ndev " + kCtl + "\nend", ""},
      {kHeader + "hold 300 " + kDev3 + "\nhold 300 " + kCtl + "\nhold 300 " + kDev0 +
           "\nhold 20 " + kCap + "\n" +
           Proc(20, "nv-hostengine", "0", "root", "/usr/bin/nv-hostengine",
                std::string("/usr/bin/nv-hostengine") + '\0' + "-n" + '\0') +
           Proc(300, "VLLM::Worker_TP", "1000", "", "/usr/bin/python3.11 (deleted)", hostile) +
           "end\n",
       "20 start=1020 ppid=1 state=S user=root comm=[nv-hostengine] exe=[/usr/bin/nv-hostengine]"
       " cmdline=[/usr/bin/nv-hostengine -n] gpus= devices=/dev/nvidia-caps/nvidia-cap1\n"
       "300 start=1300 ppid=1 state=S user=1000 comm=[VLLM::Worker_TP] "
       "exe=[/usr/bin/python3.11 (deleted)] cmdline=[x 1 (y) R --a b c d] gpus=0,3 "
       "devices=/dev/nvidia0,/dev/nvidia3,/dev/nvidiactl\n"},
      // Exited between the hold and the describe: left out, not an error.
      {kHeader + "hold 55 " + kDev0 + "\ngone 55\nend\n", ""},
      {"fleetreap-holders 1 proc\r\nhold 56 " + kDev0 + "\r\n" +
           Proc(56, "a) (b", "-", "", "", "") + "end\r\n",
       "56 start=1056 ppid=1 state=S user= comm=[a) (b] exe=[] cmdline=[] gpus=0 "
       "devices=/dev/nvidia0\n"},
  };
  for (const Row& row : rows) {
    std::vector<Holder> holders;
    Status status = ParseHolderScan(row.out, &holders);
    ASSERT_TRUE(status.ok()) << row.out << ": " << status.ToString();
    EXPECT_EQ(Render(holders), row.expected) << row.out;
  }
  HolderScanInfo info;
  std::vector<Holder> holders;
  ASSERT_TRUE(ParseHolderScan(kHeader + "dev " + kDev0 + "\nhold 5 " + kDev0 +
                                  "\ngone 5\nminor 0000:2a:00.0  \t 0\nminor 0000:18:00.0 1\nend\n",
                              &holders, &info).ok());
  EXPECT_EQ(info.minors, (std::map<std::string, int>{{"0000:2a:00.0", 0}, {"0000:18:00.0", 1}}));
  EXPECT_EQ(info.method, "fuser");
  EXPECT_EQ(Join(info.devices), "/dev/nvidia0");
  EXPECT_EQ(info.gone, std::vector<int>{5});
}

TEST(ProcScanTest, RejectsMalformedScansWithExactErrors) {
  struct Row {
    std::string out;
    const char* error;
  };
  const std::string proc7 = Proc(7, "x", "0", "root", "/x", "x");
  const Row rows[] = {
      {"", "parse: holder scan: output is truncated (no end line)"},
      {kHeader + "hold 7 " + kDev0 + "\n" + proc7,
       "parse: holder scan: output is truncated (no end line)"},
      {"fleetreap-holders 2 fuser\nend\n",
       "parse: holder scan line 1: expected \"fleetreap-holders 1 fuser|proc\""},
      {"sh: 1: od: not found\nend\n",
       "parse: holder scan line 1: expected \"fleetreap-holders 1 fuser|proc\""},
      {kHeader + "end\nhold 7 " + kDev0 + "\n", "parse: holder scan line 3: text after the end line"},
      {kHeader + "hold 7 2f6465\nhold x " + kDev0 + "\nend\n", "parse: holder scan line 3: bad pid"},
      {kHeader + "hold 7 2f64657\nend\n", "parse: holder scan line 2: bad hex in path"},
      {kHeader + "hold 7 2F6465\nend\n", "parse: holder scan line 2: bad hex in path"},
      {kHeader + "hold 7 -\nend\n", "parse: holder scan line 2: bad hex in path"},
      {kHeader + "hold 7 " + kDev0 + " extra\nend\n", "parse: holder scan line 2: malformed record \"hold\""},
      {kHeader + "proc 7 zz 0 - - -\nend\n", "parse: holder scan line 2: bad hex in stat"},
      {kHeader + "proc 7 " + Hex(Stat(7, "x", 'S', 1, 1)) + " 0 - - zz\nend\n",
       "parse: holder scan line 2: bad hex in cmdline"},
      {kHeader + "proc 7 " + Hex(Stat(7, "x", 'S', 1, 1)) + " root - - -\nend\n",
       "parse: holder scan line 2: bad uid"},
      {kHeader + "proc 7 " + Hex(Stat(8, "x", 'S', 1, 1)) + " 0 - - -\nend\n",
       "parse: holder scan line 2: stat is for pid 8"},
      {kHeader + "proc 7 " + Hex("7 (x) S 1") + " 0 - - -\nend\n",
       "parse: holder scan line 2: proc stat: expected at least 20 fields after comm, got 2"},
      {kHeader + "hold 7 " + kDev0 + "\nend\n",
       "parse: holder scan: pid 7 holds a device but has no proc record"},
      {kHeader + "minor 0000:18:00.0\nend\n", "parse: holder scan line 2: malformed record \"minor\""},
      {kHeader + "minor ../x 1\nend\n", "parse: holder scan line 2: bad bus id"},
      {kHeader + "minor 0000:18:00.0 -1\nend\n", "parse: holder scan line 2: bad device minor"},
      {kHeader + "garbage\x01\nend\n", "parse: holder scan line 2: unknown record \"garbage?\""},
  };
  for (const Row& row : rows) {
    std::vector<Holder> holders;
    EXPECT_EQ(ParseHolderScan(row.out, &holders).ToString(), row.error) << row.out;
    EXPECT_TRUE(holders.empty());
  }
}

// Runs the real snippet with /bin/sh against stand-in device files held by
// children this test starts (and ends, by their PIDs). A hostile program
// name (")", "(", newline, space) and argv[0] (tab, newline) must come
// back intact and framed.
class ScanLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fleetreap-scan-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    dev_ = dir_ + "/dev";
    std::filesystem::create_directories(dev_ + "/nvidia-caps");
    for (const char* name : {"nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm",
                             "nvidia-caps/nvidia-cap1"}) {
      std::ofstream(dev_ + "/" + name).put('\n');
    }
    for (const auto& [bus_id, minor] : {std::pair{"0000:3a:00.0", 0}, {"0000:18:00.0", 2}}) {
      std::filesystem::create_directories(dir_ + "/gpus/" + bus_id);
      std::ofstream(dir_ + "/gpus/" + bus_id + "/information")
          << "Model: \t\t NVIDIA H200\nBus Location: \t " << bus_id
          << "\nDevice Minor: \t " << minor << "\nGPU Excluded:\t No\n";
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

  std::string RunScan(bool allow_fuser) {
    HolderScanOptions options;
    options.dev_dir = dev_;
    options.driver_dir = dir_ + "/gpus";
    options.allow_fuser = allow_fuser;
    std::string path = dir_ + "/scan.sh";
    std::ofstream(path) << HolderScanScript(options);
    FILE* pipe = popen(("/bin/sh " + path + " 2>/dev/null").c_str(), "r");
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0);
    return out;
  }

  std::string dir_, dev_, hostile_exe_;
  std::vector<pid_t> children_;
};

TEST_F(ScanLiveTest, FindsHoldersWithBothMethods) {
  pid_t hostile = Spawn(hostile_exe_, {"sle\teper\nx", "60", "1"},
                        {"nvidia0", "nvidiactl", "nvidia2"});
  pid_t plain = Spawn("/bin/sleep", {"sleep", "61"}, {"nvidia-caps/nvidia-cap1", "nvidia-uvm"});
  for (bool allow_fuser : {true, false}) {
    std::string out = RunScan(allow_fuser);
    std::vector<Holder> holders;
    HolderScanInfo info;
    Status status = ParseHolderScan(out, &holders, &info);
    ASSERT_TRUE(status.ok()) << status.ToString() << "\n" << out;
    if (!allow_fuser) {
      EXPECT_EQ(info.method, "proc");
    }
    EXPECT_EQ(info.devices.size(), 6u) << out;
    EXPECT_EQ(info.minors, (std::map<std::string, int>{{"0000:18:00.0", 2}, {"0000:3a:00.0", 0}}));
    ASSERT_EQ(holders.size(), 2u) << out;
    const Holder& a = holders[0].pid == hostile ? holders[0] : holders[1];
    const Holder& b = holders[0].pid == hostile ? holders[1] : holders[0];
    EXPECT_EQ(a.pid, hostile);
    EXPECT_EQ(a.comm, "sl) x(? y") << info.method;
    EXPECT_EQ(a.exe, dir_ + "/sl) x(? y");
    EXPECT_EQ(a.cmdline, "sle eper x 60 1");
    EXPECT_EQ(a.gpus, (std::vector<int>{0, 2}));
    EXPECT_EQ(Join(a.devices), dev_ + "/nvidia0," + dev_ + "/nvidia2," + dev_ + "/nvidiactl");
    EXPECT_EQ(a.ppid, getpid());
    EXPECT_EQ(a.user, "root");
    EXPECT_EQ(b.pid, plain);
    EXPECT_EQ(b.comm, "sleep");
    EXPECT_TRUE(b.gpus.empty());
    EXPECT_EQ(Join(b.devices), dev_ + "/nvidia-caps/nvidia-cap1," + dev_ + "/nvidia-uvm");
    std::ifstream stat("/proc/" + std::to_string(plain) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    Holder direct;
    ASSERT_TRUE(ParseProcStat(text, &direct).ok());
    EXPECT_EQ(b.start_time, direct.start_time);
  }
}

TEST_F(ScanLiveTest, NothingHeldAndNoDevices) {
  std::vector<Holder> holders;
  HolderScanInfo info;
  ASSERT_TRUE(ParseHolderScan(RunScan(true), &holders, &info).ok());
  EXPECT_TRUE(holders.empty());
  EXPECT_EQ(info.devices.size(), 6u);
  std::filesystem::remove_all(dev_);
  ASSERT_TRUE(ParseHolderScan(RunScan(false), &holders, &info).ok());
  EXPECT_TRUE(holders.empty());
  EXPECT_TRUE(info.devices.empty());
}

}  // namespace
}  // namespace fleetreap
