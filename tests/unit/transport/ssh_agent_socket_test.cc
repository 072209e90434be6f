#include "fleetreap/transport/ssh_agent_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/ssh_test_server.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A UNIX listener that never accepts: what a stalled agent looks like to a
// client (connects succeed into its queue, nothing is ever answered).
class StalledAgent {
 public:
  explicit StalledAgent(int backlog = 8) {
    char pattern[] = "/tmp/fleetreap-agent-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/agent.sock";
    fd_ = ListenUnix(path_, backlog);
  }
  ~StalledAgent() {
    for (int fd : fillers_) close(fd);
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  // Fills the listen queue so that a non-blocking connect gets EAGAIN.
  void Fill() {
    for (int i = 0; i < 16; ++i) {
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::memcpy(address.sun_path, path_.c_str(), path_.size());
      if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        close(fd);
        return;
      }
      fillers_.push_back(fd);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
  std::vector<int> fillers_;
};

TEST(SshAgentSocketTest, AReadBlockedOnAStalledAgentEndsAtTheDeadline) {
  StalledAgent agent;
  SshAgentSocket socket;
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(socket.Connect(agent.path(), start + milliseconds(300)).ok());
  const char request[] = {0, 0, 0, 1, 11};  // SSH2_AGENTC_REQUEST_IDENTITIES
  EXPECT_EQ(write(socket.fd(), request, sizeof request), 5);
  EXPECT_FALSE(socket.expired());
  char reply[4];
  EXPECT_EQ(read(socket.fd(), reply, sizeof reply), 0);  // blocked, then end-of-file
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(290));
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_TRUE(socket.expired());
  EXPECT_EQ(read(socket.fd(), reply, sizeof reply), 0);  // and at once afterwards
}

TEST(SshAgentSocketTest, EndingBeforeTheDeadlineIsPromptAndNotExpired) {
  StalledAgent agent;
  const Clock::time_point start = Clock::now();
  {
    SshAgentSocket socket;
    ASSERT_TRUE(socket.Connect(agent.path(), Clock::now() + milliseconds(60000)).ok());
    EXPECT_FALSE(socket.expired());
  }
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(SshAgentSocketTest, AFullQueueIsRetriedUntilTheDeadlineThenNamed) {
  StalledAgent agent(/*backlog=*/0);
  agent.Fill();
  SshAgentSocket socket;
  const Clock::time_point start = Clock::now();
  Status status = socket.Connect(agent.path(), start + milliseconds(300));
  EXPECT_EQ(status.kind(), ErrorKind::kAuth) << status.ToString();
  EXPECT_NE(status.message().find("ssh-agent at " + agent.path()), std::string::npos)
      << status.message();
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST(SshAgentSocketTest, AMissingAgentIsAnAuthErrorNamingIt) {
  SshAgentSocket socket;
  Status status = socket.Connect("/nonexistent/agent.sock", Clock::now() + milliseconds(100));
  EXPECT_EQ(status.kind(), ErrorKind::kAuth);
  EXPECT_EQ(status.message(),
            "ssh-agent at /nonexistent/agent.sock: cannot connect: No such file or directory");
}

TEST(SshAgentSocketTest, NowhereAbsorbsWritesAndEndsReadsAtOnce) {
  SshAgentSocket socket;
  ASSERT_TRUE(socket.ConnectNowhere().ok());
  const char request[] = {0, 0, 0, 1, 11};
  EXPECT_EQ(write(socket.fd(), request, sizeof request), 5);
  char reply[4];
  EXPECT_EQ(read(socket.fd(), reply, sizeof reply), 0);
  EXPECT_FALSE(socket.expired());
}

}  // namespace
}  // namespace fleetreap
