#include "fleetreap/base/shell.h"

#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

// The start record's payload as the script prints it. Backslashes, a dollar
// sign, backquotes and double quotes stay as they are inside a POSIX shell's
// single quotes; fish turns "\\" into "\", csh refuses the newline after it.
constexpr char kStartRecord[] = "start:\\\\ $HOME `id` \"q\"";

}  // namespace

std::string ShellQuote(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

std::string BoundedCommand(const std::string& script, std::chrono::milliseconds timeout,
                           bool become) {
  // Whole seconds, rounded up, at least one: timeout(1) takes fractions too,
  // but busybox's does not, and a second of slack costs nothing here.
  // sudo runs inside the outer bound: its own phase (NSS, PAM, hostname
  // lookups) is bounded on the host too.
  const std::string seconds = TimeoutSeconds(timeout);
  // Quoted words are never aliases; "unset -f exec" drops a function named exec.
  std::string command = "\\unset -f exec 2>/dev/null; \\exec /usr/bin/timeout -k 2 " + seconds;
  if (become) command += " /usr/bin/sudo -n";
  command += std::string(" /usr/bin/env -i PATH=") + kScriptPath + " LC_ALL=C";
  if (become) command += " /usr/bin/timeout -k 1 " + seconds;
  // The script goes in a here-document, not a quoted word: bash reads a 40 KB
  // quoted word in about 4 ms of a host's CPU, a here-document in a seventh of
  // that (bash's own CPU a round trip, measured: 6.4-7.3 ms before, 3.3-3.6
  // after). sh reads it from fd 9 (the here-document, as stdin was) by ".",
  // so the script's own stdin is /dev/null; its first line closes fd 9 for
  // the programs it starts.
  std::string body =
      "exec 9<&-\n" + std::string("printf '%s\\0' '") + kStartRecord + "'\n" + script;
  if (body.back() != '\n') body += '\n';
  // The end line is one no line of the body is: a value of the host's
  // making inside the script can never end the here-document early.
  std::string end = "FLEETREAP_SCRIPT_END";
  for (int n = 1; ("\n" + body).find("\n" + end + "\n") != std::string::npos; ++n) {
    end = "FLEETREAP_SCRIPT_END_" + std::to_string(n);
  }
  return command + " /bin/sh -c 'exec 9<&0 </dev/null; . /proc/self/fd/9' <<'" + end + "'\n" +
         body + end + "\n";
}

std::string StartRecordBytes() { return std::string(kStartRecord) + '\0'; }

Status CheckStartRecord(std::string* out, const std::string& stderr_text) {
  const std::string expected = StartRecordBytes();
  const size_t at = out->find(expected);
  if (at == 0) {
    out->erase(0, expected.size());
    return Status::Ok();
  }
  if (at != std::string::npos) {
    return Status::Error(ErrorKind::kCommandFailed,
                         "login shell: " + std::to_string(at) +
                             " bytes came before the command's output (a dotfile of the login "
                             "account prints to stdout?)");
  }
  if (out->find("start:") != std::string::npos) {
    return Status::Error(ErrorKind::kCommandFailed,
                         "login shell: the command's quoting came back changed (the login "
                         "account's shell is not a POSIX shell: fish?)");
  }
  std::string why =
      "login shell: the command did not start (the login account's shell must "
      "be a POSIX shell: sh, bash, dash, zsh, ksh)";
  const std::string line = FirstLine(stderr_text, 160);
  if (!line.empty()) why += ": " + line;
  return Status::Error(ErrorKind::kCommandFailed, why);
}

}  // namespace fleetreap
