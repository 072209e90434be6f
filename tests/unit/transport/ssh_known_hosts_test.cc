#include "fleetreap/transport/ssh_known_hosts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>
#include <vector>

#include "support/ssh_test_server.h"

namespace fleetreap {
namespace {

// Two real ed25519 public keys (generated with ssh-keygen for this test).
const char kKeyA[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE7PQ3snm05cXDhEakJxYkX10xY9mDXkWHKYljysahf8";
const char kKeyB[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIb08cm/ajQvori8DuExJ13xFvqWeBDbifGOlHUylOV4";

// Only its type matters here.
const char kRsa[] = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7";

class KnownHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-knownhosts-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { Shell("rm -rf " + dir_); }
  std::string Write(const std::string& text) {
    std::string path = dir_ + "/known_hosts";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST(KnownHostsNameTest, BracketsNonDefaultPorts) {
  EXPECT_EQ(KnownHostsName("10.0.0.7", 22), "10.0.0.7");
  EXPECT_EQ(KnownHostsName("10.0.0.7", 2222), "[10.0.0.7]:2222");
  EXPECT_EQ(KnownHostsName("gpu01", 22), "gpu01");
}

TEST_F(KnownHostsTest, FindsPlainBracketedAndListEntries) {
  struct Case {
    const char* host;
    std::vector<int> lines;
  };
  const std::string text = std::string("# comment\n") + "gpu01 " + kKeyA + "\n" +  // 2
                           "[gpu01]:2222 " + kKeyB + "\n" +                        // 3
                           "gpu02,10.0.0.2 " + kKeyB + "\n" +                      // 4
                           "@revoked gpu01 " + kKeyB + "\n" +                      // 5: skipped
                           "garbage\n" +                                           // 6
                           "gpu01 " + kKeyB + "\n";                                // 7
  const std::string path = Write(text);
  const Case kCases[] = {
      {"gpu01", {2, 7}},
      {"[gpu01]:2222", {3}},
      {"10.0.0.2", {4}},
      {"gpu09", {}},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.host);
    std::vector<KnownHostsLine> found;
    ASSERT_TRUE(FindKnownHostsLines(path, c.host, &found).ok());
    std::vector<int> numbers;
    for (const KnownHostsLine& line : found) numbers.push_back(line.line);
    EXPECT_EQ(numbers, c.lines);
  }
  std::vector<KnownHostsLine> found;
  ASSERT_TRUE(FindKnownHostsLines(path, "gpu01", &found).ok());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].key, kKeyA);
  EXPECT_EQ(found[0].fingerprint, KeyFingerprint(kKeyA));
  EXPECT_EQ(found[0].fingerprint.rfind("SHA256:", 0), 0u);
}

TEST_F(KnownHostsTest, FindsHashedEntries) {
  const std::string path = Write(std::string("[gpu01]:2222 ") + kKeyA + "\n");
  ASSERT_TRUE(Shell("ssh-keygen -q -H -f " + path + " >/dev/null 2>&1"));
  std::vector<KnownHostsLine> found;
  ASSERT_TRUE(FindKnownHostsLines(path, "[gpu01]:2222", &found).ok());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, kKeyA);
  ASSERT_TRUE(FindKnownHostsLines(path, "gpu01", &found).ok());
  EXPECT_TRUE(found.empty());
}

TEST_F(KnownHostsTest, MissingFileHasNoLines) {
  std::vector<KnownHostsLine> found;
  EXPECT_TRUE(FindKnownHostsLines(dir_ + "/absent", "gpu01", &found).ok());
  EXPECT_TRUE(found.empty());
}

TEST_F(KnownHostsTest, RevokedEntriesAreFoundApart) {
  const std::string path = Write(std::string("@revoked * ") + kKeyB + "\n" + "@cert-authority * " +
                                 kKeyA + "\n" + "gpu01 " + kKeyA + "\n");
  std::vector<KnownHostsLine> found;
  std::vector<KnownHostsLine> revoked;
  ASSERT_TRUE(FindKnownHostsLines(path, "gpu01", &found, &revoked).ok());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 3);
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_EQ(revoked[0].key, kKeyB);
  EXPECT_EQ(revoked[0].line, 1);
}

TEST_F(KnownHostsTest, EveryFileIsReadAndJudged) {
  // The user's file knows nothing about gpu01; the global one disagrees.
  const std::string user = Write(std::string("gpu02 ") + kKeyA + "\n");
  const std::string global = dir_ + "/global";
  std::ofstream(global) << "# fleet\n"
                        << "gpu01 " << kKeyB << "\n";
  std::vector<KnownHostsRecord> records;
  ASSERT_TRUE(ReadKnownHosts({user, dir_ + "/absent", global}, "gpu01", &records).ok());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].file, global);

  struct Case {
    const char* name;
    std::vector<KnownHostsRecord> records;
    const char* key;
    KnownHostsVerdict::Kind kind;
    std::string where;
  };
  auto record = [](const std::string& file, int line, const char* key, bool revoked) {
    return KnownHostsRecord{file, KnownHostsLine{line, key, KeyFingerprint(key)}, revoked};
  };
  const Case kCases[] = {
      {"nothing recorded", {}, kKeyA, KnownHostsVerdict::Kind::kUnknown, ""},
      {"only the global file, another key", records, kKeyA, KnownHostsVerdict::Kind::kChanged,
       global + ":2"},
      {"only the global file, this key", records, kKeyB, KnownHostsVerdict::Kind::kKnown,
       global + ":2"},
      {"one file agrees, another contradicts it",
       {record("u", 1, kKeyB, false), record("g", 4, kKeyA, false)},
       kKeyA,
       KnownHostsVerdict::Kind::kChanged,
       "u:1"},
      {"keys of other types beside it",
       {record("u", 1, kRsa, false), record("g", 4, kKeyA, false)},
       kKeyA,
       KnownHostsVerdict::Kind::kKnown,
       "g:4"},
      {"only keys of other types",
       {record("u", 1, kRsa, false)},
       kKeyA,
       KnownHostsVerdict::Kind::kChanged,
       "u:1"},
      {"revoked wins",
       {record("u", 1, kKeyA, false), record("g", 9, kKeyA, true)},
       kKeyA,
       KnownHostsVerdict::Kind::kRevoked,
       "g:9"},
      {"another key revoked",
       {record("g", 9, kKeyB, true)},
       kKeyA,
       KnownHostsVerdict::Kind::kUnknown,
       ""},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    KnownHostsVerdict verdict = JudgeHostKey(c.records, c.key);
    EXPECT_EQ(verdict.kind, c.kind);
    EXPECT_EQ(verdict.where, c.where);
  }
}

TEST_F(KnownHostsTest, AnUnreadableFileIsAnError) {
  const std::string path = Write(std::string("gpu01 ") + kKeyA + "\n");
  std::vector<KnownHostsRecord> records;
  EXPECT_EQ(ReadKnownHosts({path + "/not-a-dir/x"}, "gpu01", &records).kind(), ErrorKind::kNone);
  if (getuid() != 0) {
    chmod(path.c_str(), 0);
    EXPECT_EQ(ReadKnownHosts({path}, "gpu01", &records).kind(), ErrorKind::kInternal);
  }
}

TEST_F(KnownHostsTest, AppendIsOncePerKeyAndRefusesAnotherKey) {
  const std::string path = Write(std::string("gpu09 ") + kKeyA);  // no final newline
  EXPECT_TRUE(AppendKnownHostsEntry(path, "gpu01", kKeyA).ok());
  EXPECT_TRUE(AppendKnownHostsEntry(path, "gpu01", kKeyA).ok());
  Status other = AppendKnownHostsEntry(path, "gpu01", kKeyB);
  EXPECT_EQ(other.kind(), ErrorKind::kHostKey);
  EXPECT_NE(other.message().find(path + ":2"), std::string::npos) << other.message();
  std::vector<KnownHostsLine> found;
  ASSERT_TRUE(FindKnownHostsLines(path, "gpu09", &found).ok());
  EXPECT_EQ(found.size(), 1u);
  ASSERT_TRUE(FindKnownHostsLines(path, "gpu01", &found).ok());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 2);
}

TEST_F(KnownHostsTest, ConcurrentAppendsKeepWholeLines) {
  const std::string path = dir_ + "/created_known_hosts";
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&path, t] {
      for (int h = 0; h < 25; ++h) {
        // Every thread records the same 25 hosts, plus 25 of its own.
        (void)AppendKnownHostsEntry(path, "shared" + std::to_string(h), kKeyA);
        (void)AppendKnownHostsEntry(path, "t" + std::to_string(t) + "h" + std::to_string(h), kKeyB);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::ifstream in(path);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    ++count;
    EXPECT_TRUE(line.find(kKeyA) != std::string::npos || line.find(kKeyB) != std::string::npos)
        << line;
  }
  EXPECT_EQ(count, 25 + 8 * 25);
}

TEST_F(KnownHostsTest, ConcurrentProcessesKeepWholeLines) {
  // Several fleetreap processes with accept-new on one file: flock orders them.
  const std::string path = dir_ + "/shared_known_hosts";
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      bool ok = true;
      for (int h = 0; h < 30; ++h) {
        ok &= AppendKnownHostsEntry(path, "shared" + std::to_string(h), kKeyA).ok();
        ok &= AppendKnownHostsEntry(path, "p" + std::to_string(p) + "h" + std::to_string(h), kKeyB)
                  .ok();
      }
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream in(path);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    ++count;
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), 2) << line;
  }
  EXPECT_EQ(count, 30 + 4 * 30);
}

}  // namespace
}  // namespace fleetreap
