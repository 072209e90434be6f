#include "fleetreap/protect.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

Holder Make(int pid, int ppid, const std::string& comm, const std::string& exe) {
  Holder h;
  h.pid = pid;
  h.ppid = ppid;
  h.comm = comm;
  h.exe = exe;
  return h;
}

TEST(ProtectTest, Table) {
  ProtectList list = ProtectList::Default();
  list.Add("/opt/agent/bin/*");
  list.SetSession(5000, {4990, 4980, 1});
  struct Row {
    Holder holder;
    const char* reason;
  };
  const Row rows[] = {
      {Make(1, 0, "systemd", "/usr/lib/systemd/systemd"), "pid 1"},
      {Make(77, 2, "kworker/0:1", ""), "kernel thread"},
      {Make(2, 0, "kthreadd", ""), "kernel thread"},
      {Make(5000, 4990, "sh", "/usr/bin/dash"), "fleetreap session"},
      {Make(5001, 5000, "fuser", "/usr/bin/fuser"), "fleetreap session"},
      {Make(4980, 900, "sshd", "/usr/sbin/sshd"), "fleetreap session"},
      // An orphan reparented to PID 1 is not protected by the session rule.
      {Make(3000, 1, "python3", "/usr/bin/python3.11"), ""},
      {Make(812, 1, "nvidia-persiste", "/usr/bin/nvidia-persistenced"),
       "nvidia-persistenced"},
      {Make(813, 1, "nv-fabricmanage", "/usr/bin/nv-fabricmanager"),
       "nv-fabricmanager"},
      {Make(814, 1, "nv-hostengine", "/usr/bin/nv-hostengine (deleted)"),
       "nv-hostengine"},
      {Make(815, 1, "gdm-session-wor", "/usr/libexec/gdm-session-worker"), "gdm*"},
      {Make(816, 1, "agent", "/opt/agent/bin/agent"), "/opt/agent/bin/*"},
      // A user process named like a daemon: the exe decides.
      {Make(900, 1, "nvidia-persiste", "/usr/bin/python3.11"), ""},
      {Make(901, 1, "nvidia-smi", "/home/u/venv/bin/python"), ""},
      {Make(902, 1, "VLLM::Worker_TP", "/usr/bin/python3.11"), ""},
      // Unreadable exe: comm may only protect, never expose.
      {Make(903, 1, "nvidia-persiste", ""), "nvidia-persistenced (by comm)"},
      {Make(904, 1, "nv-hostengine", ""), "nv-hostengine (by comm)"},
      {Make(905, 1, "VLLM::Worker_TP", ""), ""},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(list.Reason(row.holder), row.reason)
        << row.holder.pid << " " << row.holder.comm;
  }
}

TEST(ProtectTest, AddIgnoresEmptyAndDuplicates) {
  ProtectList list;
  list.AddAll({"", "a", "a", "b"});
  EXPECT_EQ(list.entries(), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace fleetreap
