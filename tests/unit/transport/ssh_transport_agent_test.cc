// SshTransport and ssh-agent: a stalled agent ends the connect within its
// timeout, naming the agent; a working one still logs in.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "fleetreap/base/shell.h"
#include "fleetreap/transport/ssh_transport.h"
#include "support/ssh_test_server.h"
#include "support/ssh_transport_fixture.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// An ssh-agent socket that takes connections into its queue and never
// answers, for at most "hold": then it closes, so that code with no bound of
// its own comes back (late) instead of hanging the test binary.
class StalledAgent {
 public:
  explicit StalledAgent(milliseconds hold) {
    char pattern[] = "/tmp/fleetreap-stalled-agent-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/agent.sock";
    fd_ = ListenUnix(path_, 16);
    closer_ = std::thread([this, hold] {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, hold, [this] { return done_; });
      close(fd_);
    });
  }
  ~StalledAgent() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    closer_.join();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread closer_;
};

// Sets (or with nullptr unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST_F(SshTransportTest, AStalledAgentEndsTheConnectWithinItsTimeout) {
  // The named key is refused, so the agent is asked next; it never answers
  // (a stalled forwarded agent, a confirm-on-use key). The host must fail
  // by the connect timeout, naming the agent, and not be retried.
  StalledAgent agent(milliseconds(10000));
  struct Case {
    const char* name;
    bool via_config;  // IdentityAgent in the ssh config, no SSH_AUTH_SOCK
  };
  for (const Case& c : {Case{"SSH_AUTH_SOCK", false}, Case{"IdentityAgent", true}}) {
    SCOPED_TRACE(c.name);
    ScopedEnv env("SSH_AUTH_SOCK", c.via_config ? nullptr : agent.path().c_str());
    SshTransportOptions options = Good();
    options.identity_files = {server_->stranger_key()};
    options.use_agent = true;
    options.connect_timeout = milliseconds(1500);
    if (c.via_config) {
      options.use_ssh_config = true;
      options.ssh_config_file = server_->WriteKnownHosts(
          "agent_ssh_config", "Host *\n  IdentityAgent " + agent.path() + "\n");
    }
    SshTransport transport(options);
    const auto start = std::chrono::steady_clock::now();
    Status status = transport.Connect(kNoDeadline);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(status.kind(), ErrorKind::kAuth) << status.ToString();
    EXPECT_NE(status.message().find("ssh-agent at " + agent.path() + " did not answer"),
              std::string::npos)
        << status.message();
    EXPECT_LT(took, milliseconds(3500));
  }
  // --no-agent never touches it.
  ScopedEnv env("SSH_AUTH_SOCK", agent.path().c_str());
  SshTransportOptions options = Good();
  options.identity_files = {server_->stranger_key()};
  options.use_agent = false;
  SshTransport transport(options);
  Status status = transport.Connect(kNoDeadline);
  EXPECT_EQ(status.kind(), ErrorKind::kAuth);
  EXPECT_EQ(status.message().find("ssh-agent"), std::string::npos) << status.message();
}

TEST_F(SshTransportTest, AWorkingAgentStillLogsIn) {
  const std::string socket = server_->dir() + "/agent.sock";
  const std::string pid_file = server_->dir() + "/agent.pid";
  ASSERT_TRUE(Shell("ssh-agent -a " + socket +
                    " | sed -n 's/^SSH_AGENT_PID=\\([0-9]*\\);.*/\\1/p' > " + pid_file));
  std::ifstream in(pid_file);
  int pid = 0;
  in >> pid;
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(
      Shell("SSH_AUTH_SOCK=" + socket + " ssh-add -q " + server_->client_key() + " 2>/dev/null"));
  ScopedEnv env("SSH_AUTH_SOCK", socket.c_str());
  SshTransportOptions options = Good();
  options.identity_files = {server_->stranger_key()};
  options.use_agent = true;
  SshTransport transport(options);
  Status status = transport.Connect(kNoDeadline);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(transport.Run("echo via-agent", milliseconds(20000)).out, "via-agent\n");
  kill(pid, SIGTERM);
}

}  // namespace
}  // namespace fleetreap
