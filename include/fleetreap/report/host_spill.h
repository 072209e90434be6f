// HostSpill: one report's per-host pieces (each host's JSON object, each
// host's JUnit <testcase>) written to a file as the hosts end, in whatever
// order they end, and read back in report order when the report is put
// together at the end of the run. Memory holds a place (offset, length) per
// host, not the pieces. The file lies beside the report's target (in
// $TMPDIR, else /tmp, for "-"), created exclusively as ".NAME.spill.XXXXXX"
// with mode 0600 (a planted file or symlink is never opened or followed:
// the pieces name processes and command lines), and is unlinked at once, so
// nothing is left behind however the run ends. Move-only (owns the
// descriptor); thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

class HostSpill {
 public:
  /// Creates the spill for the report written to "target" (a path or "-"),
  /// with room for "hosts" places. On failure returns kInternal naming the
  /// directory and the system error ("cannot spill beside r.json: ...").
  static Status Open(const std::string& target, size_t hosts, std::unique_ptr<HostSpill>* out);

  ~HostSpill();
  HostSpill(const HostSpill&) = delete;
  HostSpill& operator=(const HostSpill&) = delete;

  /// Appends "piece" as host "index"'s (index < hosts; a second piece for
  /// the same index replaces the first). A write that fails is kept in
  /// status(); later calls do nothing.
  void Put(size_t index, const std::string& piece);

  /// Hands each host's piece to "emit", in index order, skipping the
  /// indexes never put. A read that fails is kept in status() and ends it.
  void ForEach(const std::function<void(const std::string& piece)>& emit);

  /// Ok, or the first write or read error ("cannot write the spill of
  /// r.json: No space left on device").
  const Status& status() const { return status_; }

 private:
  HostSpill(int fd, std::string target, size_t hosts);
  void Fail(const char* what, int error);

  int fd_;
  std::string target_;
  uint64_t end_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> places_;  // offset, length + 1 (0: none)
  Status status_;
};

}  // namespace fleetreap
