// ScriptRunner: a scratch directory with a stand-in systemctl that records
// its arguments, one per line, where the remote step tests run the real
// scripts (RunScriptIn); kHostile, unit names and patterns built to break
// out of a shell word; ScanRequestFor, a scan request with a short
// nvidia-smi bound. Not thread-safe: one directory per test.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/remote/scan_script.h"
#include "support/script_dir.h"

namespace fleetreap {

// A scratch directory with a fake systemctl that records its arguments, one
// per line, so a test sees exactly what the remote shell passed.
class ScriptRunner {
 public:
  ScriptRunner() {
    char tmpl[] = "/tmp/fleetreap-rs-XXXXXX";
    dir_ = mkdtemp(tmpl);
    Write(
        dir_ + "/bin/systemctl",
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> " + dir_ + "/args\nexit 0\n",
        0755);
  }
  ~ScriptRunner() {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  void Write(const std::string& path, const std::string& text, int mode) {
    std::string parent = path.substr(0, path.rfind('/'));
    mkdir(parent.c_str(), 0755);
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
  }
  // Runs "script" with /bin/sh in the scratch directory; returns stdout.
  std::string Run(const std::string& script) { return RunScriptIn(dir_, script); }
  std::string Args() {
    std::ifstream in(dir_ + "/args");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  bool Exists(const std::string& name) { return access((dir_ + "/" + name).c_str(), F_OK) == 0; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

inline const std::vector<std::string> kHostile = {
    "a'; touch pwned1; echo '",  "$(touch pwned2)", "`touch pwned3`",
    "x\ntouch pwned4",           "x; touch pwned5", "\"; touch pwned6; \"",
    "x.service && touch pwned7",
};

inline ScanRequest Request(std::vector<std::string> units = {}, std::vector<int> watch = {}) {
  ScanRequest request;
  request.units = std::move(units);
  request.nvidia_smi_timeout = std::chrono::milliseconds(2000);
  request.watch = std::move(watch);
  return request;
}

}  // namespace fleetreap
