// SshTransportTest: the fixture of the SshTransport tests, one test sshd
// (SshTestServer) for the suite, skipped where none can start, and Good(),
// options that reach it with the authorized key under a strict host key
// policy. Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fleetreap/transport/ssh_transport.h"
#include "support/ssh_test_server.h"

namespace fleetreap {

class SshTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new SshTestServer();
    if (!server_->Start(&why_)) {
      delete server_;
      server_ = nullptr;
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (server_ == nullptr) GTEST_SKIP() << why_;
  }

  // Options that reach the test server with the authorized key, strictly.
  SshTransportOptions Good() const {
    SshTransportOptions options;
    options.name = "gpu01";
    options.address = "127.0.0.1";
    options.port = server_->port();
    options.user = "root";
    options.identity_files = {server_->client_key()};
    options.use_default_keys = false;
    options.use_agent = false;
    options.known_hosts =
        server_->WriteKnownHosts("known_hosts", "[127.0.0.1]:" + std::to_string(server_->port()) +
                                                    " " + server_->host_key() + "\n");
    options.global_known_hosts = {};  // this machine's /etc/ssh stays out of it
    options.connect_timeout = std::chrono::milliseconds(5000);
    return options;
  }

  inline static SshTestServer* server_ = nullptr;
  inline static std::string why_;
};

}  // namespace fleetreap
