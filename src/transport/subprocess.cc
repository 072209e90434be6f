#include "fleetreap/transport/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace fleetreap {
namespace {

// In the child: makes "target" (0, 1 or 2) the spec's fd for it.
void SetStream(int fd, int target, int flags) {
  if (fd == SubprocessSpec::kInherit) return;
  if (fd == SubprocessSpec::kDevNull) {
    fd = open("/dev/null", flags);
    if (fd < 0) return;
  }
  dup2(fd, target);
}

}  // namespace

Subprocess::~Subprocess() {
  if (pid_ > 0) Stop(std::chrono::milliseconds(0));
}

Status Subprocess::Start(const SubprocessSpec& spec) {
  if (pid_ > 0) Stop(std::chrono::milliseconds(0));
  // Everything the child needs is built before fork: it may not allocate.
  const char* argv[] = {"sh", "-c", spec.script.c_str(), nullptr};
  std::vector<const char*> envp;
  if (spec.environment != nullptr) {
    for (const std::string& entry : *spec.environment) envp.push_back(entry.c_str());
    envp.push_back(nullptr);
  }
  char* const* env = spec.environment != nullptr ? const_cast<char* const*>(envp.data()) : environ;
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    if (spec.new_session) {
      setsid();
    } else {
      setpgid(0, 0);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    SetStream(spec.stdin_fd, 0, O_RDONLY);
    SetStream(spec.stdout_fd, 1, O_WRONLY);
    SetStream(spec.stderr_fd, 2, O_WRONLY);
#ifdef SYS_close_range
    syscall(SYS_close_range, 3U, ~0U, 0U);
#endif
    execve("/bin/sh", const_cast<char* const*>(argv), env);
    _exit(127);
  }
  if (pid < 0) {
    return Status::Error(ErrorKind::kInternal, std::string("fork: ") + std::strerror(errno));
  }
  // Also done by the child; whoever is first wins, so the group exists
  // before the first signal. (A session leader makes its own group.)
  if (!spec.new_session) setpgid(pid, pid);
  pid_ = pid;
  return Status::Ok();
}

bool Subprocess::Ended() const {
  if (pid_ <= 0) return true;
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

void Subprocess::SignalGroup(int signal_number) {
  if (pid_ > 0) kill(-pid_, signal_number);
}

bool Subprocess::Reap(int* wait_status) {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (got <= 0) return false;
  if (wait_status != nullptr) *wait_status = status;
  return true;
}

void Subprocess::Stop(std::chrono::milliseconds grace, int* wait_status) {
  if (pid_ <= 0) return;
  const auto give_up = std::chrono::steady_clock::now() + grace;
  if (!Ended()) SignalGroup(SIGTERM);
  while (!Ended() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  SignalGroup(SIGKILL);
  Reap(wait_status);
}

}  // namespace fleetreap
