// Shell: how fleetreap writes text that a POSIX shell reads back as exactly
// what was meant: one literal word per value, and a remote command bounded by
// GNU timeout (and sudo -n when asked). Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace fleetreap {

/// Wraps "script" so the remote side ends it after "timeout": GNU timeout with
/// a KILL after a short grace, and "sudo -n" in front when "become" is set.
/// The script is single-quoted, so it reaches sh -c unchanged.
std::string BoundedCommand(const std::string& script, std::chrono::milliseconds timeout,
                           bool become);

/// Quotes "value" for a POSIX shell so it is always one literal word.
std::string ShellQuote(const std::string& value);

}  // namespace fleetreap
