// Whether an inventory script may run (inventory_internal.h): fleetreap
// often runs as root, and a script is code run with its rights, so one that
// someone else could have written is refused, with the reason.
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "fleetreap/base/status.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

// Why "st" (the file or folder "what") lets another user than the caller
// or root change what runs; "" when it does not.
std::string ForeignWriter(const struct stat& st, const char* what, bool folder) {
  const uid_t me = geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return std::string("its ") + what + " belongs to uid " + std::to_string(st.st_uid) +
           ", neither you nor root";
  }
  if (!folder && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    return std::string("its ") + what + " is writable by its group or by others";
  }
  if (folder && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    return std::string("its ") + what + " is world-writable";
  }
  return "";
}

}  // namespace

Status CheckScriptTrusted(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return Status::Ok();  // the run itself reports it
  const std::string real = resolved;
  std::free(resolved);
  const std::string folder = real.substr(0, std::max<size_t>(real.rfind('/'), 1));
  struct stat file {};
  struct stat dir {};
  std::string why;
  if (stat(real.c_str(), &file) != 0 || stat(folder.c_str(), &dir) != 0) {
    why = "it cannot be checked";
  } else {
    why = ForeignWriter(file, "file", false);
    if (why.empty()) why = ForeignWriter(dir, "folder", true);
  }
  if (why.empty()) return Status::Ok();
  return Status::Error(ErrorKind::kInvalidInput, path + ": an inventory script not run: " + why +
                                                     (real == path ? "" : " (" + real + ")"));
}

}  // namespace inventory_internal
}  // namespace fleetreap
