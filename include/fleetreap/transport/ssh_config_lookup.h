// SshConfigLookup: the OpenSSH client settings fleetreap reads from ssh_config
// itself, because libssh 0.10 ignores them (HostKeyAlias), keeps only the
// first of several files (UserKnownHostsFile, GlobalKnownHostsFile) or would
// connect to the agent unbounded (IdentityAgent), or would hand to an
// "ssh -W" that reads another file (ProxyJump). Everything else in the
// config is libssh's. The files are read as OpenSSH reads them: "Host"
// patterns (*, ?, !negation) are matched against the name as given, "Match
// all", "Match host" and "Match originalhost" are understood (any other Match
// criterion is taken as not matching), "Include" globs are followed (16 deep,
// relative to ~/.ssh or /etc/ssh), and the first value found for a keyword
// wins. Free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/transport/proxy_command.h"

namespace fleetreap {

/// The settings for one host, as written in the config ("" or empty: unset).
struct SshConfigValues {
  std::string host_key_alias;                   // HostKeyAlias
  std::vector<std::string> user_known_hosts;    // UserKnownHostsFile, every word
  std::vector<std::string> global_known_hosts;  // GlobalKnownHostsFile, every word
  std::string identity_agent;                   // IdentityAgent
  /// ProxyJump, or ProxyCommand: whichever comes first, as in OpenSSH (the
  /// other stays ""); "none" as written.
  std::string proxy_jump;
  std::string proxy_command;
};

/// Reads "files" in order (a missing one is skipped) for the settings of
/// "host", the name as given to ssh; "home" resolves "~" and relative
/// Includes of the user's file. Errors: kInvalidInput naming file and line
/// (an unreadable file, an Include nested too deep).
Status LookUpSshConfig(const std::vector<std::string>& files, const std::string& host,
                       const std::string& home, SshConfigValues* values);

/// Expands a path setting as OpenSSH does: a leading "~/" is "home", and
/// %d (home), %u (local user), %h (host), %n (name as given), %p (port),
/// %r (remote user), %k (host key alias, else the name as given) and %%;
/// ${VAR} is the environment variable. Unknown tokens are left as written.
std::string ExpandSshConfigPath(const std::string& value, const ProxyTokens& tokens,
                                const std::string& home, const std::string& alias);

}  // namespace fleetreap
