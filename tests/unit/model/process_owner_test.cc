#include "fleetreap/model/process_owner.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(ProcessOwnerTest, CgroupPathOf) {
  struct Row {
    const char* text;
    const char* path;
  };
  const Row rows[] = {
      {"0::/system.slice/vllm.service\n", "/system.slice/vllm.service"},
      // Hybrid: the v2 line is the root, name=systemd says more.
      {"12:pids:/\n1:name=systemd:/system.slice/docker-ab.scope\n0::/\n",
       "/system.slice/docker-ab.scope"},
      // cgroup v1 Slurm: the first controller that says anything.
      {"11:freezer:/slurm/uid_1000/job_42/step_0\n4:memory:/slurm/uid_1000/job_42/step_0\n",
       "/slurm/uid_1000/job_42/step_0"},
      // Slurm's cgroup/v1 plugin (RHEL 8): the job is in the controllers'
      // hierarchies, name=systemd names slurmd's unit; the job wins.
      {"12:freezer:/slurm/uid_0/job_41/step_0\n4:memory:/slurm/uid_0/job_41/step_0\n"
       "1:name=systemd:/system.slice/slurmd.service\n",
       "/slurm/uid_0/job_41/step_0"},
      // Hybrid, as a real slurmd made it in the simulated fleet: v2 line last.
      {"9:name=systemd:/\n6:freezer:/slurm/uid_1000/job_3/step_batch\n5:devices:/\n"
       "0::/system.slice/slurmd.service\n",
       "/slurm/uid_1000/job_3/step_batch"},
      {"6:freezer:/slurm_gpu07/uid_0/job_5/step_extern\n0::/system.slice/slurmd.service\n",
       "/slurm_gpu07/uid_0/job_5/step_extern"},
      // Not Slurm's layout: the v2 line still wins.
      {"6:freezer:/slurm/job_5\n0::/system.slice/slurmd.service\n", "/system.slice/slurmd.service"},
      {"0::/\n", ""},
      {"garbage\n0:x\n", ""},
      {"", ""},
  };
  for (const Row& row : rows) EXPECT_EQ(CgroupPathOf(row.text), row.path) << row.text;
}

TEST(ProcessOwnerTest, OwnerFromCgroup) {
  const std::string id(64, 'a');
  const std::string uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  std::string uid_ = uid;
  for (char& c : uid_) c = c == '-' ? '_' : c;
  struct Row {
    std::string path;
    std::string describe;
  };
  const Row rows[] = {
      {"/system.slice/vllm.service", "unit vllm.service"},
      {"/system.slice/docker-" + id + ".scope", "docker aaaaaaaaaaaa"},
      {"/system.slice/docker/" + id, "docker aaaaaaaaaaaa"},
      {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_ +
           ".slice/cri-containerd-" + id + ".scope",
       "pod " + uid + ", containerd aaaaaaaaaaaa"},
      {"/kubepods/burstable/pod" + uid + "/" + id, "pod " + uid + ", containerd aaaaaaaaaaaa"},
      {"/machine.slice/libpod-" + id + ".scope", "podman aaaaaaaaaaaa"},
      {"/system.slice/crio-" + id + ".scope", "crio aaaaaaaaaaaa"},
      {"/system.slice/slurmstepd.scope/job_42/step_0/user/task_0", "slurm job 42 step 0"},
      {"/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0", "slurm job 42 step batch"},
      {"/slurm/uid_1000/job_7/step_extern", "slurm job 7 step extern"},
      // The unit that runs containers or jobs does not own them.
      {"/system.slice/containerd.service/kubepods-pod" + uid_ + ".slice:cri-containerd:" + id,
       "unit containerd.service"},
      {"/system.slice/slurmd.service/job_9", "slurm job 9"},
      {"/user.slice/user-1000.slice/session-3.scope", ""},
      // A user's delegated subtree names nothing, whatever its folders say.
      {"/user.slice/user-1000.slice/user@1000.service/app.slice/kubepods-besteffort-pod" + uid_ +
           ".slice/cri-containerd-" + id + ".scope",
       "unit user@1000.service"},
      {"/user.slice/user-1000.slice/user@1000.service/nvidia-persistenced.service",
       "unit user@1000.service"},
      {"/user.slice/user-1000.slice/user@1000.service/job_42/step_0", "unit user@1000.service"},
      {"/system.slice/docker-xyz.scope", ""},
      {"/job_x/step_0", ""},
      {"", ""},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(DescribeOwner(OwnerFromCgroup(row.path)), row.describe) << row.path;
  }
  ProcessOwner restarting = OwnerFromCgroup("/system.slice/vllm.service");
  restarting.unit_restart = "always";
  EXPECT_EQ(DescribeOwner(restarting), "unit vllm.service (Restart=always)");
}

TEST(ProcessOwnerTest, CgroupIsUnder) {
  EXPECT_TRUE(CgroupIsUnder("/a/b", "/a"));
  EXPECT_TRUE(CgroupIsUnder("/a", "/a/"));
  EXPECT_TRUE(CgroupIsUnder("/a/b", "/"));
  EXPECT_FALSE(CgroupIsUnder("/ab", "/a"));
  EXPECT_FALSE(CgroupIsUnder("", "/a"));
  EXPECT_FALSE(CgroupIsUnder("", "/"));
}

}  // namespace
}  // namespace fleetreap
