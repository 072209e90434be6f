#include "fleetreap/report/report_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

namespace fleetreap {
namespace {

Status WriteError(const std::string& path, int error) {
  return Status::Error(ErrorKind::kInternal, "cannot write " + path + ": " + std::strerror(error));
}

// The directory part of "path" ("" for the working directory) and its base.
void SplitPath(const std::string& path, std::string* dir, std::string* base) {
  const size_t slash = path.rfind('/');
  *dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  *base = slash == std::string::npos ? path : path.substr(slash + 1);
}

bool WriteAll(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Hands "render"'s pieces to "fd" in writes of about kWriteChunk bytes.
// False (errno set) once a write failed; later pieces are dropped.
constexpr size_t kWriteChunk = size_t{64} * 1024;

bool WriteBuffered(int fd, const ReportRenderer& render) {
  std::string buffer;
  bool ok = true;
  render([&](const std::string& piece) {
    buffer += piece;
    if (ok && buffer.size() >= kWriteChunk) {
      ok = WriteAll(fd, buffer);
      buffer.clear();
    }
  });
  return ok && WriteAll(fd, buffer);
}

}  // namespace

Status WriteReportFile(const std::string& path, const std::string& content,
                       std::FILE* stdout_stream) {
  return WriteReportPieces(
      path, [&content](const ReportPieceSink& emit) { emit(content); }, stdout_stream);
}

Status WriteReportPieces(const std::string& path, const ReportRenderer& render,
                         std::FILE* stdout_stream, unsigned mode) {
  if (path == "-") {
    bool written = true;
    render([&](const std::string& piece) {
      written =
          written && std::fwrite(piece.data(), 1, piece.size(), stdout_stream) == piece.size();
    });
    if (!written || std::fflush(stdout_stream) != 0) return WriteError("stdout", errno);
    return Status::Ok();
  }
  // mkstemp creates the name exclusively (O_CREAT | O_EXCL): whatever another
  // user put in the directory, a symlink included, is never opened or followed.
  std::string dir;
  std::string base;
  SplitPath(path, &dir, &base);
  std::string temp = dir + "." + base + ".XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return WriteError(path, errno);
  bool written =
      fchmod(fd, static_cast<mode_t>(mode)) == 0 && WriteBuffered(fd, render) && fsync(fd) == 0;
  int error = errno;
  if (close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) {
    unlink(temp.c_str());
    return WriteError(path, error);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    unlink(temp.c_str());
    return WriteError(path, error);
  }
  return Status::Ok();
}

Status CheckOutputPaths(const ReportFiles& files) {
  const std::vector<ReportOutput>& outputs = ReportOutputs();
  auto usage = [](const std::string& message) { return Status::Error(ErrorKind::kUsage, message); };
  for (size_t i = 0; i < std::size(outputs); ++i) {
    const std::string& path = files.*outputs[i].path;
    const std::string flag = std::string(outputs[i].flag) + " " + path;
    if (path.empty() || path == "-") continue;
    for (size_t j = 0; j < i; ++j) {
      if (files.*outputs[j].path == path) {
        return usage(flag + " and " + outputs[j].flag + " " + path + " name the same file");
      }
    }
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return usage(flag + ": is a directory");
    std::string dir;
    std::string base;
    SplitPath(path, &dir, &base);
    if (base.empty()) return usage(flag + ": is a directory");
    std::string probe = dir + "." + base + ".XXXXXX";
    int fd = mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) return usage(flag + ": cannot write there: " + std::strerror(errno));
    close(fd);
    unlink(probe.c_str());
  }
  return Status::Ok();
}

std::FILE* HumanStream(const ReportFiles& files) {
  for (const ReportOutput& output : ReportOutputs()) {
    if (files.*output.path == "-") return stderr;
  }
  return stdout;
}

}  // namespace fleetreap
