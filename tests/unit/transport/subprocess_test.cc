#include "fleetreap/transport/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Starts "spec" with its stdout on a pipe and returns what it printed up to
// EOF (every process of its group closed the pipe, or ended).
class Captured {
 public:
  explicit Captured(SubprocessSpec spec) {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    spec.stdout_fd = fds[1];
    status_ = process_.Start(spec);
    close(fds[1]);
    read_fd_ = fds[0];
  }
  ~Captured() { close(read_fd_); }
  std::string ReadLine() {
    std::string line;
    char c;
    while (read(read_fd_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  std::string ReadAll() {
    std::string text;
    char buffer[256];
    ssize_t n;
    while ((n = read(read_fd_, buffer, sizeof buffer)) > 0) text.append(buffer, n);
    return text;
  }
  Subprocess& process() { return process_; }
  const Status& status() const { return status_; }

 private:
  Subprocess process_;
  Status status_;
  int read_fd_ = -1;
};

SubprocessSpec Script(const std::string& script) {
  SubprocessSpec spec;
  spec.script = script;
  spec.stdin_fd = SubprocessSpec::kDevNull;
  return spec;
}

// True once "pid" is gone or a zombie (its parent, init, reaps it later).
bool GoneWithin(pid_t pid, milliseconds limit) {
  auto give_up = steady_clock::now() + limit;
  while (steady_clock::now() < give_up) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return true;
    size_t close_paren = text.rfind(')');
    if (close_paren != std::string::npos && close_paren + 2 < text.size() &&
        text[close_paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

TEST(SubprocessTest, RunsTheScriptAndReapsItsExitStatus) {
  Captured run(Script("echo hello; exit 3"));
  ASSERT_TRUE(run.status().ok()) << run.status().ToString();
  EXPECT_TRUE(run.process().running());
  EXPECT_EQ(run.ReadAll(), "hello\n");
  int wait_status = 0;
  ASSERT_TRUE(run.process().Reap(&wait_status));
  ASSERT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 3);
  EXPECT_FALSE(run.process().running());
  EXPECT_FALSE(run.process().Reap(&wait_status));  // nothing left to reap
}

TEST(SubprocessTest, EndedLeavesTheLeaderUnreaped) {
  Captured run(Script("exit 5"));
  ASSERT_TRUE(run.status().ok());
  auto give_up = steady_clock::now() + std::chrono::seconds(10);
  while (!run.process().Ended() && steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(run.process().Ended());
  // A zombie still: asking again, and the group ID, still work.
  EXPECT_TRUE(run.process().Ended());
  EXPECT_EQ(getpgid(run.process().pid()), run.process().pid());
  int wait_status = 0;
  ASSERT_TRUE(run.process().Reap(&wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 5);
}

TEST(SubprocessTest, OwnProcessGroupOrOwnSession) {
  for (bool new_session : {false, true}) {
    SubprocessSpec spec = Script("echo started; sleep 30");
    spec.new_session = new_session;
    Captured run(spec);
    ASSERT_TRUE(run.status().ok());
    EXPECT_EQ(run.ReadLine(), "started");
    const pid_t pid = run.process().pid();
    EXPECT_EQ(getpgid(pid), pid) << new_session;
    EXPECT_EQ(getsid(pid) == pid, new_session);
    run.process().Stop(milliseconds(2000));
    EXPECT_FALSE(run.process().running());
  }
}

TEST(SubprocessTest, StopEndsTheGroupWithTerm) {
  Captured run(Script("sleep 30 & echo $!; wait"));
  ASSERT_TRUE(run.status().ok());
  const pid_t background = std::stoi(run.ReadLine());
  auto start = steady_clock::now();
  int wait_status = 0;
  run.process().Stop(milliseconds(5000), &wait_status);
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(4));  // TERM was enough
  ASSERT_TRUE(WIFSIGNALED(wait_status));
  EXPECT_EQ(WTERMSIG(wait_status), SIGTERM);
  EXPECT_TRUE(GoneWithin(background, milliseconds(5000)));
}

TEST(SubprocessTest, StopKillsWhatIgnoresTerm) {
  Captured run(Script("trap '' TERM; sleep 30 & echo $!; wait"));
  ASSERT_TRUE(run.status().ok());
  const pid_t background = std::stoi(run.ReadLine());
  auto start = steady_clock::now();
  int wait_status = 0;
  run.process().Stop(milliseconds(200), &wait_status);
  EXPECT_GE(steady_clock::now() - start, milliseconds(200));
  ASSERT_TRUE(WIFSIGNALED(wait_status));
  EXPECT_EQ(WTERMSIG(wait_status), SIGKILL);
  EXPECT_TRUE(GoneWithin(background, milliseconds(5000)));
  run.process().Stop(milliseconds(200));  // a second Stop does nothing
}

TEST(SubprocessTest, EnvironmentAndNoInheritedFds) {
  int leaked = open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(leaked, 3);
  const std::vector<std::string> environment = {"GREETING=hi there"};
  SubprocessSpec spec = Script(
      "echo \"$GREETING\"; echo \"${HOME-unset}\"; "
      "if [ -e /proc/$$/fd/" +
      std::to_string(leaked) + " ]; then echo open; else echo closed; fi");
  spec.environment = &environment;
  Captured run(spec);
  close(leaked);
  ASSERT_TRUE(run.status().ok());
  EXPECT_EQ(run.ReadAll(), "hi there\nunset\nclosed\n");
  int wait_status = 0;
  ASSERT_TRUE(run.process().Reap(&wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
}

TEST(SubprocessTest, DestructorEndsARunningChild) {
  pid_t pid;
  {
    Captured run(Script("echo started; sleep 30"));
    ASSERT_TRUE(run.status().ok());
    EXPECT_EQ(run.ReadLine(), "started");
    pid = run.process().pid();
  }
  // Reaped by the destructor: no such child of ours any more.
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace fleetreap
