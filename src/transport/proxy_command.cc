#include "fleetreap/transport/proxy_command.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/transport/tcp_dialer.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTermGrace{500};
constexpr off_t kStderrKept = 4096;

// What a shell would read as more than a word; OpenSSH refuses these in %h
// and %r too.
bool SafeForShell(const std::string& value) {
  if (value.empty() || value[0] == '-') return false;
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f || std::strchr(" '`\"$\\;&<>|(){}*?!~#", c) != nullptr) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> ProxyEnvironment() {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (name == "DISPLAY" || name == "WAYLAND_DISPLAY" || name == "SSH_ASKPASS" ||
        name == "SSH_ASKPASS_REQUIRE") {
      continue;
    }
    environment.push_back(text);
  }
  environment.push_back("SSH_ASKPASS_REQUIRE=never");
  return environment;
}

Status ExpandProxyCommand(const std::string& command, const ProxyTokens& tokens,
                          std::string* expanded) {
  expanded->clear();
  for (size_t i = 0; i < command.size(); ++i) {
    if (command[i] != '%') {
      expanded->push_back(command[i]);
      continue;
    }
    if (i + 1 == command.size()) {
      return Status::Error(ErrorKind::kInvalidInput, "ProxyCommand ends with a lone '%'");
    }
    const char token = command[++i];
    const std::string* value = nullptr;
    switch (token) {
      case '%': expanded->push_back('%'); continue;
      case 'p': *expanded += std::to_string(tokens.port); continue;
      case 'h': value = &tokens.host; break;
      case 'n': value = &tokens.original_host; break;
      case 'r': value = &tokens.user; break;
      case 'u': value = &tokens.local_user; break;
      default:
        return Status::Error(ErrorKind::kInvalidInput,
                             std::string("ProxyCommand: unsupported token %") + token);
    }
    if (!SafeForShell(*value)) {
      return Status::Error(ErrorKind::kInvalidInput,
                           std::string("ProxyCommand: refusing to put %") + token + " = " +
                               QuoteForMessage(*value, 80) + " into a shell command");
    }
    *expanded += *value;
  }
  return Status::Ok();
}

ErrorKind ClassifyProxyFailure(const std::string& text) {
  if (Contains(text, "Connection refused")) return ErrorKind::kRefused;
  if (Contains(text, "Could not resolve") || Contains(text, "Name or service not known") ||
      Contains(text, "Temporary failure in name resolution")) {
    return ErrorKind::kDns;
  }
  if (Contains(text, "timed out") || Contains(text, "No route to host")) {
    return ErrorKind::kConnectTimeout;
  }
  if (Contains(text, "Host key verification failed") ||
      Contains(text, "REMOTE HOST IDENTIFICATION HAS CHANGED")) {
    return ErrorKind::kHostKey;
  }
  if (Contains(text, "Permission denied")) return ErrorKind::kAuth;
  return ErrorKind::kConnectionLost;
}

Status ProxyCommand::Start(const std::string& command) {
  Stop();
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::Error(ErrorKind::kInternal, std::string("socketpair: ") + std::strerror(errno));
  }
  stderr_fd_ = memfd_create("proxy-stderr", MFD_CLOEXEC);
  const std::vector<std::string> environment = ProxyEnvironment();
  SubprocessSpec spec;
  spec.script = "exec " + command;
  spec.stdin_fd = pair[1];
  spec.stdout_fd = pair[1];
  spec.stderr_fd = stderr_fd_ >= 0 ? stderr_fd_ : SubprocessSpec::kInherit;
  spec.environment = &environment;
  spec.new_session = true;  // no controlling terminal to prompt on
  Status started = process_.Start(spec);
  close(pair[1]);
  if (!started.ok()) {
    close(pair[0]);
    return started;
  }
  fd_ = pair[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return Status::Ok();
}

Status ProxyCommand::AwaitBanner(Clock::time_point deadline, const std::string& where) {
  int error = 0;
  const FirstByte first = AwaitFirstByte(fd_, deadline, &error);
  if (first == FirstByte::kArrived) return Status::Ok();
  if (first == FirstByte::kTimedOut) {
    std::string said = StderrTail();
    return Status::Error(ErrorKind::kConnectTimeout,
                         where + ": no SSH banner through the ProxyCommand in time" +
                             (said.empty() ? "" : " (proxy said: " + said + ")"));
  }
  // The proxy closed its end: wait for it briefly so its stderr is complete.
  for (int i = 0; i < 50 && !process_.Ended(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::string said = StderrTail();
  return Status::Error(
      ClassifyProxyFailure(said),
      where + ": the ProxyCommand ended before the SSH banner" + (said.empty() ? "" : ": " + said));
}

std::string ProxyCommand::StderrTail() const {
  if (stderr_fd_ < 0) return "";
  off_t size = lseek(stderr_fd_, 0, SEEK_END);
  if (size <= 0) return "";
  off_t from = size > kStderrKept ? size - kStderrKept : 0;
  std::string text(static_cast<size_t>(size - from), '\0');
  ssize_t n = pread(stderr_fd_, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  // Its last few lines say why ("channel 0: open failed: connect failed:
  // Connection refused", then "stdio forwarding failed"), joined into one.
  std::vector<std::string> lines;
  for (const std::string& line : SplitLines(text)) {
    if (!Trim(line).empty()) lines.push_back(Trim(line));
  }
  if (lines.size() > 3) lines.erase(lines.begin(), lines.end() - 3);
  return Join(lines, "; ");
}

void ProxyCommand::Stop() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  // Closing our end is often enough (ssh -W exits on EOF); then TERM, then
  // KILL for whatever is left in its group. The leader is reaped last.
  process_.Stop(kTermGrace);
  if (stderr_fd_ >= 0) {
    close(stderr_fd_);
    stderr_fd_ = -1;
  }
}

}  // namespace fleetreap
