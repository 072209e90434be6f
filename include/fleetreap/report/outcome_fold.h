// OutcomeFold: GroupOutcomes (host_outcome.h) made one host at a time, in
// any order: each host is added with its place in the report, and the
// groups come out as GroupOutcomes would make them from the hosts in that
// order. A group keeps its kind, its detail's pieces folded so far (each
// count's range, each GPU list's union) and its members' names, never the
// hosts' reports. Thread-compatible.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/report/host_outcome.h"

namespace fleetreap {

class OutcomeFold {
 public:
  OutcomeFold();
  ~OutcomeFold();
  OutcomeFold(const OutcomeFold&);
  OutcomeFold& operator=(const OutcomeFold&);
  OutcomeFold(OutcomeFold&&) noexcept;
  OutcomeFold& operator=(OutcomeFold&&) noexcept;

  /// Adds the host "name" with its outcome, at place "order" in the report
  /// (each order at most once).
  void Add(size_t order, OutcomeKind kind, const OutcomeDetail& detail, const std::string& name);

  /// The groups, problems first (OutcomeRank), then by their first member's
  /// order; each group's names in order.
  std::vector<OutcomeGroup> Groups() const;

 private:
  struct Gathering;
  std::vector<Gathering> gatherings_;
  std::map<std::pair<OutcomeKind, std::string>, size_t> by_shape_;
};

}  // namespace fleetreap
