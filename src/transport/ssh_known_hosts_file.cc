// The user's known_hosts file before any host is reached: its directory is
// there (~/.ssh created 0700 as OpenSSH does for accept-new) and, for
// accept-new, the file can be written. Part of SshKnownHosts
// (ssh_known_hosts.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fleetreap/transport/ssh_known_hosts.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool IsDirectory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

}  // namespace

Status EnsureKnownHostsDirectory(const std::string& path) {
  const std::string dir = DirectoryOf(path);
  if (IsDirectory(dir)) return Status::Ok();
  // One level only, as ssh creates ~/.ssh: a missing parent is a typo.
  if (!IsDirectory(DirectoryOf(dir))) {
    return Status::Error(ErrorKind::kInternal, "no such directory " + DirectoryOf(dir));
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot create " + dir + " for known_hosts: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status CheckKnownHostsFile(const std::string& known_hosts, bool accept_new, std::string* created) {
  const bool given = !known_hosts.empty();
  const std::string path = given ? known_hosts : SshHomeDirectory() + "/.ssh/known_hosts";
  const std::string flag = given ? "--known-hosts " + known_hosts : "known_hosts " + path;
  const std::string dir = DirectoryOf(path);
  auto usage = [&flag](const std::string& problem) {
    return Status::Error(ErrorKind::kUsage, flag + ": " + problem);
  };
  if (!IsDirectory(dir)) {
    if (given) return usage("no such directory " + dir);
    if (!accept_new) return Status::Ok();  // nothing to read: each host says so
    Status status = EnsureKnownHostsDirectory(path);
    if (!status.ok()) return usage(status.message());
    if (created != nullptr) *created = dir;
  }
  struct stat info {};
  const bool exists = stat(path.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) return usage("is a directory");
  if (exists && access(path.c_str(), R_OK) != 0) {
    return usage(std::string("cannot read it: ") + std::strerror(errno));
  }
  if (!accept_new) return Status::Ok();
  const std::string& writable = exists ? path : dir;
  if (access(writable.c_str(), W_OK) != 0) {
    return usage(std::string("cannot record new host keys there (--host-key-policy accept-new): ") +
                 std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace fleetreap
