#include "fleetreap/transport/command_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

std::string Millis(std::chrono::milliseconds duration) {
  return std::to_string(duration.count()) + " ms";
}

std::string HowItEnded(const CommandResult& result) {
  std::string text;
  switch (result.end) {
    case CommandEnd::kExited: text = "exited " + std::to_string(result.exit_code); break;
    case CommandEnd::kSignaled: text = "killed by SIG" + result.signal; break;
    default: text = CommandEndName(result.end);
  }
  if (!result.error.empty()) text += ": " + result.error;
  return text;
}

// Every line of "text" behind "prefix", the last one ended too.
std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

// "bytes" as text: each NUL (the host's records end in one) as the two
// characters "\0" and a line break, each backslash doubled, every other byte
// as sent.
std::string ShowNuls(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    if (c == '\0') {
      out += "\\0\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out;
}

// The counts are of the bytes the host sent, before ShowNuls.
std::string StreamBlock(const char* name, const std::string& text, bool capped, size_t max_bytes) {
  if (text.empty()) return std::string("  ") + name + ": empty\n";
  std::string out = std::string("  ") + name + " (" + std::to_string(text.size()) + " bytes" +
                    (capped ? ", capped by the transport" : "") + "):\n";
  if (text.size() <= max_bytes) return out + Indent(ShowNuls(text), "  | ");
  out += Indent(ShowNuls(text.substr(0, max_bytes)), "  | ");
  return out + "  ... " + std::to_string(text.size() - max_bytes) + " more bytes not logged\n";
}

class LoggedTransport : public Transport {
 public:
  LoggedTransport(std::unique_ptr<Transport> inner, std::FILE* file, Clock& clock,
                  size_t max_output_bytes)
      : inner_(std::move(inner)), file_(file), clock_(clock), max_output_bytes_(max_output_bytes) {}
  ~LoggedTransport() override {
    if (file_ != nullptr) std::fclose(file_);
  }

  Status Connect(std::chrono::steady_clock::time_point not_after) override {
    auto start = clock_.WallNow();
    Write(start, "connect " + inner_->Describe() + "\n");
    Status status = inner_->Connect(not_after);
    auto end = clock_.WallNow();
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(end - start);
    Write(end, (status.ok() ? std::string("connected") : "connect failed: " + status.ToString()) +
                   " (" + Millis(took) + ")\n");
    return status;
  }

  void NameNextCommand(const std::string& name) override { next_name_ = name; }

  CommandResult Run(const std::string& command, std::chrono::milliseconds timeout) override {
    const std::string name = next_name_.empty() ? "" : " " + next_name_;
    next_name_.clear();
    Write(clock_.WallNow(),
          "run" + name + " (timeout " + Millis(timeout) + "):\n" + Indent(command, "  $ "));
    CommandResult result = inner_->Run(command, timeout);
    Write(clock_.WallNow(),
          HowItEnded(result) + " (" + Millis(result.duration) + ")\n" +
              StreamBlock("stdout", result.out, result.out_truncated, max_output_bytes_) +
              StreamBlock("stderr", result.err, result.err_truncated, max_output_bytes_));
    return result;
  }

  void Close() override {
    inner_->Close();
    Write(clock_.WallNow(), "closed\n");
  }

  std::string Describe() const override { return inner_->Describe(); }
  std::string HostKeyFingerprint() const override { return inner_->HostKeyFingerprint(); }
  std::string HostKeyType() const override { return inner_->HostKeyType(); }
  std::string HostKeyAcceptedInto() const override { return inner_->HostKeyAcceptedInto(); }

 private:
  void Write(std::chrono::system_clock::time_point when, const std::string& text) {
    if (file_ == nullptr) return;
    std::string entry = FormatUtcTimestamp(when) + " " + text;
    std::fwrite(entry.data(), 1, entry.size(), file_);
    std::fflush(file_);
  }

  std::unique_ptr<Transport> inner_;
  std::FILE* file_;
  Clock& clock_;
  size_t max_output_bytes_;
  std::string next_name_;  // NameNextCommand's, for the next Run only
};

Status MakeDirectories(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error(ErrorKind::kInternal,
                           "cannot create log directory " + dir + ": " + std::strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot create log directory " + dir + ": not a directory");
  }
  return Status::Ok();
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The first entry of "dir" that is a symbolic link, or "".
std::string FirstSymlink(const std::string& dir) {
  DIR* listing = opendir(dir.c_str());
  if (listing == nullptr) return "";
  std::string found;
  while (const dirent* entry = readdir(listing)) {
    struct stat info {};
    if (fstatat(dirfd(listing), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(info.st_mode)) {
      found = entry->d_name;
      break;
    }
  }
  closedir(listing);
  return found;
}

// As ssh's StrictModes: the logs are opened as this user (often root), so a
// directory someone else owns or may write could hold their symlinks.
Status CheckDirectoryIsOurs(const std::string& dir) {
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0) {
    return Status::Error(ErrorKind::kUsage, "--log-dir " + dir + ": " + std::strerror(errno));
  }
  if (info.st_uid != geteuid()) {
    return Status::Error(ErrorKind::kUsage, "--log-dir " + dir + ": owned by uid " +
                                                std::to_string(info.st_uid) + ", not by uid " +
                                                std::to_string(geteuid()) + " (this user)");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status::Error(ErrorKind::kUsage, "--log-dir " + dir +
                                                ": writable by its group or others (mode " +
                                                ModeText(info.st_mode) + "); make it 0700");
  }
  // Each file is opened with O_NOFOLLOW too; this says so before any host.
  const std::string link = FirstSymlink(dir);
  if (!link.empty()) {
    return Status::Error(ErrorKind::kUsage, "--log-dir " + dir + ": " + link +
                                                " is a symbolic link; refusing to "
                                                "write through it");
  }
  return Status::Ok();
}

}  // namespace

CommandLog::CommandLog(std::string dir, Clock& clock, size_t max_output_bytes)
    : dir_(std::move(dir)), clock_(clock), max_output_bytes_(max_output_bytes) {}

Status CommandLog::Open(const std::string& dir, std::unique_ptr<CommandLog>* log, Clock& clock,
                        size_t max_output_bytes) {
  if (dir.empty()) {
    return Status::Error(ErrorKind::kUsage, "--log-dir needs a directory");
  }
  Status status = MakeDirectories(dir);
  if (status.ok()) status = CheckDirectoryIsOurs(dir);
  if (!status.ok()) return status;
  log->reset(new CommandLog(dir, clock, max_output_bytes));
  return Status::Ok();
}

std::string CommandLog::PathFor(const std::string& host_name) const {
  std::string safe = host_name.empty() ? "_" : host_name;
  for (char& c : safe) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (safe == "." || safe == "..") safe = "_";
  return dir_ + "/" + safe + ".log";
}

std::unique_ptr<Transport> CommandLog::Wrap(const std::string& host_name,
                                            std::unique_ptr<Transport> inner) const {
  if (inner == nullptr) return inner;
  std::string path = PathFor(host_name);
  // 0600: the logs hold what the hosts said, command lines included.
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  std::FILE* file = fd < 0 ? nullptr : fdopen(fd, "a");
  if (fd >= 0 && file == nullptr) close(fd);
  if (file == nullptr) {
    spdlog::warn("cannot open command log {}: {}", path, std::strerror(errno));
  }
  return std::make_unique<LoggedTransport>(std::move(inner), file, clock_, max_output_bytes_);
}

}  // namespace fleetreap
