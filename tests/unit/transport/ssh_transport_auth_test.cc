// SshTransport::Authenticate against a real sshd that is slow to judge a key.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fleetreap/transport/ssh_transport.h"
#include "support/ssh_test_server.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// A key that is not in authorized_keys makes this sshd run its
// AuthorizedKeysCommand, which sleeps: the server answers the key only after
// the client's connect timeout (as an sshd starved of CPU, or one whose
// AuthorizedKeysCommand asks a slow directory, does). Seen at 1,000 hosts
// in bench/scale_bench.py: the timeout was reported as a refused key (auth,
// never retried) instead of connect_timeout (retried).
TEST(SshTransportAuthTest, AKeyNotJudgedBeforeTheDeadlineIsATimeoutNotARefusal) {
  SshTestServer server;
  std::string why;
  if (!server.Start(&why,
                    "AuthorizedKeysCommand /usr/bin/sleep 4\n"
                    "AuthorizedKeysCommandUser nobody\n")) {
    GTEST_SKIP() << why;
  }
  SshTransportOptions options;
  options.name = "gpu01";
  options.address = "127.0.0.1";
  options.port = server.port();
  options.user = "root";
  options.identity_files = {server.stranger_key()};
  options.use_default_keys = false;
  options.use_agent = false;
  options.known_hosts =
      server.WriteKnownHosts("known_hosts", "[127.0.0.1]:" + std::to_string(server.port()) + " " +
                                                server.host_key() + "\n");
  options.global_known_hosts = {};
  options.connect_timeout = milliseconds(1500);
  SshTransport transport(options);
  const auto start = std::chrono::steady_clock::now();
  Status status = transport.Connect(kNoDeadline);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.kind(), ErrorKind::kConnectTimeout) << status.ToString();
  EXPECT_NE(status.message().find("root@gpu01: the connect timeout ran out during "
                                  "authentication"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(status.message().find("refused"), std::string::npos) << status.message();
  EXPECT_LT(took, milliseconds(5000));
}

}  // namespace
}  // namespace fleetreap
