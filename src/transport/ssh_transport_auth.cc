// SshTransport::Authenticate: public keys only, never a prompt, and never
// past the connect deadline (the agent included: ssh_agent_socket.h).
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "fleetreap/transport/private_key_file.h"
#include "fleetreap/transport/ssh_agent_socket.h"
#include "fleetreap/transport/ssh_transport.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int RefusePassphrase(const char*, char*, size_t, int, int, void*) { return -1; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// True when the private key at "path" needs a passphrase: PEM keys say
// ENCRYPTED, OpenSSH keys name a cipher other than "none" after their magic.
bool IsEncryptedKey(const std::string& path) {
  const std::string text = ReadFile(path);
  if (text.find("ENCRYPTED") != std::string::npos) return true;
  const std::string begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  size_t start = text.find(begin);
  if (start == std::string::npos) return false;
  std::string bytes;
  int bits = 0;
  unsigned value = 0;
  for (size_t i = start + begin.size(); i < text.size() && bytes.size() < 64; ++i) {
    int v = Base64Value(text[i]);
    if (v < 0) continue;
    value = (value << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((value >> bits) & 0xff));
    }
  }
  const std::string magic("openssh-key-v1\0", 15);
  if (bytes.compare(0, magic.size(), magic) != 0 || bytes.size() < magic.size() + 4) {
    return false;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + magic.size());
  size_t length = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
  return bytes.compare(magic.size() + 4, length, "none") != 0;
}

// kTimedOut: no answer before the session's timeout (libssh's SSH_AUTH_AGAIN
// on a blocking session), which is the connect deadline here.
enum class KeyOutcome { kAccepted, kRejected, kSessionError, kTimedOut };

Status TimedOut(const std::string& who, const std::string& when) {
  return Status::Error(ErrorKind::kConnectTimeout, who + ": the connect timeout ran out " + when);
}

// "retry" runs a libssh auth call, again while it says "again" on a
// non-blocking session (RetryAgain), until the connect deadline.
using AuthRetry = std::function<int(const std::function<int()>&)>;

// The public half of "key" in base64, what tells two files of one key apart
// from two keys; "" when libssh cannot say.
std::string PublicBlob(ssh_key key) {
  char* base64 = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &base64) != SSH_OK) return "";
  std::string blob = base64;
  ssh_string_free_char(base64);
  return blob;
}

// Tries the key file at "path"; a key already offered from another path
// ("tried" holds their public halves) is not offered, nor noted, again.
KeyOutcome TryKeyFile(ssh_session session, const std::string& path, bool named,
                      const AuthRetry& retry, std::vector<std::string>* notes,
                      std::vector<std::string>* tried) {
  const std::string mode_problem = PrivateKeyModeProblem(path);
  if (!mode_problem.empty()) {
    notes->push_back(path + ": " + mode_problem);
    return KeyOutcome::kRejected;
  }
  ssh_key key = nullptr;
  int rc = ssh_pki_import_privkey_file(path.c_str(), nullptr, RefusePassphrase, nullptr, &key);
  if (rc == SSH_EOF) {
    if (named) notes->push_back(path + ": cannot read it");
    return KeyOutcome::kRejected;
  }
  if (rc != SSH_OK) {
    if (IsEncryptedKey(path)) {
      notes->push_back(path +
                       ": encrypted, and fleetreap never asks for a passphrase (load it "
                       "into ssh-agent)");
    } else if (named) {
      notes->push_back(path + ": not a private key libssh can read");
    }
    return KeyOutcome::kRejected;
  }
  const std::string blob = PublicBlob(key);
  if (!blob.empty() && std::find(tried->begin(), tried->end(), blob) != tried->end()) {
    ssh_key_free(key);
    return KeyOutcome::kRejected;
  }
  if (!blob.empty()) tried->push_back(blob);
  rc = retry([&] { return ssh_userauth_publickey(session, nullptr, key); });
  ssh_key_free(key);
  if (rc == SSH_AUTH_SUCCESS) return KeyOutcome::kAccepted;
  if (rc == SSH_AUTH_ERROR) return KeyOutcome::kSessionError;
  if (rc == SSH_AUTH_AGAIN) return KeyOutcome::kTimedOut;
  notes->push_back(path + (rc == SSH_AUTH_PARTIAL ? ": accepted, but more is required"
                                                  : ": refused by the server"));
  return KeyOutcome::kRejected;
}

// The agent's socket path for this session: "" when it is not to be used.
std::string AgentPath(bool use_agent, const std::string& identity_agent) {
  if (!use_agent || identity_agent == "none") return "";
  if (!identity_agent.empty() && identity_agent != "SSH_AUTH_SOCK") return identity_agent;
  const char* socket = getenv("SSH_AUTH_SOCK");
  return socket != nullptr ? socket : "";
}

}  // namespace

Status SshTransport::Authenticate(Clock::time_point deadline) {
  ssh_session session = session_->session;
  char* user_text = nullptr;
  std::string user = "?";
  if (ssh_options_get(session, SSH_OPTIONS_USER, &user_text) == SSH_OK) {
    user = user_text;
    ssh_string_free_char(user_text);
  }
  const std::string who = user + "@" + (options_.name.empty() ? options_.address : options_.name);
  auto lost = [&] {
    return Status::Error(
        ErrorKind::kConnectionLost,
        who + ": connection lost during authentication: " + ssh_get_error(session));
  };
  // Each libssh call waits at most until the connect deadline.
  auto time_left = [&] {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    SetSessionTimeout(session, left);
    return true;
  };
  const bool nonblocking = session_->nonblocking;
  const AuthRetry retry = [session, nonblocking, deadline](const std::function<int()>& call) {
    return RetryAgain(session, nonblocking, SSH_AUTH_AGAIN, deadline, call);
  };
  if (!time_left()) return TimedOut(who, "before authentication");
  int rc = retry([session] { return ssh_userauth_none(session, nullptr); });
  if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
  if (rc == SSH_AUTH_ERROR) return lost();
  if (rc == SSH_AUTH_AGAIN) return TimedOut(who, "during authentication");
  bool timed_out = false;  // the server did not answer a key before the deadline

  // libssh speaks to the agent over a socket of ours, bounded by the
  // deadline; it is attached before libssh's first agent call (the agent
  // step, or publickey_auto, which asks the agent too), never sooner.
  std::vector<std::string> notes;
  const std::string agent_path = AgentPath(options_.use_agent, config_.identity_agent);
  SshAgentSocket agent;
  bool agent_attached = false;
  bool agent_stalled = false;  // an agent call ran into the deadline
  auto attach_agent = [&] {
    if (agent_attached) return;
    agent_attached = true;
    Status status =
        agent_path.empty() ? agent.ConnectNowhere() : agent.Connect(agent_path, deadline);
    if (!status.ok() && !agent_path.empty()) {
      notes.push_back(status.message());
      status = agent.ConnectNowhere();
    }
    if (status.ok() && ssh_set_agent_socket(session, agent.fd()) == SSH_OK) agent.release();
  };
  auto agent_failure = [&] {
    return Status::Error(
        ErrorKind::kAuth,
        "authentication as " + who + " failed: ssh-agent at " + agent_path +
            " did not answer within the connect timeout (a stalled or forwarded agent, "
            "or a key that waits for a confirmation, a touch or a PIN); --no-agent "
            "skips the agent");
  };

  // Order: the keys the inventory or --identity named, ssh-agent, then the
  // default keys. The agent and the default keys are looked up only when the
  // keys before them failed: a fleet whose inventory names a good key asks
  // nothing else per host.
  auto try_agent = [&] {
    attach_agent();
    rc = retry([session] { return ssh_userauth_agent(session, nullptr); });
    if (rc == SSH_AUTH_SUCCESS) return KeyOutcome::kAccepted;
    agent_stalled = agent.expired();
    if (agent_stalled) return KeyOutcome::kSessionError;
    timed_out = rc == SSH_AUTH_AGAIN;
    if (timed_out || (rc == SSH_AUTH_ERROR && !ssh_is_connected(session))) {
      return KeyOutcome::kSessionError;
    }
    notes.push_back("ssh-agent: no key accepted");
    return KeyOutcome::kRejected;
  };
  std::vector<std::string> tried;  // each key once, whichever paths name it
  auto try_key = [&](const std::string& path, bool named) {
    KeyOutcome outcome = TryKeyFile(session, path, named, retry, &notes, &tried);
    timed_out = outcome == KeyOutcome::kTimedOut;
    if (timed_out) return KeyOutcome::kSessionError;
    if (outcome == KeyOutcome::kSessionError && ssh_is_connected(session)) {
      return KeyOutcome::kRejected;
    }
    return outcome;
  };
  auto failed = [&] {
    if (agent_stalled) return agent_failure();
    if (timed_out || Clock::now() >= deadline) return TimedOut(who, "during authentication");
    return lost();
  };
  for (const std::string& path : options_.identity_files) {
    if (!time_left()) return failed();
    KeyOutcome outcome = try_key(path, /*named=*/true);
    if (outcome == KeyOutcome::kAccepted) return Status::Ok();
    if (outcome == KeyOutcome::kSessionError) return failed();
  }
  if (!agent_path.empty()) {
    if (!time_left()) return failed();
    KeyOutcome outcome = try_agent();
    if (outcome == KeyOutcome::kAccepted) return Status::Ok();
    if (outcome == KeyOutcome::kSessionError) return failed();
  }
  if (options_.use_default_keys) {
    const std::string home = SshHomeDirectory();
    for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
      std::string path = home + "/.ssh/" + name;
      if (access(path.c_str(), R_OK) != 0) continue;
      if (!time_left()) return failed();
      KeyOutcome outcome = try_key(path, /*named=*/false);
      if (outcome == KeyOutcome::kAccepted) return Status::Ok();
      if (outcome == KeyOutcome::kSessionError) return failed();
    }
  }
  if (options_.use_ssh_config) {
    // The config's IdentityFile entries live in the session's own list;
    // publickey_auto tries them (and the agent again), passphrases refused.
    if (!time_left()) return failed();
    attach_agent();
    rc = retry([session] { return ssh_userauth_publickey_auto(session, nullptr, nullptr); });
    if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
    agent_stalled = agent.expired();
    timed_out = rc == SSH_AUTH_AGAIN;
    if (agent_stalled || timed_out || (rc == SSH_AUTH_ERROR && !ssh_is_connected(session))) {
      return failed();
    }
    notes.push_back("ssh config identities: none accepted");
  }
  if (notes.empty()) notes.push_back("no usable key (no identity, no agent, no ~/.ssh/id_*)");
  std::string detail;
  for (const std::string& note : notes) detail += (detail.empty() ? "" : "; ") + note;
  return Status::Error(ErrorKind::kAuth, "authentication as " + who + " failed: " + detail);
}

}  // namespace fleetreap
