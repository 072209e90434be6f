#include "fleetreap/transport/ssh_jump.h"

#include <cctype>
#include <cstring>
#include <utility>

#include "fleetreap/base/text.h"
#include "fleetreap/transport/ssh_transport.h"
#include "ssh_jump_pump.h"

namespace fleetreap {
namespace {

Status Bad(const std::string& text, const std::string& problem) {
  return Status::Error(ErrorKind::kInvalidInput,
                       "ProxyJump " + QuoteForMessage(text, 120) + ": " + problem);
}

// A host or user name as OpenSSH takes it: no blanks, no quotes or shell
// characters, no leading '-' (it would read as an option).
bool PlainName(const std::string& name) {
  if (name.empty() || name[0] == '-') return false;
  for (unsigned char c : name) {
    if (c <= 0x20 || c == 0x7f || std::strchr("'`\"$\\;&<>|(){}*?!~#,/@", c) != nullptr) {
      return false;
    }
  }
  return true;
}

Status ParseHop(const std::string& text, std::string hop, JumpHop* out) {
  if (hop.rfind("ssh://", 0) == 0) hop = hop.substr(6);
  if (hop.empty()) return Bad(text, "an empty hop");
  const size_t at = hop.rfind('@');
  if (at != std::string::npos) {
    out->user = hop.substr(0, at);
    hop = hop.substr(at + 1);
    if (!PlainName(out->user)) return Bad(text, "bad user " + QuoteForMessage(out->user, 60));
  }
  std::string port;
  if (!hop.empty() && hop[0] == '[') {
    const size_t close = hop.find(']');
    if (close == std::string::npos) return Bad(text, "unclosed '['");
    if (close + 1 < hop.size()) {
      if (hop[close + 1] != ':') return Bad(text, "text after ']'");
      port = hop.substr(close + 2);
    }
    out->host = hop.substr(1, close - 1);
  } else {
    const size_t colon = hop.find(':');
    out->host = hop.substr(0, colon);
    if (colon != std::string::npos) port = hop.substr(colon + 1);
  }
  bool plain = PlainName(out->host);
  if (out->host.find(':') != std::string::npos) {  // an IPv6 address, maybe with a %zone
    plain = true;
    for (unsigned char c : out->host) {
      if (std::isalnum(c) == 0 && c != ':' && c != '.' && c != '%') plain = false;
    }
  }
  if (!plain) return Bad(text, "bad host " + QuoteForMessage(out->host, 60));
  if (port.empty() && hop.back() == ':') return Bad(text, "an empty port");
  if (!port.empty()) {
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) return Bad(text, "bad port " + port);
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) return Bad(text, "port must be 1-65535");
    out->port = value;
  }
  return Status::Ok();
}

// What makes two bastions the same connection.
std::string IdentityOf(const SshTransportOptions& o) {
  std::string key = o.user + "\n" + o.address + "\n" + std::to_string(o.port) + "\n" +
                    o.proxy_jump + "\n" + o.known_hosts + "\n" + o.ssh_config_file + "\n";
  for (const std::string& file : o.identity_files) key += "i:" + file + "\n";
  for (const std::string& file : o.global_known_hosts) key += "g:" + file + "\n";
  key += std::to_string(static_cast<int>(o.host_key_policy)) + (o.use_default_keys ? "d" : "") +
         (o.use_agent ? "a" : "") + (o.use_ssh_config ? "c" : "") +
         std::to_string(o.connect_timeout.count());
  return key;
}

}  // namespace

Status ParseProxyJump(const std::string& text, std::vector<JumpHop>* hops) {
  hops->clear();
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    JumpHop hop;
    Status status = ParseHop(text, text.substr(from, comma - from), &hop);
    if (!status.ok()) return status;
    hops->push_back(hop);
    from = comma + 1;
  }
  return Status::Ok();
}

ErrorKind ClassifyChannelOpenFailure(const std::string& error, std::string* reason) {
  // "Channel opening failure: channel 3 error (2) Connection refused"
  int code = 0;
  *reason = error;
  const size_t open = error.find("error (");
  const size_t close = open == std::string::npos ? open : error.find(") ", open);
  if (close != std::string::npos) {
    for (size_t i = open + 7; i < close && std::isdigit(static_cast<unsigned char>(error[i]));
         ++i) {
      code = code * 10 + (error[i] - '0');
    }
    *reason = error.substr(close + 2);
  }
  if (code == 1) {  // SSH_OPEN_ADMINISTRATIVELY_PROHIBITED
    *reason = "the bastion does not forward there (administratively prohibited: " + *reason +
              "; AllowTcpForwarding, PermitOpen?)";
    return ErrorKind::kRefused;
  }
  if (code == 4) {  // SSH_OPEN_RESOURCE_SHORTAGE
    *reason = "the bastion is short of resources: " + *reason;
    return ErrorKind::kConnectionLost;
  }
  if (Contains(error, "refused")) return ErrorKind::kRefused;
  if (Contains(error, "not known") || Contains(error, "resolution") ||
      Contains(error, "unknown host") || Contains(error, "No address associated")) {
    return ErrorKind::kDns;
  }
  if (Contains(error, "timed out") || Contains(error, "No route") ||
      Contains(error, "unreachable")) {
    return ErrorKind::kConnectTimeout;
  }
  return ErrorKind::kConnectionLost;
}

SshJumps::SshJumps() = default;

SshJumps::~SshJumps() {
  // Stop them all before joining any: a bastion behind another (a chain)
  // may be waiting in Open for it, which needs mutex_.
  std::vector<std::shared_ptr<JumpPump>> pumps;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    for (auto& entry : pumps_) pumps.push_back(std::move(entry.second));
    for (auto& pump : retired_) pumps.push_back(std::move(pump));
    pumps_.clear();
    retired_.clear();
  }
  for (auto& pump : pumps) pump->Stop();
  pumps.clear();  // joins each thread
}

Status SshJumps::Open(const SshTransportOptions& bastion, const std::string& host, int port,
                      std::chrono::steady_clock::time_point deadline, int* fd) {
  *fd = -1;
  auto request = std::make_shared<JumpRequest>();
  request->host = host;
  request->port = port;
  request->deadline = deadline;
  std::shared_ptr<JumpPump> pump;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      return Status::Error(ErrorKind::kConnectionLost,
                           "bastion " + bastion.name + ": closed at the end of the run");
    }
    std::shared_ptr<JumpPump>& slot = pumps_[IdentityOf(bastion)];
    if (slot == nullptr || !slot->Submit(request)) {
      if (slot != nullptr) retired_.push_back(std::move(slot));
      // The bastion's own chain goes through this SshJumps too; it holds
      // no reference to it, since this outlives every pump.
      SshTransportOptions options = bastion;
      options.jumps = std::shared_ptr<SshJumps>(std::shared_ptr<SshJumps>(), this);
      slot = std::make_shared<JumpPump>(bastion.name, std::move(options));
      if (!slot->Submit(request)) {
        return Status::Error(ErrorKind::kInternal, "a new bastion pump refused a request");
      }
    }
    pump = slot;
  }
  return pump->Await(request, fd);
}

}  // namespace fleetreap
