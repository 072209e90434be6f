#include "fleetreap/escalation/scope.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "fleetreap/report/report.h"

namespace fleetreap {
namespace {

TEST(ScopeTest, ParseGpuList) {
  struct Row {
    const char* text;
    std::vector<int> gpus;
    const char* error;
  };
  const Row rows[] = {
      {"0", {0}, ""},
      {"4-7", {4, 5, 6, 7}, ""},
      {"0,2-3,2", {0, 2, 3}, ""},
      {"", {}, "usage: --gpus: \"\" is not a GPU index or range (0,2,4-7)"},
      {"1,", {}, "usage: --gpus: \"\" is not a GPU index or range (0,2,4-7)"},
      {"3-1", {}, "usage: --gpus: \"3-1\" is not a GPU index or range (0,2,4-7)"},
      {"gpu0", {}, "usage: --gpus: \"gpu0\" is not a GPU index or range (0,2,4-7)"},
      {"-1", {}, "usage: --gpus: \"-1\" is not a GPU index or range (0,2,4-7)"},
  };
  for (const Row& row : rows) {
    std::vector<int> gpus;
    Status status = ParseGpuList(row.text, "--gpus", &gpus);
    EXPECT_EQ(status.ok() ? "" : status.ToString(), row.error) << row.text;
    if (status.ok()) {
      EXPECT_EQ(gpus, row.gpus) << row.text;
    }
  }
}

// SLURM_JOB_GPUS are device minors; on a host where /dev/nvidia0 is
// nvidia-smi's GPU 6 (PrincetonUniversity/jobstats#34) they must become
// indexes through the driver's minors, and an unknown minor fails the host.
TEST(ScopeTest, SlurmGpusAreMinorsTranslatedToIndexes) {
  std::vector<GpuReading> gpus;
  const char* buses[] = {"00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0",
                         "00000000:5D:00.0", "00000000:9B:00.0", "00000000:BB:00.0",
                         "00000000:CB:00.0", "00000000:DB:00.0"};
  for (int i = 0; i < 8; ++i) {
    GpuReading gpu;
    gpu.index = i;
    gpu.bus_id = buses[i];
    gpus.push_back(gpu);
  }
  // The driver's minors, by the bus ids /proc/driver/nvidia/gpus names.
  const int minors[] = {6, 1, 2, 3, 4, 5, 0, 7};
  std::map<std::string, int> minor_by_bus_id;
  for (int i = 0; i < 8; ++i) {
    std::string bus = std::string("0000:") + (buses[i] + 9);
    for (char& c : bus) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    minor_by_bus_id[bus] = minors[i];
  }
  Scope scope;
  ASSERT_TRUE(SlurmScope("41", "0,1,2,3", &scope).ok());
  EXPECT_TRUE(scope.gpus_are_minors);
  ASSERT_TRUE(TranslateGpuMinors(minor_by_bus_id, gpus, &scope).ok());
  EXPECT_EQ(*scope.gpus, (std::vector<int>{1, 2, 3, 6}));
  EXPECT_FALSE(scope.gpus_are_minors);
  ASSERT_TRUE(TranslateGpuMinors(minor_by_bus_id, gpus, &scope).ok());  // once
  EXPECT_EQ(*scope.gpus, (std::vector<int>{1, 2, 3, 6}));

  ASSERT_TRUE(SlurmScope("41", "6,9", &scope).ok());
  Status unknown = TranslateGpuMinors(minor_by_bus_id, gpus, &scope);
  EXPECT_EQ(unknown.ToString(),
            "command_failed: SLURM_JOB_GPUS minor 9: no GPU of this host has device minor 9 "
            "(the driver's minors: 0,1,2,3,4,5,6,7)");
  ASSERT_TRUE(SlurmScope("41", "0", &scope).ok());
  EXPECT_EQ(TranslateGpuMinors({}, gpus, &scope).ToString(),
            "command_failed: SLURM_JOB_GPUS minor 0: no GPU of this host has device minor 0 "
            "(the driver's minors: none read)");
  Scope flags;  // --gpus are indexes: left alone
  flags.gpus = std::vector<int>{0};
  ASSERT_TRUE(TranslateGpuMinors({}, gpus, &flags).ok());
  EXPECT_EQ(*flags.gpus, std::vector<int>{0});
}

TEST(ScopeTest, AnIndexTheHostLacksFailsIt) {
  std::vector<GpuReading> gpus(8);
  for (int i = 0; i < 8; ++i) gpus[i].index = i;
  Scope scope;
  EXPECT_TRUE(CheckGpuIndexes(gpus, scope).ok());  // no list
  scope.gpus = std::vector<int>{4, 5, 6, 7};
  EXPECT_TRUE(CheckGpuIndexes(gpus, scope).ok());
  scope.gpus = std::vector<int>{9, 10, 11, 12};
  EXPECT_EQ(CheckGpuIndexes(gpus, scope).ToString(),
            "command_failed: --gpus 9-12: this host has no GPU 9-12 (its GPUs: 0-7)");
  scope.gpus = std::vector<int>{6, 7, 8};
  EXPECT_EQ(CheckGpuIndexes(gpus, scope).ToString(),
            "command_failed: --gpus 6-8: this host has no GPU 8 (its GPUs: 0-7)");
  EXPECT_EQ(CheckGpuIndexes({}, scope).ToString(),
            "command_failed: --gpus 6-8: this host has no GPU 6-8 (its GPUs: none listed)");
  scope.gpus_are_minors = true;  // TranslateGpuMinors checks those
  EXPECT_TRUE(CheckGpuIndexes(gpus, scope).ok());
}

TEST(ScopeTest, SlurmScopeAndDescription) {
  Scope scope;
  ASSERT_TRUE(SlurmScope("42", "1,3", &scope).ok());
  EXPECT_EQ(DescribeScope(scope), "GPUs 1,3, Slurm job 42 (from SLURM_JOB_ID, SLURM_JOB_GPUS)");
  ASSERT_TRUE(SlurmScope("42", "", &scope).ok());
  EXPECT_FALSE(scope.gpus);
  EXPECT_EQ(SlurmScope("42", "gpu:1", &scope).ToString(),
            "usage: SLURM_JOB_GPUS: \"gpu:1\" is not a GPU index or range (0,2,4-7)");
  EXPECT_EQ(DescribeScope(Scope()), "");
}

Holder Worker(int pid, std::vector<int> gpus, const std::string& cgroup) {
  Holder h;
  h.pid = pid;
  h.comm = "VLLM::Worker_TP";
  h.gpus = {0, 1, 2, 3};
  h.charged_gpus = std::move(gpus);
  h.owner = OwnerFromCgroup(cgroup);
  return h;
}

TEST(ScopeTest, OutOfScopeReason) {
  Scope cgroup;
  cgroup.cgroup = "/system.slice/slurmstepd.scope/job_42";
  cgroup.source = "flags";
  EXPECT_EQ(
      OutOfScopeReason(Worker(1, {0}, "/system.slice/slurmstepd.scope/job_42/step_0"), cgroup), "");
  EXPECT_EQ(OutOfScopeReason(Worker(1, {0}, "/system.slice/slurmstepd.scope/job_421"), cgroup),
            "cgroup /system.slice/slurmstepd.scope/job_421, outside --cgroup "
            "/system.slice/slurmstepd.scope/job_42");
  EXPECT_EQ(OutOfScopeReason(Worker(1, {0}, ""), cgroup),
            "cgroup unknown, outside --cgroup /system.slice/slurmstepd.scope/job_42");
}

TEST(ScopeTest, SparePods) {
  Scope spare;
  spare.spare_pods = true;
  spare.source = "flags";
  EXPECT_FALSE(spare.empty());
  EXPECT_EQ(DescribeScope(spare), "Kubernetes pods spared");
  const std::string pod =
      "/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b.slice/"
      "cri-containerd-" +
      std::string(64, 'a') + ".scope";
  EXPECT_EQ(OutOfScopeReason(Worker(1, {0}, pod), spare),
            "owned by Kubernetes pod UID 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b (--spare-pods)");
  EXPECT_EQ(OutOfScopeReason(Worker(2, {0}, "/system.slice/vllm.service"), spare), "");
  EXPECT_EQ(OutOfScopeReason(
                Worker(3, {0}, "/system.slice/docker-" + std::string(64, 'b') + ".scope"), spare),
            "");
  EXPECT_EQ(OutOfScopeReason(Worker(4, {0}, ""), spare),
            "cgroup unknown, a pod may own it (--spare-pods)");
  // With a Slurm job: both hold, the job's rule first.
  Scope job;
  ASSERT_TRUE(SlurmScope("42", "0-3", &job).ok());
  job.spare_pods = true;
  EXPECT_EQ(DescribeScope(job),
            "GPUs 0-3, Slurm job 42 (from SLURM_JOB_ID, SLURM_JOB_GPUS), Kubernetes pods spared");
  EXPECT_EQ(OutOfScopeReason(Worker(5, {0}, "/system.slice/slurmstepd.scope/job_42/step_0"), job),
            "");

  // A GPU that only a spared pod holds stays busy: the node is not empty.
  Holder in_pod = Worker(10, {1}, pod);
  in_pod.gpus = {1};
  in_pod.fate = HolderFate::kOutOfScope;
  GpuReading busy;
  busy.index = 1;
  busy.used_mib = 70000;
  busy.state = GpuState::kBusy;
  std::vector<GpuReading> gpus = {busy};
  ApplyScopeToGpus(spare, {in_pod}, &gpus);
  EXPECT_EQ(gpus[0].state, GpuState::kBusy);
}

TEST(ScopeTest, ApplyScopeToGpus) {
  auto gpu = [](int index, GpuState state) {
    GpuReading g;
    g.index = index;
    g.used_mib = 1000;
    g.state = state;
    return g;
  };
  Holder theirs = Worker(10, {1}, "/system.slice/other.service");
  theirs.gpus = {1};
  theirs.fate = HolderFate::kOutOfScope;
  Holder ours = Worker(11, {0}, "/system.slice/ours.service");
  ours.gpus = {0};
  // --gpus 0,1: GPU 2 is not ours; GPU 1 is ours and someone else's holder
  // keeps it busy.
  Scope listed;
  listed.gpus = std::vector<int>{0, 1};
  listed.source = "flags";
  std::vector<GpuReading> gpus = {gpu(0, GpuState::kBusy), gpu(1, GpuState::kBusy),
                                  gpu(2, GpuState::kBusy)};
  ApplyScopeToGpus(listed, {theirs, ours}, &gpus);
  EXPECT_EQ(gpus[0].state, GpuState::kBusy);
  EXPECT_EQ(gpus[1].state, GpuState::kBusy);
  EXPECT_EQ(gpus[2].state, GpuState::kOutOfScope);
  EXPECT_EQ(gpus[2].detail, "outside --gpus 0-1");
  // --cgroup only: a GPU only another tenant uses is theirs.
  Scope cgroup;
  cgroup.cgroup = "/system.slice/ours.service";
  gpus = {gpu(0, GpuState::kBusy), gpu(1, GpuState::kBusy)};
  ApplyScopeToGpus(cgroup, {theirs, ours}, &gpus);
  EXPECT_EQ(gpus[0].state, GpuState::kBusy);
  EXPECT_EQ(gpus[1].state, GpuState::kOutOfScope);
  EXPECT_EQ(gpus[1].detail, "held only by out-of-scope VLLM::Worker_TP (10)");
  EXPECT_TRUE(GpuStateIsClean(GpuState::kOutOfScope));
  // A holder whose cgroup is unknown (its leader exited, or it lies outside
  // this shell's cgroup namespace) may be the job's: its GPU stays busy.
  for (const std::string& unknown : {std::string(), std::string("/../..")}) {
    Holder unread = Worker(12, {1}, unknown);
    unread.gpus = {1};
    unread.fate = HolderFate::kOutOfScope;
    gpus = {gpu(1, GpuState::kBusy)};
    ApplyScopeToGpus(cgroup, {unread}, &gpus);
    EXPECT_EQ(gpus[0].state, GpuState::kBusy) << unknown;
  }
}

}  // namespace
}  // namespace fleetreap
