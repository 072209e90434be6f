#include "fleetreap/escalation/protect.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fleetreap {
namespace {

constexpr int kRoot = 0;
constexpr unsigned kKthread = 0x00200000;

// A holder whose executable file is owned by "uid" with "mode".
Holder Make(int pid, int ppid, const std::string& comm, const std::string& exe, int uid = kRoot,
            int mode = 0755, unsigned flags = 0) {
  Holder h;
  h.pid = pid;
  h.ppid = ppid;
  h.comm = comm;
  h.exe = exe;
  h.exe_uid = exe.empty() ? -1 : uid;
  h.exe_mode = exe.empty() ? -1 : mode;
  h.flags = flags;
  h.uid = kRoot;
  h.user = "root";
  return h;
}

TEST(ProtectTest, Table) {
  ProtectList list = ProtectList::Default();
  list.Add("/opt/agent/bin/*");
  list.Add("/srv/agents/gpu-agent");
  list.SetSession(5000, {4990, 4980, 1});
  list.SetPidFiles({{0, "4242\n"}, {1, "junk"}, {2, "4343"}, {3, "4444"}});
  struct Row {
    Holder holder;
    const char* reason;
    const char* named_like;
  };
  const Row rows[] = {
      {Make(1, 0, "systemd", "/usr/lib/systemd/systemd"), "pid 1", ""},
      {Make(77, 2, "kworker/0:1", "", kRoot, 0, kKthread), "kernel thread", ""},
      {Make(2, 0, "kthreadd", ""), "kernel thread", ""},
      // In a container PID 2 is an ordinary process, and so are its children.
      {Make(78, 2, "python3", "/usr/bin/python3.11"), "", ""},
      {Make(5000, 4990, "sh", "/usr/bin/dash"), "fleetreap session", ""},
      {Make(5001, 5000, "fuser", "/usr/bin/fuser"), "fleetreap session", ""},
      {Make(4980, 900, "sshd", "/usr/sbin/sshd"), "fleetreap session", ""},
      // An orphan reparented to PID 1 is not protected by the session rule.
      {Make(3000, 1, "python3", "/usr/bin/python3.11"), "", ""},
      {Make(812, 1, "nvidia-persiste", "/usr/bin/nvidia-persistenced"), "nvidia-persistenced", ""},
      {Make(813, 1, "nv-fabricmanage", "/usr/bin/nv-fabricmanager"), "nv-fabricmanager", ""},
      {Make(814, 1, "nv-hostengine", "/usr/bin/nv-hostengine (deleted)"), "nv-hostengine", ""},
      {Make(815, 1, "gdm-session-wor", "/usr/libexec/gdm-session-worker"), "gdm*", ""},
      {Make(816, 1, "agent", "/opt/agent/bin/agent"), "/opt/agent/bin/*", ""},
      // An operator's path entry may lie outside the system folders...
      {Make(817, 1, "gpu-agent", "/srv/agents/gpu-agent"), "/srv/agents/gpu-agent", ""},
      // ...but must still be root's.
      {Make(818, 1, "gpu-agent", "/srv/agents/gpu-agent", 1000), "", "/srv/agents/gpu-agent"},
      // The agents of a Kubernetes GPU node, from their images' /usr/bin.
      {Make(820, 1, "nvidia-device-p", "/usr/bin/nvidia-device-plugin"), "nvidia-device-plugin",
       ""},
      {Make(821, 1, "gpu-feature-dis", "/usr/bin/gpu-feature-discovery"), "gpu-feature-discovery",
       ""},
      {Make(822, 1, "nvidia-gridd", "/usr/bin/nvidia-gridd"), "nvidia-gridd", ""},
      {Make(823, 1, "nvsm-core", "/usr/bin/nvsm-core"), "nvsm*", ""},
      {Make(824, 1, "nvidia-persiste",
            "/nix/store/0c7xr5-nvidia-x11-580.95/bin/nvidia-persistenced", kRoot, 0555),
       "nvidia-persistenced", ""},
      // Named like a daemon, and not it: a user's copy, a copy in /tmp, a
      // root-owned copy outside the system folders, a writable one.
      {Make(900, 1, "sshd", "/home/gpuops/bin/sshd", 1000), "", "sshd"},
      {Make(901, 1, "nvidia-persiste", "/tmp/nvidia-persistenced", 1000), "",
       "nvidia-persistenced"},
      {Make(902, 1, "nv-hostengine", "/root/bin/nv-hostengine"), "", "nv-hostengine"},
      {Make(903, 1, "nvidia-smi", "/usr/local/bin/nvidia-smi", kRoot, 0777), "", "nvidia-smi"},
      {Make(904, 1, "nvidia-smi", "/usr/local/bin/nvidia-smi", kRoot, 0775), "", "nvidia-smi"},
      // The name in comm or argv[0] alone says nothing.
      {Make(905, 1, "nvidia-persiste", "/usr/bin/python3.11"), "", ""},
      {Make(906, 1, "VLLM::Worker_TP", "/usr/bin/python3.11"), "", ""},
      // PID files: a root-owned daemon the file names, though not in the list
      // by path; not a process whose comm is another's.
      {Make(4242, 1, "nvidia-persiste", "/run/nvidia/driver/bin/nvidia-persistenced"),
       "nvidia-persistenced (pid file)", "nvidia-persistenced"},
      {Make(4343, 1, "python3", "/usr/bin/python3.11"), "", ""},
      // Unreadable exe: the comm is the process's own choice, it protects
      // nothing (a leader-exited thread group's comm "sshd" neither).
      {Make(907, 1, "nvidia-persiste", ""), "", ""},
      {Make(908, 1, "sshd", ""), "", ""},
      // A stale PID file's number, landed on by a root python3 whose comm
      // reads like the daemon's: not the daemon.
      {Make(4444, 1, "nvlsm", "/usr/bin/python3.11"), "", ""},
      // The monitoring agents that hold NVML at 0 MiB.
      {Make(830, 1, "collectd", "/usr/sbin/collectd"), "collectd", ""},
      {Make(831, 1, "agent", "/opt/datadog-agent/bin/agent/agent"),
       "/opt/datadog-agent/bin/agent/agent", ""},
      {Make(832, 1, "zabbix-agent2-p",
            "/usr/libexec/zabbix-agent2-plugin/zabbix-agent2-plugin-nvidia-gpu"),
       "zabbix-agent2-plugin-nvidia-gpu", ""},
      {Make(833, 1, "otelopscol",
            "/opt/google-cloud-ops-agent/subagents/opentelemetry-collector/otelopscol"),
       "otelopscol", ""},
      // Another program called agent is not Datadog's.
      {Make(834, 1, "agent", "/usr/bin/agent"), "", ""},
  };
  for (const Row& row : rows) {
    ProtectDecision decision = list.Judge(row.holder);
    EXPECT_EQ(decision.reason, row.reason) << row.holder.pid << " " << row.holder.exe;
    if (decision.reason.empty()) {
      EXPECT_EQ(decision.named_like, row.named_like) << row.holder.pid << " " << row.holder.exe;
    }
  }
}

// MPS: "nvidia-cuda-mps-control -d" works for any user; the real
// executable run by a user is that user's job (seen on an H200, issue 24).
TEST(ProtectTest, MpsDaemonsAreProtectedOnlyWhenRootRunsThem) {
  ProtectList list = ProtectList::Default();
  for (const char* name : {"nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}) {
    Holder h =
        Make(700, 1, std::string(name).substr(0, 15), std::string("/usr/local/nvidia/bin/") + name);
    h.user = "root";
    EXPECT_EQ(list.Reason(h), name);
    h.user = "0";
    EXPECT_EQ(list.Reason(h), name);
    h.user = "gpuops";
    h.uid = 1000;
    ProtectDecision decision = list.Judge(h);
    EXPECT_EQ(decision.reason, "") << name;
    EXPECT_EQ(decision.named_like, name);
  }
  Holder persistenced = Make(701, 1, "nvidia-persiste", "/usr/bin/nvidia-persistenced");
  persistenced.user = "nvidia-persistenced";  // its --user: still the daemon
  persistenced.uid = 103;
  EXPECT_EQ(list.Reason(persistenced), "nvidia-persistenced");
}

// Protection is for the host's daemons: a genuine binary a user runs, or
// one whose environment preloads someone's library, is a job.
TEST(ProtectTest, OnlyTheHostsOwnDaemonsAreProtected) {
  ProtectList list = ProtectList::Default();
  for (const char* exe : {"/usr/bin/nv-hostengine", "/usr/bin/nvidia-smi", "/usr/sbin/sshd"}) {
    std::string name = std::string(exe).substr(std::string(exe).rfind('/') + 1);
    Holder user_run = Make(710, 1, name, exe);
    user_run.uid = 1000;
    user_run.user = "gpuops";
    ProtectDecision decision = list.Judge(user_run);
    EXPECT_EQ(decision.reason, "") << exe;
    EXPECT_EQ(decision.named_like, name) << exe;
    Holder preloaded = Make(711, 1, name, exe);
    preloaded.preloaded = true;
    decision = list.Judge(preloaded);
    EXPECT_EQ(decision.reason, "") << exe;
    EXPECT_EQ(decision.named_like, name) << exe;
    Holder unknown = Make(712, 1, name, exe);  // no status read
    unknown.uid = -1;
    unknown.user = "";
    EXPECT_EQ(list.Reason(unknown), "") << exe;
  }
  // A PID file's daemon, run by a user, is the user's too.
  list.SetPidFiles({{0, "4242"}});
  Holder by_file = Make(4242, 1, "nvidia-persiste", "/run/nvidia/driver/bin/nvidia-persistenced");
  EXPECT_EQ(list.Reason(by_file), "nvidia-persistenced (pid file)");
  by_file.uid = 1000;
  EXPECT_EQ(list.Reason(by_file), "");
}

// Every built-in entry protects a root-owned daemon in /usr/bin and no
// user's copy of it.
TEST(ProtectTest, EveryDefaultEntryNeedsARootOwnedSystemExecutable) {
  ProtectList list = ProtectList::Default();
  ASSERT_GE(list.entries().size(), 30u);
  for (const std::string& entry : list.entries()) {
    std::string name = entry.substr(entry.rfind('/') + 1);
    if (name.back() == '*') name = name.substr(0, name.size() - 1) + "-core";
    const bool path = entry[0] == '/';
    Holder daemon = Make(700, 1, name.substr(0, 15), path ? entry : "/usr/bin/" + name);
    EXPECT_EQ(list.Reason(daemon), entry);
    ProtectDecision copy = list.Judge(Make(701, 1, name.substr(0, 15), "/home/u/" + name, 1000));
    EXPECT_EQ(copy.reason, "") << entry;
    if (!path) {
      EXPECT_EQ(copy.named_like, entry);
    }
  }
}

TEST(ProtectTest, PidFilesAreTheDaemonsOwn) {
  const std::vector<DaemonPidFile>& files = DaemonPidFiles();
  ASSERT_EQ(files.size(), 8u);
  EXPECT_EQ(files[0].path, "/var/run/nvidia-persistenced/nvidia-persistenced.pid");
  ProtectList list = ProtectList::Default();
  for (const DaemonPidFile& file : files) {
    bool listed = false;
    for (const std::string& entry : list.entries()) listed = listed || entry == file.daemon;
    EXPECT_TRUE(listed) << file.daemon;
  }
}

// docs/protected-daemons.md has one row per built-in entry, in order, its
// first column the entry: the list and its sources cannot drift apart.
TEST(ProtectTest, DefaultListMatchesItsResearchedDoc) {
  std::ifstream in(FLEETREAP_SOURCE_DIR "/docs/protected-daemons.md");
  ASSERT_TRUE(in.good());
  std::vector<std::string> documented;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    size_t end = line.find('`', 3);
    documented.push_back(line.substr(3, end - 3));
  }
  EXPECT_EQ(documented, ProtectList::Default().entries());
}

TEST(ProtectTest, AddIgnoresEmptyAndDuplicates) {
  ProtectList list;
  list.AddAll({"", "a", "a", "b"});
  EXPECT_EQ(list.entries(), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace fleetreap
