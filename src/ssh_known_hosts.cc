#include "fleetreap/ssh_known_hosts.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/libssh.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

namespace fleetreap {
namespace {

std::mutex g_append_mutex;

// "type base64" for a key, or "" when libssh cannot export it.
std::string KeyText(ssh_key key) {
  char* base64 = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &base64) != SSH_OK) return "";
  std::string text = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + base64;
  ssh_string_free_char(base64);
  return text;
}

std::string Fingerprint(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t length = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) != 0) {
    return "";
  }
  char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
  std::string fingerprint = text != nullptr ? text : "";
  ssh_string_free_char(text);
  ssh_clean_pubkey_hash(&hash);
  return fingerprint;
}

// Closes a descriptor (and so drops its flock) on every path out.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string KnownHostsName(const std::string& address, int port) {
  if (port == 22) return address;
  return "[" + address + "]:" + std::to_string(port);
}

Status FindKnownHostsLines(const std::string& path, const std::string& host_name,
                           std::vector<KnownHostsLine>* lines) {
  lines->clear();
  std::ifstream in(path);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0 && errno == ENOENT) return Status::Ok();
    return Status::Error(ErrorKind::kInternal, "cannot read known_hosts " + path);
  }
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#' || text[first] == '@') continue;
    ssh_knownhosts_entry* entry = nullptr;
    if (ssh_known_hosts_parse_line(host_name.c_str(), text.c_str() + first, &entry) ==
            SSH_OK &&
        entry != nullptr && entry->publickey != nullptr) {
      lines->push_back({number, KeyText(entry->publickey), Fingerprint(entry->publickey)});
    }
    ssh_knownhosts_entry_free(entry);
  }
  return Status::Ok();
}

std::string KeyFingerprint(const std::string& key) {
  size_t space = key.find(' ');
  if (space == std::string::npos) return "";
  ssh_key parsed = nullptr;
  enum ssh_keytypes_e type = ssh_key_type_from_name(key.substr(0, space).c_str());
  if (ssh_pki_import_pubkey_base64(key.substr(space + 1).c_str(), type, &parsed) != SSH_OK) {
    return "";
  }
  std::string fingerprint = Fingerprint(parsed);
  ssh_key_free(parsed);
  return fingerprint;
}

Status AppendKnownHostsEntry(const std::string& path, const std::string& host_name,
                             const std::string& key) {
  std::lock_guard<std::mutex> process_lock(g_append_mutex);
  FdCloser file{open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600)};
  if (file.fd < 0) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot open known_hosts " + path + ": " + std::strerror(errno));
  }
  int rc;
  do {
    rc = flock(file.fd, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot lock known_hosts " + path + ": " + std::strerror(errno));
  }
  std::vector<KnownHostsLine> existing;
  Status status = FindKnownHostsLines(path, host_name, &existing);
  if (!status.ok()) return status;
  for (const KnownHostsLine& line : existing) {
    if (line.key == key) return Status::Ok();
  }
  if (!existing.empty()) {
    return Status::Error(ErrorKind::kHostKey,
                         "host key for " + host_name + " was recorded meanwhile with another key at " +
                             path + ":" + std::to_string(existing.front().line));
  }
  std::string entry = host_name + " " + key + "\n";
  struct stat info {};
  char last = '\n';
  if (fstat(file.fd, &info) == 0 && info.st_size > 0 &&
      pread(file.fd, &last, 1, info.st_size - 1) == 1 && last != '\n') {
    entry.insert(0, "\n");  // the file's last line had no end
  }
  ssize_t written = write(file.fd, entry.data(), entry.size());
  if (written != static_cast<ssize_t>(entry.size())) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot append to known_hosts " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace fleetreap
