#include "fleetreap/report/host_outcome.h"

#include <gtest/gtest.h>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

using testing_fixture::BaseHost;
using testing_fixture::CleanedHost;
using testing_fixture::CleanHost;
using testing_fixture::Gpus;
using testing_fixture::MakeHolder;
using testing_fixture::MixedFleet;

TEST(HostOutcomeTest, OneLinePerKind) {
  HostReport protected_small = CleanHost("a", 1);
  protected_small.gpus_after = Gpus({0, 12, 0, 0}, {GpuState::kClean, GpuState::kProtectedOnly,
                                                    GpuState::kClean, GpuState::kClean});
  HostReport term_only = CleanedHost("b", 2);
  term_only.holders.resize(3);
  term_only.units_stopped.clear();
  term_only.shm_removed.clear();
  HostReport gone = CleanHost("c", 3);
  gone.holders.push_back(MakeHolder(7, "python3", {0}, HolderFate::kGone));
  gone.term_sent = 1;
  HostReport no_gpus = CleanHost("d", 4);
  no_gpus.gpus_before.clear();
  no_gpus.gpus_after.clear();
  HostReport failed_cmd = BaseHost("e", 5);
  failed_cmd.status = HostStatus::kFailed;
  failed_cmd.error_kind = ErrorKind::kCommandFailed;
  failed_cmd.error_message = "fuser: not found";
  HostReport hostile = BaseHost("j", 10);
  hostile.status = HostStatus::kFailed;
  hostile.error_kind = ErrorKind::kParse;
  hostile.error_message = "bad\x1b]0;pwned\x07 line\nnext " + std::string(200, 'x');
  HostReport failed_bare = BaseHost("f", 6);
  failed_bare.status = HostStatus::kFailed;
  HostReport dirty_unknown = BaseHost("g", 7);
  dirty_unknown.status = HostStatus::kDirty;
  HostReport smi = BaseHost("h", 8);
  smi.status = HostStatus::kDirty;
  smi.nvidia_smi_error = "NVIDIA-SMI has failed";
  HostReport lost = CleanHost("i", 9);
  lost.status = HostStatus::kDirty;
  lost.gpus_after = Gpus({0, 0}, {GpuState::kLost, GpuState::kMissing});
  lost.reset_blocked_by = "nvidia-persistenced";
  lost.respawning_parent = "1234 (python3)";

  struct Row {
    HostReport host;
    OutcomeKind kind;
    std::string detail;
  };
  RunReport mixed = MixedFleet();
  const Row rows[] = {
      {mixed.hosts[0], OutcomeKind::kClean, "8/8 GPUs 0 MiB"},
      {protected_small, OutcomeKind::kClean, "4/4 GPUs <= 12 MiB"},
      {no_gpus, OutcomeKind::kClean, "0 GPUs"},
      {mixed.hosts[4], OutcomeKind::kCleaned,
       "8 killed (TERM 6, KILL 2), 1 unit stopped, 2 /dev/shm entries removed"},
      {term_only, OutcomeKind::kCleaned, "3 killed (TERM 3)"},
      {gone, OutcomeKind::kCleaned, "1 gone"},
      {mixed.hosts[12], OutcomeKind::kDirty,
       "GPU 7 busy, GPU 3 ghost memory (2048 MiB), 1 unkillable; after 7 killed (TERM 7)"},
      {dirty_unknown, OutcomeKind::kDirty, "not clean"},
      {smi, OutcomeKind::kDirty, "nvidia-smi failed"},
      {lost, OutcomeKind::kDirty,
       "GPU 0 lost, GPU 1 missing, holders respawning, reset blocked by "
       "nvidia-persistenced"},
      {mixed.hosts[13], OutcomeKind::kUnreachable, "connect_timeout after 3 attempts"},
      {mixed.hosts[14], OutcomeKind::kFailed, "sudo"},
      {mixed.hosts[15], OutcomeKind::kUnreachable, "auth"},
      {failed_cmd, OutcomeKind::kFailed, "command_failed: fuser: not found"},
      {failed_bare, OutcomeKind::kFailed, "failed"},
      {hostile, OutcomeKind::kFailed,
       "parse: bad?]0;pwned? line next " + std::string(136, 'x') + "..."},
  };
  for (const Row& row : rows) {
    HostOutcome outcome = OutcomeOf(row.host, /*dry_run=*/false);
    EXPECT_EQ(OutcomeKindLabel(outcome.kind), std::string(OutcomeKindLabel(row.kind)))
        << row.host.name << ": " << outcome.detail;
    EXPECT_EQ(outcome.detail, row.detail) << row.host.name;
  }
}

TEST(HostOutcomeTest, DryRunSaysWhatWouldHappen) {
  RunReport dry = testing_fixture::DryRunFleet();
  struct Row {
    size_t index;
    OutcomeKind kind;
    const char* detail;
  };
  const Row rows[] = {
      {0, OutcomeKind::kWouldClean,
       "would signal 2 (TERM 2), would stop 1 unit, would remove 1 /dev/shm entry"},
      {2, OutcomeKind::kDirty, "GPU 5 ghost memory (512 MiB)"},
      {3, OutcomeKind::kUnreachable, "connect_timeout after 3 attempts"},
  };
  for (const Row& row : rows) {
    HostOutcome outcome = OutcomeOf(dry.hosts[row.index], /*dry_run=*/true);
    EXPECT_EQ(outcome.kind, row.kind) << row.index;
    EXPECT_EQ(outcome.detail, row.detail) << row.index;
  }
  // A would-kill next to an unkillable holder is still a dirty host.
  HostReport mixed = dry.hosts[0];
  mixed.holders.push_back(MakeHolder(9, "python3", {2}, HolderFate::kUnkillable));
  mixed.holders.push_back(MakeHolder(10, "python3", {3}, HolderFate::kWouldKill));
  HostOutcome outcome = OutcomeOf(mixed, /*dry_run=*/true);
  EXPECT_EQ(outcome.kind, OutcomeKind::kDirty);
  EXPECT_EQ(outcome.detail,
            "GPUs 0,1 busy, 1 unkillable; would signal 3 (TERM 2, KILL 1), would "
            "stop 1 unit, would remove 1 /dev/shm entry");
}

TEST(HostOutcomeTest, ChangedOnlyWhenSomethingWasDone) {
  RunReport mixed = MixedFleet();
  EXPECT_FALSE(HostChanged(mixed.hosts[0]));
  EXPECT_TRUE(HostChanged(mixed.hosts[4]));
  EXPECT_TRUE(HostChanged(mixed.hosts[12]));
  EXPECT_FALSE(HostChanged(mixed.hosts[13]));
  EXPECT_EQ(KilledSummary(mixed.hosts[0]), "");
  EXPECT_EQ(KilledSummary(mixed.hosts[4]), "8 killed (TERM 6, KILL 2)");
}

TEST(HostOutcomeTest, GroupsIdenticalOutcomesProblemsFirst) {
  RunReport run = MixedFleet();
  run.not_started = {"gpu17", "gpu18"};
  std::vector<OutcomeGroup> groups = GroupOutcomes(run);
  ASSERT_EQ(groups.size(), 7u);
  EXPECT_EQ(groups[0].kind, OutcomeKind::kDirty);
  EXPECT_EQ(groups[1].kind, OutcomeKind::kFailed);
  EXPECT_EQ(groups[2].kind, OutcomeKind::kUnreachable);
  EXPECT_EQ(groups[3].kind, OutcomeKind::kUnreachable);
  EXPECT_EQ(groups[4].kind, OutcomeKind::kNotStarted);
  EXPECT_EQ(groups[4].names, run.not_started);
  EXPECT_EQ(groups[5].kind, OutcomeKind::kCleaned);
  EXPECT_EQ(groups[5].names, (std::vector<std::string>{"gpu05", "gpu07"}));
  EXPECT_EQ(groups[6].kind, OutcomeKind::kClean);
  EXPECT_EQ(groups[6].names.size(), 10u);
}

// The fold reads values, never a host's words: two hosts whose messages
// differ in a number are two rows, not one with the numbers added up.
TEST(HostOutcomeTest, AHostsNumbersAreWordsNotCounts) {
  RunReport run;
  for (int i = 1; i <= 2; ++i) {
    HostReport host = BaseHost("gpu0" + std::to_string(i), i);
    host.status = HostStatus::kFailed;
    host.error_kind = ErrorKind::kCommandFailed;
    host.error_message = "nvidia-smi exited " + std::to_string(i + 2);
    run.hosts.push_back(host);
  }
  HostReport unit = CleanedHost("gpu03", 3);
  run.hosts.push_back(unit);
  const std::vector<OutcomeGroup> groups = GroupOutcomes(run);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].detail, "command_failed: nvidia-smi exited 3");
  EXPECT_EQ(groups[1].detail, "command_failed: nvidia-smi exited 4");
  // Counts still fold: two cleaned hosts with 8 and 1 killed share a row, totalled.
  HostReport one = CleanedHost("gpu04", 4);
  one.holders.erase(one.holders.begin() + 1, one.holders.begin() + 5);  // 2 TERM, 2 KILL left
  run.hosts = {unit, one};
  const std::vector<OutcomeGroup> cleaned = GroupOutcomes(run);
  ASSERT_EQ(cleaned.size(), 1u) << cleaned[0].detail;
  EXPECT_NE(cleaned[0].detail.find(" across the 2 hosts"), std::string::npos) << cleaned[0].detail;
}

}  // namespace
}  // namespace fleetreap

namespace fleetreap {
namespace {

// What a scoped or guarded run left alone is said, not hidden.
TEST(HostOutcomeTest, SaysWhatWasLeftAlone) {
  HostReport host = testing_fixture::CleanedHost("shared", 1);
  host.holders.clear();
  host.holders.push_back(testing_fixture::MakeHolder(7, "python3", {0}, HolderFate::kTerminated));
  host.holders.push_back(testing_fixture::MakeHolder(8, "python3", {4}, HolderFate::kOutOfScope));
  host.holders.push_back(testing_fixture::MakeHolder(9, "sshd", {3}, HolderFate::kKilled));
  host.holders.back().named_like = "sshd";
  host.units_stopped.clear();
  host.shm_removed.clear();
  host.units_skipped = {"gpu-telemetry.service: it runs protected nv-hostengine (pid 4)"};
  EXPECT_EQ(OutcomeOf(host, false).detail,
            "2 killed (TERM 1, KILL 1), 1 out of scope, 1 named like a daemon, not it, "
            "1 unit skipped");
  // A dry run as another job's epilog: nothing would be signalled, and the
  // job's GPU is still busy with the co-tenant's holders.
  HostReport epilog = testing_fixture::CleanHost("epilog", 2);
  epilog.status = HostStatus::kDirty;
  epilog.gpus_after = testing_fixture::Gpus({2575}, {GpuState::kBusy});
  epilog.holders = {testing_fixture::MakeHolder(8, "python3", {0}, HolderFate::kOutOfScope)};
  HostOutcome outcome = OutcomeOf(epilog, /*dry_run=*/true);
  EXPECT_EQ(outcome.kind, OutcomeKind::kDirty);
  EXPECT_EQ(outcome.detail, "GPU 0 busy; 1 out of scope");
}

TEST(HostOutcomeTest, ReasonsSayWhyAndShareWhatDiffersOnlyByHost) {
  HostReport host;
  host.name = "gpu03";
  host.address = "10.0.0.3";
  host.status = HostStatus::kUnreachable;
  host.error_kind = ErrorKind::kHostKey;
  host.host_key_fingerprint = "SHA256:abc+/x";
  host.error_message =
      "host key for gpu03 ([10.0.0.3]:22) is not in known_hosts k (offered "
      "SHA256:abc+/x); add it,\nor use --host-key-policy accept-new";
  EXPECT_EQ(HostReason(host, false),
            "host key for gpu03 ([10.0.0.3]:22) is not in known_hosts k (offered SHA256:abc+/x); "
            "add it, or use --host-key-policy accept-new");
  EXPECT_EQ(GenericReason(host, false),
            "host key for <host> ([<address>]:22) is not in known_hosts k (offered <key>); add "
            "it, or use --host-key-policy accept-new");
  // Only whole words: gpu030 and 10.0.0.30 stay.
  host.error_message = "gpu030 10.0.0.30 gpu03";
  EXPECT_EQ(GenericReason(host, false), "gpu030 10.0.0.30 <host>");
  // Clean hosts have none; a detail that already says it is not repeated.
  host.status = HostStatus::kClean;
  EXPECT_EQ(HostReason(host, false), "");
  host.status = HostStatus::kFailed;
  host.error_kind = ErrorKind::kCommandFailed;
  host.error_message = "nvidia-smi: boom";
  EXPECT_EQ(HostReason(host, false), "");
}

// Ghost memory: the row says how much, the reason what frees it, unless the
// run already tried a reset there.
TEST(HostOutcomeTest, GhostMemorySaysHowMuchAndWhatFreesIt) {
  const std::string kRemedy = "ghost memory needs a GPU reset: run with --playbook reset.yaml";
  HostReport one = CleanHost("gpu08", 8);
  one.status = HostStatus::kDirty;
  one.gpus_after = Gpus({0, 0, 10151, 0},
                        {GpuState::kClean, GpuState::kClean, GpuState::kGhost, GpuState::kClean});
  HostReport two = one;
  two.gpus_after = Gpus({0, 0, 1024, 0, 0, 0, 512, 0},
                        {GpuState::kClean, GpuState::kClean, GpuState::kGhost, GpuState::kClean,
                         GpuState::kClean, GpuState::kClean, GpuState::kGhost, GpuState::kClean});
  HostReport with_error = one;
  with_error.error_message = "not active again after the GPU reset: nvidia-dcgm.service (failed)";
  HostReport blocked = one;
  blocked.reset_blocked_by = "nv-hostengine (pid 4)";
  HostReport reset = one;
  reset.gpus_reset = {2};
  HostReport busy = one;
  busy.gpus_after[2].state = GpuState::kBusy;
  struct Row {
    const char* what;
    HostReport host;
    std::string detail;
    std::string reason;
  };
  const Row rows[] = {
      {"one GPU", one, "GPU 2 ghost memory (10151 MiB)", kRemedy},
      {"two GPUs: their memory in all", two, "GPUs 2,6 ghost memory (1536 MiB)", kRemedy},
      {"an error too", with_error, "GPU 2 ghost memory (10151 MiB)",
       with_error.error_message + "; " + kRemedy},
      {"reset blocked", blocked,
       "GPU 2 ghost memory (10151 MiB), reset blocked by nv-hostengine (pid 4)", ""},
      {"reset done", reset, "GPU 2 ghost memory (10151 MiB); after GPU 2 reset", ""},
      {"no ghost", busy, "GPU 2 busy", ""},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(OutcomeOf(row.host, false).detail, row.detail) << row.what;
    EXPECT_EQ(HostReason(row.host, false), row.reason) << row.what;
    EXPECT_EQ(HostReason(row.host, true), row.reason) << row.what;
    EXPECT_EQ(GhostMemoryRemedy(row.host), row.reason.empty() ? "" : kRemedy) << row.what;
  }
}

TEST(HostOutcomeTest, TheSummaryCountsOnlyGpusInScope) {
  // --gpus 4-7 on a host whose GPU 2 holds ghost memory: not this run's business.
  HostReport host = testing_fixture::CleanHost("gpu03", 3);
  for (int i = 0; i < 4; ++i) host.gpus_after[i].state = GpuState::kOutOfScope;
  host.gpus_after[2].used_mib = 10151;
  EXPECT_EQ(OutcomeOf(host, false).detail, "4/4 GPUs 0 MiB, 4 GPUs out of scope");
}

}  // namespace
}  // namespace fleetreap
