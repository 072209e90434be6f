#include "fleetreap/transport/ssh_transport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "fleetreap/base/shell.h"
#include "fleetreap/transport/ssh_known_hosts.h"
#include "support/ssh_test_server.h"
#include "support/ssh_transport_fixture.h"
#include "support/transport_conformance.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST_F(SshTransportTest, RunsCommandsOnOneConnection) {
  SshTransport transport(Good());
  Status status = transport.Connect(kNoDeadline);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(transport.HostKeyFingerprint().rfind("SHA256:", 0), 0u);
  ExpectConformance(transport);
}

TEST_F(SshTransportTest, DrainsBothLargeStreams) {
  SshTransportOptions options = Good();
  options.output_limits = {9 << 20, 9 << 20};
  SshTransport transport(options);
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  // 8 MiB on each stream at once: reading one stream only would stall.
  CommandResult r =
      transport.Run("head -c 8388608 /dev/zero >&2 & head -c 8388608 /dev/zero; wait; echo end >&2",
                    milliseconds(60000));
  EXPECT_EQ(r.end, CommandEnd::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), size_t{8} << 20);
  EXPECT_EQ(r.err.size(), (size_t{8} << 20) + 4);
  EXPECT_FALSE(r.out_truncated);
  EXPECT_FALSE(r.err_truncated);
}

TEST_F(SshTransportTest, OutputPastTheLimitStopsTheCommand) {
  SshTransport transport(Good());  // the default limits: 4 MiB and 64 KiB
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  struct Case {
    const char* command;
    const char* error;
  };
  // "yes" never ends by itself: only the limit ends it, long before 60 s.
  const Case kCases[] = {
      {"echo $$ >&2; exec yes", "stdout exceeded 4 MiB, stopped reading"},
      {"echo $$; exec yes >&2", "stderr exceeded 64 KiB, stopped reading"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.command);
    CommandResult r = transport.Run(c.command, milliseconds(60000));
    EXPECT_EQ(r.end, CommandEnd::kOutputLimit) << CommandEndName(r.end) << " " << r.error;
    EXPECT_EQ(r.error, c.error);
    EXPECT_LE(r.out.size(), kStdoutLimit);
    EXPECT_LE(r.err.size(), kStderrLimit);
    EXPECT_LT(r.duration, milliseconds(30000));
    // The writer is gone (its next write after the channel closed failed),
    // and the connection serves the next command.
    const std::string& words = c.error[3] == 'o' ? r.err : r.out;
    const std::string pid = words.substr(0, words.find('\n'));
    ASSERT_FALSE(pid.empty());
    CommandResult gone =
        transport.Run("for i in $(seq 100); do kill -0 " + pid +
                          " 2>/dev/null || { echo gone; exit 0; }; sleep 0.1; done; echo alive",
                      milliseconds(20000));
    EXPECT_TRUE(gone.Succeeded()) << CommandEndName(gone.end) << " " << gone.error;
    EXPECT_EQ(gone.out, "gone\n");
  }
}

TEST_F(SshTransportTest, UnboundedHangEndsAsTimedOut) {
  SshTransportOptions options = Good();
  options.command_grace = milliseconds(100);
  SshTransport transport(options);
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  CommandResult r = transport.Run("echo started; sleep 30", milliseconds(1000));
  EXPECT_EQ(r.end, CommandEnd::kTimedOut);
  // The connection is still good for the next commands, and what the
  // abandoned channel may still send is dropped.
  for (int i = 0; i < 3; ++i) {
    CommandResult next = transport.Run("echo next", milliseconds(20000));
    EXPECT_TRUE(next.Succeeded()) << CommandEndName(next.end) << " " << next.error;
    EXPECT_EQ(next.out, "next\n");
  }
}

TEST_F(SshTransportTest, SessionDyingUnderTheCommandIsConnectionLost) {
  SshTransport transport(Good());
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  // $PPID is the sshd process serving this session.
  CommandResult r = transport.Run("kill -KILL $PPID; sleep 5", milliseconds(20000));
  EXPECT_EQ(r.end, CommandEnd::kConnectionLost) << CommandEndName(r.end);
  CommandResult next = transport.Run("true", milliseconds(5000));
  EXPECT_EQ(next.end, CommandEnd::kConnectionLost);
}

TEST_F(SshTransportTest, RunBeforeConnectIsNotStarted) {
  SshTransport transport(Good());
  EXPECT_EQ(transport.Run("true", milliseconds(1000)).end, CommandEnd::kNotStarted);
}

struct ConnectCase {
  const char* name;
  void (*adjust)(SshTransportOptions* options, SshTestServer* server);
  ErrorKind kind;
  std::vector<std::string> message_parts;
};

TEST_F(SshTransportTest, ConnectFailuresAreClassified) {
  static SilentListener silent;
  const ConnectCase kCases[] = {
      {"refused",
       [](SshTransportOptions* o, SshTestServer*) { o->port = UnusedPort(); },
       ErrorKind::kRefused,
       {"refused"}},
      {"banner_timeout",
       [](SshTransportOptions* o, SshTestServer*) {
         o->port = silent.port();
         o->connect_timeout = milliseconds(500);
       },
       ErrorKind::kBannerTimeout,
       {"banner"}},
      {"dns",
       [](SshTransportOptions* o, SshTestServer*) {
         o->address = "no-such-host.invalid";
         o->connect_timeout = milliseconds(2000);
       },
       ErrorKind::kDns,
       {"no-such-host.invalid"}},
      {"unknown host key",
       [](SshTransportOptions* o, SshTestServer* s) {
         o->known_hosts = s->WriteKnownHosts("empty_known_hosts", "");
       },
       ErrorKind::kHostKey,
       {"gpu01", "not in known_hosts", "SHA256:"}},
      {"changed host key",
       [](SshTransportOptions* o, SshTestServer* s) {
         o->known_hosts = s->WriteKnownHosts(
             "changed_known_hosts",
             "# header\nother.example ssh-ed25519 AAAA\n[127.0.0.1]:" + std::to_string(s->port()) +
                 " " + s->other_host_key() + "\n");
       },
       ErrorKind::kHostKey,
       {"gpu01", "CHANGED", "offered SHA256:", "changed_known_hosts:3"}},
      {"changed host key under accept-new",
       [](SshTransportOptions* o, SshTestServer* s) {
         o->host_key_policy = HostKeyPolicy::kAcceptNew;
         o->known_hosts =
             s->WriteKnownHosts("changed2_known_hosts", "[127.0.0.1]:" + std::to_string(s->port()) +
                                                            " " + s->other_host_key() + "\n");
       },
       ErrorKind::kHostKey,
       {"CHANGED", "changed2_known_hosts:1"}},
      {"key not authorized",
       [](SshTransportOptions* o, SshTestServer* s) { o->identity_files = {s->stranger_key()}; },
       ErrorKind::kAuth,
       {"root@gpu01", "stranger_key: refused"}},
      {"encrypted key, no agent",
       [](SshTransportOptions* o, SshTestServer* s) { o->identity_files = {s->encrypted_key()}; },
       ErrorKind::kAuth,
       {"encrypted_key: encrypted", "passphrase"}},
      {"missing identity",
       [](SshTransportOptions* o, SshTestServer* s) { o->identity_files = {s->dir() + "/nope"}; },
       ErrorKind::kAuth,
       {"nope: cannot read"}},
  };
  for (const ConnectCase& c : kCases) {
    SCOPED_TRACE(c.name);
    SshTransportOptions options = Good();
    c.adjust(&options, server_);
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_EQ(status.kind(), c.kind) << status.ToString();
    for (const std::string& part : c.message_parts) {
      EXPECT_NE(status.message().find(part), std::string::npos)
          << "missing \"" << part << "\" in: " << status.message();
    }
  }
}

TEST_F(SshTransportTest, AnEarlierHostDeadlineEndsTheConnect) {
  // A silent listener and a 60 s connect timeout, but the host's deadline
  // (--host-timeout, --deadline) is 300 ms away: the attempt ends then.
  static SilentListener silent;
  SshTransportOptions options = Good();
  options.port = silent.port();
  options.connect_timeout = milliseconds(60000);
  SshTransport transport(options);
  const auto start = std::chrono::steady_clock::now();
  Status status = transport.Connect(start + milliseconds(300));
  EXPECT_EQ(status.kind(), ErrorKind::kBannerTimeout) << status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST_F(SshTransportTest, HostKeyPolicies) {
  // Hashed entries are recognised.
  SshTransportOptions hashed = Good();
  ASSERT_TRUE(Shell("ssh-keygen -q -H -f " + hashed.known_hosts + " >/dev/null 2>&1"));
  {
    SshTransport transport(hashed);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  // accept-new records an unknown key once; strict then accepts it.
  SshTransportOptions accept = Good();
  accept.known_hosts = server_->dir() + "/fresh_known_hosts";
  accept.host_key_policy = HostKeyPolicy::kAcceptNew;
  for (int i = 0; i < 2; ++i) {
    SshTransport transport(accept);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  accept.host_key_policy = HostKeyPolicy::kStrict;
  {
    SshTransport transport(accept);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  std::ifstream in(accept.known_hosts);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 1);
  // off connects even with a changed key.
  SshTransportOptions off = Good();
  off.known_hosts =
      server_->WriteKnownHosts("off_known_hosts", "[127.0.0.1]:" + std::to_string(server_->port()) +
                                                      " " + server_->other_host_key() + "\n");
  off.host_key_policy = HostKeyPolicy::kOff;
  SshTransport transport(off);
  Status status = transport.Connect(kNoDeadline);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST_F(SshTransportTest, SshConfigSuppliesHostNamePortUserAndKey) {
  SshTransportOptions options = Good();
  options.address = "gpu-alias";
  options.port = 22;  // the inventory default leaves the port to the config
  options.user = "";
  options.identity_files.clear();
  options.use_ssh_config = true;
  options.ssh_config_file = server_->WriteKnownHosts(
      "ssh_config", "Host gpu-alias\n  HostName 127.0.0.1\n  Port " +
                        std::to_string(server_->port()) + "\n  User root\n  IdentityFile " +
                        server_->client_key() + "\n");
  SshTransport transport(options);
  Status status = transport.Connect(kNoDeadline);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(transport.Run("echo via-config", milliseconds(20000)).out, "via-config\n");

  // Without the config the alias does not resolve, and that is a dns error.
  options.use_ssh_config = false;
  options.connect_timeout = milliseconds(2000);
  SshTransport plain(options);
  EXPECT_EQ(plain.Connect(kNoDeadline).kind(), ErrorKind::kDns);
}

TEST_F(SshTransportTest, EveryKnownHostsFileCounts) {
  const std::string name = "[127.0.0.1]:" + std::to_string(server_->port());
  const std::string good = name + " " + server_->host_key() + "\n";
  const std::string bad = name + " " + server_->other_host_key() + "\n";
  // accept-new: a key that a global file contradicts is refused, and the
  // user's file stays untouched.
  SshTransportOptions options = Good();
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  options.known_hosts = server_->WriteKnownHosts("user_empty", "");
  options.global_known_hosts = {server_->dir() + "/absent_global",
                                server_->WriteKnownHosts("global_bad", "# fleet\n" + bad)};
  {
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_EQ(status.kind(), ErrorKind::kHostKey) << status.ToString();
    EXPECT_NE(status.message().find("CHANGED"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("global_bad:2"), std::string::npos) << status.message();
    EXPECT_EQ(transport.HostKeyFingerprint(), KeyFingerprint(server_->host_key()));
    EXPECT_EQ(Slurp(options.known_hosts), "");
  }
  // strict: a key only the global file knows is known.
  options.host_key_policy = HostKeyPolicy::kStrict;
  options.global_known_hosts = {server_->WriteKnownHosts("global_good", good)};
  {
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  // @revoked wins over a matching entry.
  options.global_known_hosts = {
      server_->WriteKnownHosts("global_revoked", "@revoked * " + server_->host_key() + "\n")};
  options.known_hosts = server_->WriteKnownHosts("user_good", good);
  {
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_EQ(status.kind(), ErrorKind::kHostKey) << status.ToString();
    EXPECT_NE(status.message().find("@revoked at"), std::string::npos) << status.message();
  }
}

TEST_F(SshTransportTest, TheSshConfigsKnownHostsFilesAndHostKeyAlias) {
  const std::string user1 = server_->dir() + "/config_user1";
  const std::string user2 =
      server_->WriteKnownHosts("config_user2", "fleet-gpu01 " + server_->other_host_key() + "\n");
  const std::string global = server_->WriteKnownHosts("config_global", "");
  SshTransportOptions options = Good();
  options.known_hosts = "";  // the config's UserKnownHostsFile
  options.use_ssh_config = true;
  options.ssh_config_file = server_->WriteKnownHosts(
      "known_hosts_ssh_config",
      "Host 127.0.0.1\n  HostKeyAlias fleet-gpu01\n  UserKnownHostsFile " + user1 + " " + user2 +
          "\n  GlobalKnownHostsFile " + global + "\n");
  options.host_key_policy = HostKeyPolicy::kAcceptNew;
  {
    // The alias is recorded with another key in the second user file.
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_EQ(status.kind(), ErrorKind::kHostKey) << status.ToString();
    EXPECT_NE(status.message().find("gpu01 (fleet-gpu01) has CHANGED"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("config_user2:1"), std::string::npos) << status.message();
  }
  // Without that entry the key is new: it goes to the first user file, under
  // the alias; strict then knows it.
  server_->WriteKnownHosts("config_user2", "");
  {
    SshTransport transport(options);
    Status status = transport.Connect(kNoDeadline);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  EXPECT_EQ(Slurp(user1), "fleet-gpu01 " + server_->host_key() + "\n");
  EXPECT_EQ(Slurp(global), "");
  options.host_key_policy = HostKeyPolicy::kStrict;
  SshTransport transport(options);
  Status status = transport.Connect(kNoDeadline);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST_F(SshTransportTest, DescribeNamesUserAddressAndPort) {
  SshTransport transport(Good());
  EXPECT_EQ(transport.Describe(), "root@127.0.0.1:" + std::to_string(server_->port()));
}

TEST(SshTransportKexTest, NoCommonKeyExchangeIsKex) {
  // OpenSSH offers only a post-quantum hybrid that libssh 0.10 lacks.
  SshTestServer server;
  std::string why;
  if (!server.Start(&why, "KexAlgorithms sntrup761x25519-sha512@openssh.com\n")) {
    GTEST_SKIP() << why;
  }
  SshTransportOptions options;
  options.name = "gpu01";
  options.address = "127.0.0.1";
  options.port = server.port();
  options.identity_files = {server.client_key()};
  options.use_default_keys = false;
  options.use_agent = false;
  options.host_key_policy = HostKeyPolicy::kOff;
  SshTransport transport(options);
  Status status = transport.Connect(kNoDeadline);
  EXPECT_EQ(status.kind(), ErrorKind::kKex) << status.ToString();
  EXPECT_NE(status.message().find("gpu01"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace fleetreap
