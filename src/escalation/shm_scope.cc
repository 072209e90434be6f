#include "fleetreap/escalation/shm_scope.h"

#include <algorithm>
#include <map>
#include <set>

namespace fleetreap {

ShmSelection ShmFilesToClean(const Playbook& playbook, const HostView& view) {
  ShmSelection selection;
  if (!view.scoped) return selection;
  selection.all = false;
  if (playbook.shm_under_scope == ShmUnderScope::kNone) return selection;
  std::set<uint64_t> others;      // held by a holder left alone
  std::map<uint64_t, int> owned;  // inode -> its owner, a signalled holder's uid
  for (const TrackedHolder& t : view.holders) {
    const bool signalled = (t.term_sent || t.kill_sent) && !NeverSignalled(t.holder.fate);
    for (const ShmFile& file : t.holder.shm_files) {
      if (!signalled) {
        others.insert(file.inode);
      } else if (t.holder.uid >= 0 && file.uid == t.holder.uid && file.inode > 0) {
        owned.emplace(file.inode, file.uid);
      }
    }
  }
  for (const auto& [inode, uid] : owned) {
    if (!others.count(inode)) selection.only.push_back({inode, uid});
  }
  return selection;
}

}  // namespace fleetreap
