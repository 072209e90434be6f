// The process-start budget of each remote step: every program a step's
// script starts (find, grep, stat, sort, timeout, nvidia-smi, systemctl,
// perl, sleep, ...) is counted by a stand-in that logs its name and execs the
// real one, on a host-like scratch folder with one holder of a device file.
// The budgets are counts, never times; a script that starts one more
// program than its budget fails here, the day it lands. bench/proc_count_bench.py
// counts the same steps on a simulated host, sshd's own processes included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "support/script_dir.h"
#include "support/without_perl.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// The programs the scripts may start, each a stand-in that logs its name.
const char* const kTools[] = {"find", "grep", "sort",  "stat", "mktemp", "cat", "rm",
                              "dd",   "head", "sleep", "perl", "logger", "od",  "timeout"};

class ProcessBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fleetreap-pb-XXXXXX";
    dir_ = mkdtemp(tmpl);
    for (const char* sub : {"/bin", "/dev", "/shm", "/driver", "/driver/0000:19:00.0"}) {
      mkdir((dir_ + sub).c_str(), 0755);
    }
    for (const char* tool : kTools) {
      std::string real = access((std::string("/usr/bin/") + tool).c_str(), X_OK) == 0
                             ? std::string("/usr/bin/") + tool
                             : std::string("/bin/") + tool;
      Write("/bin/" + std::string(tool), "#!/bin/sh\necho " + std::string(tool) + " >> '" + dir_ +
                                             "/execs'\nexec " + real + " \"$@\"\n");
    }
    Write("/bin/nvidia-smi", "#!/bin/sh\necho nvidia-smi >> '" + dir_ +
                                 "/execs'\ncase \"$*\" in *query-gpu*) echo index; echo 0;; "
                                 "*query-compute-apps*) echo pid; echo 1;; esac\n");
    Write("/bin/systemctl", "#!/bin/sh\necho systemctl >> '" + dir_ +
                                "/execs'\n[ \"$1\" = show ] && printf 'Id=vllm.service\\n"
                                "ActiveState=active\\n'\nexit 0\n");
    std::ofstream(dir_ + "/dev/nvidia0") << "";
    std::ofstream(dir_ + "/dev/nvidiactl") << "";
    std::ofstream(dir_ + "/shm/nccl-1") << "x";
    std::ofstream(dir_ + "/kmsg") << "6,0,1000,-;Linux version 6.8.0\n";
    std::ofstream(dir_ + "/driver/0000:19:00.0/information") << "Device Minor: 0\n";
    paths_.dev_dir = dir_ + "/dev";
    paths_.driver_dir = dir_ + "/driver";
    paths_.shm_dir = dir_ + "/shm";
    paths_.kmsg = dir_ + "/kmsg";
  }
  // A child of ours that holds the stand-in /dev/nvidia0 (for the signal
  // step, whose checks look at its targets only).
  void StartHolder() {
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    holder_ = fork();
    if (holder_ == 0) {
      close(ready[0]);
      if (open((dir_ + "/dev/nvidia0").c_str(), O_RDONLY) < 0) _exit(3);
      fcntl(ready[1], F_SETFD, FD_CLOEXEC);  // closed by the exec: the holder is ready
      execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(4);
    }
    close(ready[1]);
    char byte;
    while (read(ready[0], &byte, 1) > 0) {
    }
    close(ready[0]);
  }
  void TearDown() override {
    if (holder_ > 0) {
      kill(holder_, SIGKILL);
      waitpid(holder_, nullptr, 0);
    }
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + name) << text;
    chmod((dir_ + name).c_str(), 0755);
  }
  // The programs "script" started, by name, and in all.
  int Count(const std::string& script, std::map<std::string, int>* by_name) {
    unlink((dir_ + "/execs").c_str());
    output_ = RunScriptIn(dir_, script);
    return Read(by_name);
  }
  // The same for a scan, run in a PID namespace of its own (with its /proc)
  // where a sleep started first holds the stand-in /dev/nvidia0: the walk
  // sees that holder and the script's own processes, never this machine's
  // others (their number would change how many argument batches the fd
  // pass's stat takes). False where no such namespace can be made.
  bool CountIsolated(const std::string& script, std::map<std::string, int>* by_name) {
    unlink((dir_ + "/execs").c_str());
    std::ofstream(dir_ + "/script.sh") << "exec 7<'" << dir_ << "/dev/nvidia0'; /bin/sleep 30 & "
                                       << "echo $! >'" << dir_ << "/holder'; exec 7<&-\n"
                                       << script;
    const std::string cmd = "cd '" + dir_ + "' && PATH='" + dir_ +
                            "/bin':/usr/bin:/bin unshare --pid --fork --mount-proc /bin/sh "
                            "script.sh 2>/dev/null";
    output_.clear();
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return false;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) output_.append(buf, n);
    if (pclose(pipe) != 0 && output_.empty()) return false;
    std::ifstream holder(dir_ + "/holder");
    holder >> holder_in_namespace_;
    total_ = Read(by_name);
    return true;
  }
  int Read(std::map<std::string, int>* by_name) {
    std::ifstream in(dir_ + "/execs");
    int total = 0;
    for (std::string name; std::getline(in, name); ++total) ++(*by_name)[name];
    return total;
  }
  static std::string Describe(const std::map<std::string, int>& by_name) {
    std::ostringstream text;
    for (const auto& [name, count] : by_name) text << name << " " << count << "; ";
    return text.str();
  }
  ScanRequest Inspect() const {
    ScanRequest request;
    request.units = {"vllm*.service"};
    request.nvidia_smi_timeout = milliseconds(2000);
    request.readiness = true;
    request.kernel_log = true;
    return request;
  }

  std::string dir_;
  std::string output_;
  HostPaths paths_;
  pid_t holder_ = -1;
  int holder_in_namespace_ = 0;
  int total_ = 0;
};

// The inspect of a dry run (the /dev/shm listing and the full scan in one
// round trip) with a /dev/shm candidate. Where the host has perl, the walk
// (the listing's fd and mapping pass, the scan's mappings and the kernel
// log) and the details are three perl runs: at most 9 programs (16 before the walk's perl ran the
// two queries, 12 before one systemctl show told the active units too, 11 before the walk's perl
// bounded the queries itself); on a host without perl (the shell path: find, stat, grep, sort) at
// most 27. The whole dry run on a simulated host, sshd and the command's wrappers included, is 17
// (bench/proc_count_bench.py).
TEST_F(ProcessBudgetTest, DryRunInspect) {
  for (bool perl : {true, false}) {
    std::map<std::string, int> by_name;
    ShmRequest listing;
    listing.patterns = {"nccl-*"};
    listing.dry_run = true;
    const std::string script = BatchScript({listing, Inspect()}, paths_);
    if (!CountIsolated(perl ? script : WithoutPerl(script), &by_name)) {
      GTEST_SKIP() << "no PID namespace of our own here (unshare --pid --mount-proc)";
    }
    ShmOutput shm;
    ScanOutput scan;
    ASSERT_TRUE(ParseShmOutput(output_, &shm, &scan).ok()) << output_;
    bool found = false;
    for (const DeviceFd& fd : scan.fds) found = found || fd.pid == holder_in_namespace_;
    EXPECT_TRUE(found) << "the holder, by the listing's fd pass";
    EXPECT_EQ(scan.processes.count(holder_in_namespace_), 1u) << "and described";
    EXPECT_FALSE(scan.pid_namespace.empty()) << "the PID namespace, by the details";
    EXPECT_LE(total_, perl ? 9 : 27) << perl << " " << Describe(by_name);
    EXPECT_EQ(by_name["systemctl"], 1) << Describe(by_name);
    // The listing (its candidates twice, the device, and without perl the
    // fd pass and the mappings) and without perl the details; the scan's
    // own fd pass is the listing's.
    EXPECT_LE(by_name["find"], perl ? 3 : 8) << Describe(by_name);
    EXPECT_EQ(by_name["perl"], perl ? 3 : 0) << Describe(by_name);
    EXPECT_EQ(by_name["nvidia-smi"], 2) << Describe(by_name);
  }
}

// The inspect alone (the default playbook's, no /dev/shm patterns): at most
// 4 programs where the host has perl, one of them perl (23 before the walk,
// the kernel log and the details went to perl; 12 before the walk's perl
// ran the GPU and compute-apps queries itself; 8 before systemctl ran once,
// its show telling the playbook's active units; 7 before the walk's perl
// bounded the queries without timeout; 5 before it described the holders
// itself).
TEST_F(ProcessBudgetTest, Inspect) {
  std::map<std::string, int> by_name;
  if (!CountIsolated(ScanScript(Inspect(), paths_), &by_name)) {
    GTEST_SKIP() << "no PID namespace of our own here (unshare --pid --mount-proc)";
  }
  ScanOutput scan;
  ASSERT_TRUE(ParseScanOutput(output_, &scan).ok()) << output_;
  EXPECT_EQ(scan.processes.count(holder_in_namespace_), 1u) << "the holder, found and described";
  EXPECT_LE(total_, 4) << Describe(by_name);
  EXPECT_EQ(by_name["perl"], 1) << Describe(by_name);
  EXPECT_EQ(by_name["nvidia-smi"], 2) << Describe(by_name);
  EXPECT_EQ(by_name["timeout"], 0) << Describe(by_name);
  EXPECT_EQ(by_name["systemctl"], 1) << Describe(by_name);
  EXPECT_EQ(scan.show_exit, 0) << "the playbook's units, shown";
  // The walk's perl runs both queries: no folder, no files, no cat.
  EXPECT_EQ(by_name["mktemp"] + by_name["cat"] + by_name["rm"], 0) << Describe(by_name);
}

// The quick re-scan after the wave with the /dev/shm clean after it: the
// GPU query, and for a candidate the fd pass and the mappings that tell
// whether it is in use.
TEST_F(ProcessBudgetTest, QuickRescanWithShmClean) {
  std::map<std::string, int> by_name;
  ScanRequest rescan = Inspect();
  rescan.units.clear();
  rescan.holders = false;
  ShmRequest clean;
  clean.patterns = {"nccl-*"};
  if (!CountIsolated(BatchScript({rescan, clean}, paths_), &by_name)) {
    GTEST_SKIP() << "no PID namespace of our own here (unshare --pid --mount-proc)";
  }
  EXPECT_LE(total_, 13) << Describe(by_name);
  EXPECT_EQ(by_name["nvidia-smi"], 1) << Describe(by_name);
}

// The unit stop and the TERM wave in one round trip, the target gone on its
// signal: the fresh fd and mapping check and the kill (one perl where the
// host has it, else find, stat, grep and sort, and kill(1): no perl at all),
// and the wait's polls.
TEST_F(ProcessBudgetTest, StopUnitsThenTerm) {
  for (bool perl : {true, false}) {
    if (holder_ > 0) waitpid(holder_, nullptr, 0);  // the last round's, signalled
    StartHolder();
    std::ifstream in("/proc/" + std::to_string(holder_) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    uint64_t start = 0;
    for (int i = 3; fields >> field; ++i) {
      if (i == 22) start = std::stoull(field);
    }
    SignalRequest wave;
    wave.signal = "TERM";
    wave.targets = {{static_cast<int>(holder_), start, true}};
    wave.wait = milliseconds(3000);
    wave.poll = milliseconds(100);
    std::map<std::string, int> by_name;
    const StopUnitsRequest stops{{"vllm.service"}, milliseconds(5000), wave.audit};
    const std::string script = BatchScript({stops, wave}, paths_);
    int n = Count(perl ? script : WithoutPerl(script), &by_name);
    ASSERT_NE(output_.find("sent " + std::to_string(holder_)), std::string::npos) << output_;
    // The holder, our child, stays a zombie until reaped: gone all the same.
    // Without perl the wait's polls ('sleep') depend on how soon the kernel
    // ends the holder, which a loaded machine delays: they are bounded by the
    // wait (3 s at 100 ms), the rest of the step by its budget: 9. With perl,
    // at most 4 and no sleep: one perl that walks, checks and kills,
    // systemctl and its timeout, and a perl that waits where the first look
    // still saw the holder.
    if (perl) {
      EXPECT_LE(n, 4) << Describe(by_name);
      EXPECT_GE(by_name["perl"], 1) << Describe(by_name);
      EXPECT_LE(by_name["perl"], 2) << Describe(by_name);
      EXPECT_EQ(by_name["sleep"], 0) << Describe(by_name);
    } else {
      EXPECT_LE(n - by_name["sleep"], 9) << Describe(by_name);
      EXPECT_EQ(by_name["perl"], 0) << Describe(by_name);
      EXPECT_LE(by_name["sleep"], 30) << Describe(by_name);
    }
  }
}

}  // namespace
}  // namespace fleetreap
