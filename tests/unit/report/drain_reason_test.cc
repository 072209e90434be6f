#include "fleetreap/report/drain_reason.h"

#include <gtest/gtest.h>

#include <string>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::Gpus;
using testing_fixture::MakeHolder;

// The Slurm shared node after job 41's epilog: GPU 5 is still held.
HostReport HeldHost() {
  HostReport host = testing_fixture::BaseHost("node07", 7);
  host.status = HostStatus::kDirty;
  host.gpus_after = Gpus({0, 0, 0, 0, 0, 70000, 0, 0});
  Holder daemon =
      MakeHolder(900, "nvidia-persiste", {0, 1, 2, 3, 4, 5, 6, 7}, HolderFate::kProtected);
  Holder other = MakeHolder(4241, "VLLM::Worker_TP4", {4, 5}, HolderFate::kUnkillable);
  Holder worker = MakeHolder(4242, "VLLM::Worker_TP5", {4, 5}, HolderFate::kUnkillable);
  worker.charged_gpus = {5};
  Holder gone = MakeHolder(4000, "VLLM::Worker_TP0", {5}, HolderFate::kKilled);
  host.holders = {gone, daemon, other, worker};
  return host;
}

TEST(DrainReasonTest, Reasons) {
  struct Case {
    const char* what;
    HostReport host;
    std::string reason;
  };
  std::vector<Case> cases;
  cases.push_back({"clean", testing_fixture::CleanHost("gpu01", 1), ""});
  cases.push_back({"charged holder", HeldHost(),
                   "fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5), unkillable in "
                   "state D"});
  HostReport uncharged = HeldHost();
  uncharged.holders[3].charged_gpus.clear();
  uncharged.holders[2].fate = HolderFate::kOutOfScope;
  uncharged.holders[3].fate = HolderFate::kObserved;
  cases.push_back({"first holder of the file, daemons last", uncharged,
                   "fleetreap: GPU 5 held by pid 4241 (VLLM::Worker_TP4), outside the "
                   "run's scope"});
  HostReport nobody = HeldHost();
  nobody.holders.resize(2);
  nobody.holders[1].fate = HolderFate::kTerminated;
  cases.push_back({"busy, holder unknown", nobody, "fleetreap: GPU 5 busy (70000 MiB)"});
  HostReport two = HeldHost();
  two.gpus_after[7].state = GpuState::kGhost;
  two.gpus_after[7].used_mib = 2048;
  two.gpus_after[6].state = GpuState::kLost;
  cases.push_back({"more GPUs", two,
                   "fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5), unkillable in "
                   "state D (+2 more GPUs not clean)"});
  HostReport mixed = testing_fixture::MixedFleet().hosts[12];  // gpu13
  cases.push_back({"ghost", mixed,
                   "fleetreap: GPU 3 ghost memory (2048 MiB, no process "
                   "holds it) (+1 more GPU not clean)"});
  cases.push_back({"unreachable", testing_fixture::MixedFleet().hosts[13],
                   "fleetreap: unreachable: connect_timeout: Timeout connecting to 127.0.1.14"});
  cases.push_back({"failed", testing_fixture::MixedFleet().hosts[14],
                   "fleetreap: failed: sudo: sudo: a password is required"});
  cases.push_back({"lost, escaped", testing_fixture::DriverSignalsFleet().hosts[0],
                   "fleetreap: GPU 0000:B1:00.0 lost: Unable to determine the device handle "
                   "for GPU0000:B1:00.0: Unknown Error\\x1b[2J"});
  HostReport hostile = HeldHost();
  hostile.holders[3].comm = "evil\nline";
  cases.push_back({"control bytes in a name", hostile,
                   "fleetreap: GPU 5 held by pid 4242 (evil\\nline), unkillable in state D"});
  HostReport smi = testing_fixture::BaseHost("gpu30", 30);
  smi.status = HostStatus::kDirty;
  smi.nvidia_smi_error = "NVIDIA-SMI has failed because it couldn't communicate";
  cases.push_back({"nvidia-smi", smi,
                   "fleetreap: nvidia-smi failed: NVIDIA-SMI has failed because it couldn't "
                   "communicate"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(DrainReason(c.host), c.reason);
  }
}

TEST(DrainReasonTest, ReasonsAreOneBoundedLine) {
  HostReport host = HeldHost();
  host.holders[3].comm = std::string(5000, 'x');
  std::string reason = DrainReason(host);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
  EXPECT_LT(reason.size(), 300u);
  EXPECT_EQ(reason.rfind(kDrainReasonPrefix, 0), 0u);
}

TEST(DrainReasonTest, RendersOneLinePerHostNotClean) {
  RunReport run = testing_fixture::MixedFleet();
  run.not_started = {"gpu17"};
  EXPECT_EQ(RenderDrainReasons(run),
            "gpu13 fleetreap: GPU 3 ghost memory (2048 MiB, no process holds it) (+1 more "
            "GPU not clean)\n"
            "gpu14 fleetreap: unreachable: connect_timeout: Timeout connecting to 127.0.1.14\n"
            "gpu15 fleetreap: failed: sudo: sudo: a password is required\n"
            "gpu16 fleetreap: unreachable: auth: Access denied for 'root' <publickey> & "
            "\"password\"\n"
            "gpu17 fleetreap: not started\n");
  run.hosts.resize(12);
  run.not_started.clear();
  EXPECT_EQ(RenderDrainReasons(run), "");
}

TEST(DrainReasonTest, DryRunListsHostsNotCleanNow) {
  RunReport run = testing_fixture::DryRunFleet();
  std::string reasons = RenderDrainReasons(run);
  EXPECT_EQ(reasons.rfind("gpu01 fleetreap: GPU 0 held by pid 6000 (python3) (+1 more GPU not "
                          "clean)\n",
                          0),
            0u)
      << reasons;
}

}  // namespace
}  // namespace fleetreap
