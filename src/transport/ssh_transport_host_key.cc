// SshTransport's host key check: which known_hosts files and name OpenSSH
// would consult for the target (PrepareKnownHosts, before the connection) and
// the verdict on the key the server offered (VerifyHostKey).
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "fleetreap/transport/ssh_known_hosts.h"
#include "fleetreap/transport/ssh_transport.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

// "a, b and c" for messages.
std::string JoinFiles(const std::vector<std::string>& files) {
  std::string text;
  for (size_t i = 0; i < files.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == files.size() ? " and " : ", ") + files[i];
  }
  return text;
}

// Writes "text" to a new memfd; -1 on failure.
int MemoryFile(const std::string& text) {
  int fd = memfd_create("known_hosts", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

// The key type as ssh's "Permanently added ... (ED25519)" names it.
std::string OpenSshKeyType(enum ssh_keytypes_e type) {
  switch (type) {
    case SSH_KEYTYPE_ED25519: return "ED25519";
    case SSH_KEYTYPE_RSA: return "RSA";
    case SSH_KEYTYPE_ECDSA_P256:
    case SSH_KEYTYPE_ECDSA_P384:
    case SSH_KEYTYPE_ECDSA_P521: return "ECDSA";
    default: break;
  }
  const char* name = ssh_key_type_to_char(type);
  return name != nullptr ? name : "";
}

}  // namespace

Status SshTransport::PrepareKnownHosts(Session* state) {
  const std::string home = SshHomeDirectory();
  const ProxyTokens tokens =
      SessionTokens(state->session, target_host_, options_.address, target_port_);

  config_ = SshConfigValues();
  if (options_.use_ssh_config) {
    Status status =
        LookUpSshConfig(SshConfigFiles(options_.ssh_config_file), options_.address, home, &config_);
    if (!status.ok()) return status;
  }
  const std::string& alias = config_.host_key_alias;
  auto expand = [&](const std::vector<std::string>& values) {
    std::vector<std::string> paths;
    for (const std::string& value : values) {
      if (value != "none") paths.push_back(ExpandSshConfigPath(value, tokens, home, alias));
    }
    return paths;
  };
  if (!options_.known_hosts.empty()) {
    user_known_hosts_ = {options_.known_hosts};
  } else if (!config_.user_known_hosts.empty()) {
    user_known_hosts_ = expand(config_.user_known_hosts);
  } else {
    user_known_hosts_ = {home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"};
  }
  global_known_hosts_ = config_.global_known_hosts.empty() ? options_.global_known_hosts
                                                           : expand(config_.global_known_hosts);
  if (!config_.identity_agent.empty() && config_.identity_agent != "none" &&
      config_.identity_agent != "SSH_AUTH_SOCK") {
    config_.identity_agent = ExpandSshConfigPath(config_.identity_agent, tokens, home, alias);
  }
  // OpenSSH looks an alias up as written, with no port.
  known_hosts_name_ = alias.empty() ? KnownHostsName(target_host_, target_port_) : alias;
  std::vector<std::string> files = user_known_hosts_;
  files.insert(files.end(), global_known_hosts_.begin(), global_known_hosts_.end());
  known_records_.clear();
  Status status = ReadKnownHosts(files, known_hosts_name_, &known_records_);
  if (!status.ok() && options_.host_key_policy != HostKeyPolicy::kOff) {
    return Status::Error(
        ErrorKind::kHostKey,
        (options_.name.empty() ? target_host_ : options_.name) + ": " + status.message());
  }
  // libssh reads its file only to prefer the key types the host is known
  // by; the verdict is VerifyHostKey's. It gets those keys under the name it
  // looks up, in a memfd, or nothing.
  std::string lines;
  const std::string libssh_name = KnownHostsName(target_host_, target_port_);
  for (const KnownHostsRecord& record : known_records_) {
    if (!record.revoked) lines += libssh_name + " " + record.line.key + "\n";
  }
  std::string path = "/dev/null";
  if (!lines.empty()) {
    state->known_hosts_fd = MemoryFile(lines);
    if (state->known_hosts_fd >= 0) {
      path = "/proc/self/fd/" + std::to_string(state->known_hosts_fd);
    }
  }
  ssh_options_set(state->session, SSH_OPTIONS_KNOWNHOSTS, path.c_str());
  return Status::Ok();
}

Status SshTransport::VerifyHostKey() {
  ssh_session session = session_->session;
  ssh_key server_key = nullptr;
  if (ssh_get_server_publickey(session, &server_key) != SSH_OK) {
    return Status::Error(ErrorKind::kKex, options_.address + ": no server host key");
  }
  char* base64 = nullptr;
  std::string key;
  if (ssh_pki_export_pubkey_base64(server_key, &base64) == SSH_OK) {
    key = std::string(ssh_key_type_to_char(ssh_key_type(server_key))) + " " + base64;
    ssh_string_free_char(base64);
  }
  key_type_ = OpenSshKeyType(ssh_key_type(server_key));
  ssh_key_free(server_key);
  fingerprint_ = KeyFingerprint(key);
  if (options_.host_key_policy == HostKeyPolicy::kOff) return Status::Ok();

  const std::string who =
      (options_.name.empty() ? target_host_ : options_.name) + " (" + known_hosts_name_ + ")";
  const KnownHostsVerdict verdict = JudgeHostKey(known_records_, key);
  switch (verdict.kind) {
    case KnownHostsVerdict::Kind::kKnown: return Status::Ok();
    case KnownHostsVerdict::Kind::kRevoked:
      return Status::Error(ErrorKind::kHostKey, "host key for " + who + " (offered " +
                                                    fingerprint_ + ") is @revoked at " +
                                                    verdict.where + "; refusing to connect");
    case KnownHostsVerdict::Kind::kChanged:
      return Status::Error(ErrorKind::kHostKey, "host key for " + who + " has CHANGED: offered " +
                                                    fingerprint_ + ", known_hosts " +
                                                    verdict.where + " has " + verdict.fingerprint +
                                                    "; refusing to connect");
    case KnownHostsVerdict::Kind::kUnknown: break;
  }
  std::vector<std::string> files = user_known_hosts_;
  files.insert(files.end(), global_known_hosts_.begin(), global_known_hosts_.end());
  if (options_.host_key_policy == HostKeyPolicy::kAcceptNew && !user_known_hosts_.empty()) {
    bool appended = false;
    Status status =
        AppendKnownHostsEntry(user_known_hosts_.front(), known_hosts_name_, key, &appended);
    if (appended) accepted_into_ = user_known_hosts_.front();
    return status;
  }
  // The line that adds it, where this machine reaches the host directly.
  std::string add = "add it";
  if (direct_ && !user_known_hosts_.empty()) {
    add = "if that is the host's key, add it: ssh-keyscan " +
          (target_port_ != 22 ? "-p " + std::to_string(target_port_) + " " : std::string()) +
          target_host_ + " >> " + user_known_hosts_.front();
  }
  return Status::Error(ErrorKind::kHostKey,
                       "host key for " + who + " is not in known_hosts " + JoinFiles(files) +
                           " (offered " + fingerprint_ + "); " + add + "; or use " +
                           (user_known_hosts_.empty() ? "--known-hosts FILE with " : "") +
                           "--host-key-policy accept-new");
}

}  // namespace fleetreap
