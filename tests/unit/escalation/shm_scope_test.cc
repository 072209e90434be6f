// ShmFilesToClean: which /dev/shm segments a scoped run may remove, one row
// per rule.
#include "fleetreap/escalation/shm_scope.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TrackedHolder H(int pid, int uid, HolderFate fate, bool term, bool kill,
                std::vector<ShmFile> files) {
  TrackedHolder t;
  t.holder.pid = pid;
  t.holder.uid = uid;
  t.holder.fate = fate;
  t.holder.shm_files = std::move(files);
  t.term_sent = term;
  t.kill_sent = kill;
  t.present = false;
  return t;
}

TEST(ShmScopeTest, OnlyTheSignalledHoldersOwnSegments) {
  const Playbook& p = DefaultPlaybook();
  struct Row {
    const char* name;
    std::vector<TrackedHolder> holders;
    std::vector<ShmFile> only;
  } rows[] = {
      {"a TERMed holder's own segments",
       {H(10, 1001, HolderFate::kTerminated, true, false, {{7, 1001}, {5, 1001}})},
       {{5, 1001}, {7, 1001}}},
      {"a KILLed holder's too",
       {H(10, 1001, HolderFate::kKilled, true, true, {{7, 1001}})},
       {{7, 1001}}},
      {"another uid's file it held is not its",
       {H(10, 1001, HolderFate::kTerminated, true, false, {{7, 1002}, {8, 0}})},
       {}},
      {"an unknown uid owns nothing",
       {H(10, -1, HolderFate::kTerminated, true, false, {{7, 1001}})},
       {}},
      {"never signalled", {H(10, 1001, HolderFate::kGone, false, false, {{7, 1001}})}, {}},
      {"out of scope", {H(10, 1001, HolderFate::kOutOfScope, false, false, {{7, 1001}})}, {}},
      {"protected", {H(10, 0, HolderFate::kProtected, false, false, {{7, 0}})}, {}},
      {"shared with a tenant left alone",
       {H(10, 1001, HolderFate::kTerminated, true, false, {{7, 1001}, {9, 1001}}),
        H(11, 1001, HolderFate::kOutOfScope, false, false, {{9, 1001}})},
       {{7, 1001}}},
      {"held by two signalled holders: once",
       {H(10, 1001, HolderFate::kTerminated, true, false, {{7, 1001}}),
        H(11, 1001, HolderFate::kKilled, true, true, {{7, 1001}})},
       {{7, 1001}}},
  };
  for (const Row& row : rows) {
    HostView view;
    view.scoped = true;
    view.holders = row.holders;
    ShmSelection selection = ShmFilesToClean(p, view);
    EXPECT_FALSE(selection.all) << row.name;
    EXPECT_EQ(selection.only, row.only) << row.name;
  }
}

TEST(ShmScopeTest, NoScopeAllNoneNothing) {
  Playbook p = DefaultPlaybook();
  HostView view;
  view.holders = {H(10, 1001, HolderFate::kTerminated, true, false, {{7, 1001}})};
  EXPECT_TRUE(ShmFilesToClean(p, view).all);
  view.scoped = true;
  p.shm_under_scope = ShmUnderScope::kNone;
  ShmSelection none = ShmFilesToClean(p, view);
  EXPECT_FALSE(none.all);
  EXPECT_TRUE(none.only.empty());
}

}  // namespace
}  // namespace fleetreap
