// ShmFile and ShmSelection: a /dev/shm file as the holder scan knows it (by
// inode on /dev/shm's device, never by name, and the file's owner), and
// which of a clean step's candidates it may remove. Part of the host model;
// plain values, thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

namespace fleetreap {

/// A regular file directly in /dev/shm that a holder had open or mapped when
/// a scan read it.
struct ShmFile {
  uint64_t inode = 0;
  int uid = -1;  // the file's owner at the scan
  bool operator==(const ShmFile& o) const { return inode == o.inode && uid == o.uid; }
};

/// Which of the /dev/shm candidates (the playbook's shm_patterns) a clean
/// step may remove when no live process holds them. "all": every one (a
/// run without a scope). Otherwise only the files listed, each by inode and
/// only while its owner is still that uid (the run's scope: the segments of
/// the holders it signalled).
struct ShmSelection {
  bool all = true;
  std::vector<ShmFile> only;
};

}  // namespace fleetreap
