// Audit: the line that each action changing a host (a unit stopped, a
// signal sent, a /dev/shm file removed, a GPU reset) leaves in that host's
// journal or syslog, tag "fleetreap". A step hands all of its lines to one
// `logger` on stdin, in the same round trip as the actions, after them: a
// missing or failing logger never stops a step, and the step's reply says
// whether the lines were written (AuditOutcome).
//
// A line is space-separated key=value fields, the run's first
// ("run=20261202T061902Z-4f1c2a controller=ctl1 operator=alice
// action=term pid=812 start=99812 exe=/usr/bin/python3 user=bob
// owner=slurm%20job%2042 gpus=0,1"); every value is written with
// AuditValue, so no text from a host, a playbook or an inventory can end a
// line or start a field. Pure functions and plain values; thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/model/holder.h"

namespace fleetreap {

/// The fields of one line after "action", in order: {"pid", "812"}, ...
using AuditFields = std::vector<std::pair<std::string, std::string>>;

/// Who acts, for every line of a run; with an empty run_id no step writes
/// audit lines.
struct AuditRequest {
  std::string run_id;         // RunReport::run_id
  std::string controller;     // the controller's host name
  std::string operator_name;  // the controller's user
  /// The signal step's fields for each target, by PID (AuditFieldsOf its
  /// holder); a target without an entry is logged with pid and start only.
  std::map<int, AuditFields> targets;

  bool enabled() const { return !run_id.empty(); }
};

/// The one encoding of a value: bytes in [A-Za-z0-9._,:@+/-] stay, every
/// other byte (space, '=', '%', control bytes, non-ASCII) is "%xx" (two
/// lowercase hex digits); "" is "-". Cut to 240 characters, never inside a
/// "%xx", with "..." after a cut.
std::string AuditValue(const std::string& text);

/// "run=R controller=C operator=O action=ACTION K=V...", every value
/// through AuditValue.
std::string AuditLine(const AuditRequest& request, const std::string& action,
                      const AuditFields& fields);

/// pid, start, exe, user, owner (DescribeOwner), gpus (comma-separated
/// indexes, the held and the charged ones; "-" none) of a holder.
AuditFields AuditFieldsOf(const Holder& holder);

}  // namespace fleetreap
