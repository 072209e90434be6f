// SshTestServer: a throw-away OpenSSH server for the transport tests. It runs
// /usr/sbin/sshd as a child in private mount and PID namespaces (so its
// privilege separation directory never touches the machine's /run, and
// stopping it ends every session it started), on 127.0.0.1 and a
// free port, with its own host key, client keys and authorized_keys in a
// temporary directory. Stopped by the PID it started. Header-only, since the
// test binary is built from tests/*_test.cc alone. Not thread-safe.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fleetreap {

/// Runs "command" with /bin/sh; true when it exits 0.
inline bool Shell(const std::string& command);
/// A port on 127.0.0.1 where nothing listens (bound once, then released).
inline int UnusedPort();
/// A UNIX stream socket listening at "path" (what an ssh-agent looks like
/// to its clients, before it answers anything); -1 on failure.
inline int ListenUnix(const std::string& path, int backlog);

class SshTestServer {
 public:
  SshTestServer() = default;
  ~SshTestServer();
  SshTestServer(const SshTestServer&) = delete;
  SshTestServer& operator=(const SshTestServer&) = delete;

  /// Creates the keys and starts sshd with "extra_config" lines appended to
  /// its config; false (with "*why") when this machine cannot run one (not
  /// root, no sshd), so tests can skip.
  bool Start(std::string* why, const std::string& extra_config = "");
  void Stop();

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string client_key() const { return dir_ + "/client_key"; }
  std::string encrypted_key() const { return dir_ + "/encrypted_key"; }
  std::string stranger_key() const { return dir_ + "/stranger_key"; }  // not authorized
  /// "ssh-ed25519 AAAA..." of the server and of an unrelated host key.
  std::string host_key() const;
  std::string other_host_key() const;
  /// Writes a known_hosts file under dir() with "lines" and returns its path.
  std::string WriteKnownHosts(const std::string& name, const std::string& lines) const;

 private:
  std::string dir_;
  int port_ = 0;
  int pid_ = -1;
};

/// A TCP listener on 127.0.0.1 that accepts and never says a word.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "type base64" from an OpenSSH .pub file.
inline std::string PublicKey(const std::string& path) {
  std::istringstream in(Slurp(path));
  std::string type, base64;
  in >> type >> base64;
  return type + " " + base64;
}

inline int BindLoopback(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(address.sin_port);
  return fd;
}

inline bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

inline bool Shell(const std::string& command) { return std::system(command.c_str()) == 0; }

inline int UnusedPort() {
  int port = 0;
  int fd = BindLoopback(&port);
  if (fd >= 0) close(fd);
  return port;
}

inline int ListenUnix(const std::string& path, int backlog) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof address.sun_path) return -1;
  std::memcpy(address.sun_path, path.c_str(), path.size());
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, backlog) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline SshTestServer::~SshTestServer() { Stop(); }

inline bool SshTestServer::Start(std::string* why, const std::string& extra_config) {
  if (getuid() != 0 || access("/usr/sbin/sshd", X_OK) != 0 ||
      access("/usr/bin/unshare", X_OK) != 0) {
    *why = "needs root, /usr/sbin/sshd and unshare";
    return false;
  }
  char pattern[] = "/tmp/fleetreap-sshtest-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    *why = "mkdtemp failed";
    return false;
  }
  dir_ = pattern;
  const std::string keygen = "ssh-keygen -q -t ed25519 -C test ";
  if (!Shell(keygen + "-N '' -f " + dir_ + "/host_key") ||
      !Shell(keygen + "-N '' -f " + dir_ + "/other_host_key") ||
      !Shell(keygen + "-N '' -f " + client_key()) ||
      !Shell(keygen + "-N '' -f " + stranger_key()) ||
      !Shell(keygen + "-N secret -f " + encrypted_key()) ||
      !Shell("cat " + client_key() + ".pub " + encrypted_key() + ".pub > " + dir_ +
             "/authorized_keys")) {
    *why = "ssh-keygen failed";
    return false;
  }
  port_ = UnusedPort();
  std::ofstream config(dir_ + "/sshd_config");
  config << "ListenAddress 127.0.0.1:" << port_ << "\n"
         << "HostKey " << dir_ << "/host_key\n"
         << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
         << "PidFile " << dir_ << "/sshd.pid\n"
         << "StrictModes no\nPermitRootLogin prohibit-password\n"
         << "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
         << "UsePAM no\nMaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n"
         << extra_config;
  config.close();
  const std::string script =
      "mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && exec "
      "/usr/sbin/sshd -D -f " +
      dir_ + "/sshd_config -E " + dir_ + "/sshd.log";
  pid_ = fork();
  if (pid_ == 0) {
    // A PID namespace of its own: ending unshare ends sshd and every session
    // and command it started, so no test leaves a process behind.
    execl("/usr/bin/unshare", "unshare", "--mount", "--pid", "--fork", "--kill-child",
          "--mount-proc", "--propagation", "private", "/bin/sh", "-c", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 1000 && !Accepts(port_); ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pid_ < 0 || !Accepts(port_)) {
    *why = "sshd did not start: " + Slurp(dir_ + "/sshd.log");
    return false;
  }
  return true;
}

inline void SshTestServer::Stop() {
  if (pid_ > 0) {
    // unshare --fork ignores SIGTERM while it waits; SIGKILL ends it, and
    // --kill-child then ends the namespace's init and with it everything.
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (!dir_.empty() && dir_.rfind("/tmp/fleetreap-sshtest-", 0) == 0) {
    Shell("rm -rf " + dir_);
    dir_.clear();
  }
}

inline std::string SshTestServer::host_key() const { return PublicKey(dir_ + "/host_key.pub"); }
inline std::string SshTestServer::other_host_key() const {
  return PublicKey(dir_ + "/other_host_key.pub");
}

inline std::string SshTestServer::WriteKnownHosts(const std::string& name,
                                                  const std::string& lines) const {
  std::string path = dir_ + "/" + name;
  std::ofstream(path) << lines;
  return path;
}

inline SilentListener::SilentListener() {
  fd_ = BindLoopback(&port_);
  if (fd_ >= 0) listen(fd_, 16);
}

inline SilentListener::~SilentListener() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace fleetreap
