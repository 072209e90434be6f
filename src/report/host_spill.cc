#include "fleetreap/report/host_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fleetreap {
namespace {

// Where the spill of "target" goes: its directory ("" for the working
// one), or the temporary directory for stdout.
std::string SpillTemplate(const std::string& target) {
  if (target == "-") {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
    if (dir.back() != '/') dir += '/';
    return dir + ".fleetreap-stdout.spill.XXXXXX";
  }
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  return dir + "." + base + ".spill.XXXXXX";
}

}  // namespace

Status HostSpill::Open(const std::string& target, size_t hosts, std::unique_ptr<HostSpill>* out) {
  std::string path = SpillTemplate(target);
  // mkostemp creates the name with O_CREAT | O_EXCL and mode 0600: whatever
  // another user put there, a symlink included, is never opened.
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    return Status::Error(ErrorKind::kInternal,
                         "cannot spill beside " + target + ": " + std::strerror(errno));
  }
  unlink(path.c_str());
  out->reset(new HostSpill(fd, target, hosts));
  return Status::Ok();
}

HostSpill::HostSpill(int fd, std::string target, size_t hosts)
    : fd_(fd), target_(std::move(target)), places_(hosts, {0, 0}) {}

HostSpill::~HostSpill() { close(fd_); }

void HostSpill::Fail(const char* what, int error) {
  if (!status_.ok()) return;
  status_ = Status::Error(ErrorKind::kInternal, std::string("cannot ") + what + " the spill of " +
                                                    target_ + ": " + std::strerror(error));
}

void HostSpill::Put(size_t index, const std::string& piece) {
  if (!status_.ok() || index >= places_.size()) return;
  size_t done = 0;
  while (done < piece.size()) {
    const ssize_t n =
        pwrite(fd_, piece.data() + done, piece.size() - done, static_cast<off_t>(end_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("write", n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  places_[index] = {end_, piece.size() + 1};
  end_ += piece.size();
}

void HostSpill::ForEach(const std::function<void(const std::string& piece)>& emit) {
  std::string piece;
  for (const auto& [offset, length] : places_) {
    if (!status_.ok()) return;
    if (length == 0) continue;
    piece.resize(length - 1);
    size_t done = 0;
    while (done < piece.size()) {
      const ssize_t n =
          pread(fd_, piece.data() + done, piece.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Fail("read", n < 0 ? errno : EIO);
      done += static_cast<size_t>(n);
    }
    emit(piece);
  }
}

}  // namespace fleetreap
