#include "fleetreap/transport/ssh_known_hosts.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

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

// One known_hosts file, split for KnownHostsSlice. Immutable once built.
struct KnownHostsIndex {
  struct stat info {};             // what the file was when read
  std::vector<std::string> lines;  // entry lines, newline-terminated
  std::vector<int> numbers;        // their 1-based line numbers in the file
  std::vector<size_t> any_host;    // hashed, pattern and marker lines
  std::unordered_map<std::string, std::vector<size_t>> by_name;  // lowercase
};

std::mutex g_index_mutex;
std::map<std::string, std::shared_ptr<const KnownHostsIndex>> g_indexes;

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// Reads and splits "path"; null when it cannot be read.
std::shared_ptr<const KnownHostsIndex> BuildIndex(const std::string& path) {
  auto index = std::make_shared<KnownHostsIndex>();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  std::string text;
  bool ok = fstat(fd, &index->info) == 0 && S_ISREG(index->info.st_mode);
  char buffer[16384];
  while (ok) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!ok) return nullptr;
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    ++line_number;
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t first = line.find_first_not_of(" \t\r\v\f");
    if (first == std::string::npos || line[first] == '#') continue;
    size_t last = line.find_first_of(" \t", first);
    std::string hosts =
        line.substr(first, last == std::string::npos ? std::string::npos : last - first);
    size_t number = index->lines.size();
    index->lines.push_back(line + "\n");
    index->numbers.push_back(line_number);
    // A tab before the first space, a pattern, a hash or a marker: libssh decides.
    if (last != line.find(' ', first) || hosts.find_first_of("*?!|@") != std::string::npos) {
      index->any_host.push_back(number);
      continue;
    }
    size_t from = 0;
    while (from <= hosts.size()) {
      size_t comma = hosts.find(',', from);
      if (comma == std::string::npos) comma = hosts.size();
      std::vector<size_t>& numbers = index->by_name[Lowercase(hosts.substr(from, comma - from))];
      if (numbers.empty() || numbers.back() != number) numbers.push_back(number);
      from = comma + 1;
    }
  }
  return index;
}

// The index of "path", read again only when the file changed. A missing
// file gives a null index and Ok; an unreadable one kInternal.
Status IndexOf(const std::string& path, std::shared_ptr<const KnownHostsIndex>* index) {
  index->reset();
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();
    return Status::Error(ErrorKind::kInternal,
                         "cannot read known_hosts " + path + ": " + std::strerror(errno));
  }
  {
    std::lock_guard<std::mutex> lock(g_index_mutex);
    auto found = g_indexes.find(path);
    if (found != g_indexes.end() && SameFile(found->second->info, info)) {
      *index = found->second;
      return Status::Ok();
    }
  }
  *index = BuildIndex(path);
  if (*index == nullptr) {
    return Status::Error(ErrorKind::kInternal, "cannot read known_hosts " + path);
  }
  std::lock_guard<std::mutex> lock(g_index_mutex);
  g_indexes[path] = *index;
  return Status::Ok();
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
                           std::vector<KnownHostsLine>* lines,
                           std::vector<KnownHostsLine>* revoked) {
  lines->clear();
  if (revoked != nullptr) revoked->clear();
  std::shared_ptr<const KnownHostsIndex> index;
  Status status = IndexOf(path, &index);
  if (!status.ok() || index == nullptr) return status;
  // Only the lines that name the host, and those only libssh can judge.
  std::vector<size_t> numbers = index->any_host;
  auto named = index->by_name.find(Lowercase(host_name));
  if (named != index->by_name.end()) {
    numbers.insert(numbers.end(), named->second.begin(), named->second.end());
    std::sort(numbers.begin(), numbers.end());
  }
  for (size_t number : numbers) {
    std::string text = index->lines[number];
    text.pop_back();  // the newline
    size_t first = text.find_first_not_of(" \t");
    std::vector<KnownHostsLine>* into = lines;
    if (text[first] == '@') {
      const std::string marker = "@revoked";
      if (revoked == nullptr || text.compare(first, marker.size(), marker) != 0) continue;
      first = text.find_first_not_of(" \t", first + marker.size());
      if (first == std::string::npos) continue;
      into = revoked;
    }
    ssh_knownhosts_entry* entry = nullptr;
    if (ssh_known_hosts_parse_line(host_name.c_str(), text.c_str() + first, &entry) == SSH_OK &&
        entry != nullptr && entry->publickey != nullptr) {
      into->push_back(
          {index->numbers[number], KeyText(entry->publickey), Fingerprint(entry->publickey)});
    }
    ssh_knownhosts_entry_free(entry);
  }
  return Status::Ok();
}

Status ReadKnownHosts(const std::vector<std::string>& files, const std::string& host_name,
                      std::vector<KnownHostsRecord>* records) {
  records->clear();
  for (const std::string& file : files) {
    std::vector<KnownHostsLine> lines;
    std::vector<KnownHostsLine> revoked;
    Status status = FindKnownHostsLines(file, host_name, &lines, &revoked);
    if (!status.ok()) return status;
    for (KnownHostsLine& line : revoked) records->push_back({file, std::move(line), true});
    for (KnownHostsLine& line : lines) records->push_back({file, std::move(line), false});
  }
  return Status::Ok();
}

KnownHostsVerdict JudgeHostKey(const std::vector<KnownHostsRecord>& records,
                               const std::string& key) {
  KnownHostsVerdict verdict;
  const std::string type = key.substr(0, key.find(' '));
  const KnownHostsRecord* known = nullptr;
  const KnownHostsRecord* contradicts = nullptr;  // same type, another key
  const KnownHostsRecord* other = nullptr;        // another type
  for (const KnownHostsRecord& record : records) {
    const bool same = record.line.key == key;
    if (record.revoked) {
      if (!same) continue;
      verdict.kind = KnownHostsVerdict::Kind::kRevoked;
      verdict.where = record.file + ":" + std::to_string(record.line.line);
      verdict.fingerprint = record.line.fingerprint;
      return verdict;
    }
    const bool same_type = record.line.key.compare(0, type.size() + 1, type + " ") == 0;
    const KnownHostsRecord** slot = same ? &known : same_type ? &contradicts : &other;
    if (*slot == nullptr) *slot = &record;
  }
  const KnownHostsRecord* decided = contradicts != nullptr ? contradicts
                                    : known != nullptr     ? known
                                                           : other;
  if (decided == nullptr) return verdict;
  verdict.kind =
      decided == known ? KnownHostsVerdict::Kind::kKnown : KnownHostsVerdict::Kind::kChanged;
  verdict.where = decided->file + ":" + std::to_string(decided->line.line);
  verdict.fingerprint = decided->line.fingerprint;
  return verdict;
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
                             const std::string& key, bool* appended) {
  std::lock_guard<std::mutex> process_lock(g_append_mutex);
  if (appended != nullptr) *appended = false;
  Status dir = EnsureKnownHostsDirectory(path);
  if (!dir.ok()) return dir;
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
    return Status::Error(ErrorKind::kHostKey, "host key for " + host_name +
                                                  " was recorded meanwhile with another key at " +
                                                  path + ":" +
                                                  std::to_string(existing.front().line));
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
  if (appended != nullptr) *appended = true;
  return Status::Ok();
}

}  // namespace fleetreap
