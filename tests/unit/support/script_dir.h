// RunScriptIn: runs a remote step's script under /bin/sh in a scratch
// directory whose bin/ (the stand-ins: nvidia-smi, systemctl, logger) comes
// first on PATH, the way the script tests drive the real scripts. Returns
// the script's stdout (stderr dropped). RunInOwnMountNamespace: the same in
// a mount namespace of the script's own (unshare -m), where it may bind-mount
// crafted files over /proc's; false where the script failed or no such
// namespace could be made. Not thread-safe: one directory per test.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace fleetreap {

inline std::string RunScriptIn(const std::string& dir, const std::string& script) {
  const std::string path = dir + "/script.sh";
  std::ofstream(path) << script;
  chmod(path.c_str(), 0644);
  std::string cmd =
      "cd '" + dir + "' && PATH='" + dir + "/bin':/usr/bin:/bin /bin/sh script.sh 2>/dev/null";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

inline bool RunInOwnMountNamespace(const std::string& dir, const std::string& script,
                                   std::string* out) {
  const std::string path = dir + "/script.sh";
  std::ofstream(path) << script;
  chmod(path.c_str(), 0644);
  const std::string cmd = "cd '" + dir + "' && PATH='" + dir +
                          "/bin':/usr/bin:/bin unshare -m --propagation private /bin/sh "
                          "script.sh 2>/dev/null";
  out->clear();
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return false;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out->append(buf, n);
  return pclose(pipe) == 0;
}

}  // namespace fleetreap
