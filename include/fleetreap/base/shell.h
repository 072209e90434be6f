// Shell: how fleetreap writes text that a POSIX shell reads back as exactly
// what was meant: one literal word per value, and the remote command itself,
// which the login account's shell reads first. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// The PATH the script runs with (Debian's sudo secure_path): the login
/// account's PATH never reaches it.
inline constexpr char kScriptPath[] =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Wraps "script" for the login shell (sshd runs it as `$SHELL -c COMMAND`):
///   \unset -f exec 2>/dev/null; \exec /usr/bin/timeout -k 2 N [/usr/bin/sudo -n]
///     /usr/bin/env -i PATH=kScriptPath LC_ALL=C [/usr/bin/timeout -k 1 N]
///     /bin/sh -c 'exec 9<&0 </dev/null; . /proc/self/fd/9' <<'END'
///   exec 9<&-
///   START
///   SCRIPT
///   END
/// Every program by absolute path, the first through exec, with the words
/// quoted (never an alias) and any function named exec dropped first, so no
/// alias, function or PATH of the login account's dotfiles picks what runs
/// (a function named unset still could: the login account is
/// root-equivalent, docs/safety.md); a clean environment
/// for the script. With "become" a second timeout runs as root inside sudo:
/// the login user's timeout cannot signal the root script (sudo does not relay
/// a signal from its command's own process group), the root one can. START
/// prints the start record (CheckStartRecord). The script travels as a quoted
/// here-document (stdin, which sudo passes on), so it reaches sh unchanged and
/// the login shell never parses it as a word; sh reads it by "." with its own
/// stdin on /dev/null. END is a line that no line of the script is.
std::string BoundedCommand(const std::string& script, std::chrono::milliseconds timeout,
                           bool become);

/// Checks that the output "out" of a BoundedCommand begins with its start
/// record, exactly as sent, and removes it, so the step's parser sees only
/// the script's records. The start record holds characters that only a
/// POSIX shell leaves alone inside single quotes. Fails (kCommandFailed, one
/// line beginning "login shell: ") when it is missing (csh and tcsh refuse a
/// quoted newline; "stderr" is quoted from), changed (fish rewrites
/// backslashes), or preceded by other bytes (a dotfile printing to stdout).
[[nodiscard]] Status CheckStartRecord(std::string* out, const std::string& stderr_text);

/// The bytes a BoundedCommand prints before its script's own: the start
/// record and its NUL (for fakes that answer as a host would).
std::string StartRecordBytes();

/// Quotes "value" for a POSIX shell so it is always one literal word.
std::string ShellQuote(const std::string& value);

}  // namespace fleetreap
