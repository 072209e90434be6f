#include "fleetreap/transport/private_key_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace fleetreap {

std::string PrivateKeyModeProblem(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return "";
  if (info.st_uid != getuid() || (info.st_mode & 077) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return std::string("permissions ") + mode +
         " are too open (ssh refuses such a key); chmod 600 it";
}

}  // namespace fleetreap
