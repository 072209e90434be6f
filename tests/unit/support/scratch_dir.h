// ScratchDir: a test's scratch directory under /tmp (mkdtemp) and the child
// processes the test started in it. The destructor SIGKILLs and reaps each
// adopted child by its PID, then removes the directory (rm -rf). Not
// thread-safe: one per test, owned by the fixture.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <string>
#include <vector>

namespace fleetreap {

class ScratchDir {
 public:
  /// Creates /tmp/fleetreap-TAG-XXXXXX with the subdirectories "subdirs".
  explicit ScratchDir(const std::string& tag, const std::vector<std::string>& subdirs = {}) {
    std::string tmpl = "/tmp/fleetreap-" + tag + "-XXXXXX";
    if (mkdtemp(&tmpl[0]) != nullptr) path_ = tmpl;
    for (const std::string& sub : subdirs) mkdir((path_ + "/" + sub).c_str(), 0755);
  }
  ~ScratchDir() {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (path_.empty()) return;
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// The directory ("" if mkdtemp failed).
  const std::string& path() const { return path_; }
  /// "pid", a child this test forked, is killed and reaped at the end.
  void Adopt(pid_t pid) { children_.push_back(pid); }
  /// "pid" was reaped by the test itself: never signalled here (its PID may
  /// be another process's by then).
  void Disown(pid_t pid) {
    for (size_t i = 0; i < children_.size(); ++i) {
      if (children_[i] == pid) children_.erase(children_.begin() + static_cast<long>(i--));
    }
  }

 private:
  std::string path_;
  std::vector<pid_t> children_;
};

}  // namespace fleetreap
