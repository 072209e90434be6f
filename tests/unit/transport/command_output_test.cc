#include "fleetreap/transport/command_output.h"

#include <gtest/gtest.h>

#include <string>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(CommandOutputTest, ByteCount) {
  EXPECT_EQ(ByteCount(size_t{4} << 20), "4 MiB");
  EXPECT_EQ(ByteCount(size_t{64} << 10), "64 KiB");
  EXPECT_EQ(ByteCount(1000), "1000 bytes");
  EXPECT_EQ(ByteCount(1), "1 byte");
  EXPECT_EQ(ByteCount((size_t{1} << 20) + 1024), "1025 KiB");
}

TEST(CommandOutputTest, TheLimitsAreTheDocumentedOnes) {
  EXPECT_EQ(kStdoutLimit, size_t{4} << 20);
  EXPECT_EQ(kStderrLimit, size_t{64} << 10);
  OutputLimits limits;
  EXPECT_EQ(limits.out, kStdoutLimit);
  EXPECT_EQ(limits.err, kStderrLimit);
}

TEST(CommandOutputTest, KeepsEverythingUpToTheLimit) {
  CommandResult r;
  OutputCollector output(&r, {10, 4});
  EXPECT_TRUE(output.Add(false, "hello", 5));
  EXPECT_TRUE(output.Add(true, "oops", 4));  // exactly the limit is fine
  EXPECT_TRUE(output.Add(false, "world", 5));
  EXPECT_FALSE(output.Exceeded());
  EXPECT_EQ(r.out, "helloworld");
  EXPECT_EQ(r.err, "oops");
  EXPECT_FALSE(r.out_truncated);
  EXPECT_FALSE(r.err_truncated);
}

struct PastCase {
  const char* name;
  bool is_stderr;
  const char* first;
  const char* second;
  const char* kept_out;
  const char* kept_err;
  const char* error;
};

TEST(CommandOutputTest, PastALimitStopsWithTheStreamAndLimitNamed) {
  const PastCase kCases[] = {
      {"stdout in one piece", false, "0123456789ABC", "", "0123456789", "",
       "stdout exceeded 10 bytes, stopped reading"},
      {"stdout in the second piece", false, "01234567", "89AB", "0123456789", "",
       "stdout exceeded 10 bytes, stopped reading"},
      {"stderr", true, "abc", "de", "", "abcd", "stderr exceeded 4 bytes, stopped reading"},
  };
  for (const PastCase& c : kCases) {
    SCOPED_TRACE(c.name);
    CommandResult r;
    OutputCollector output(&r, {10, 4});
    bool first = output.Add(c.is_stderr, c.first, std::string(c.first).size());
    bool second = output.Add(c.is_stderr, c.second, std::string(c.second).size());
    EXPECT_FALSE(first && second);
    EXPECT_TRUE(output.Exceeded());
    // Once stopped, nothing more is kept on either stream.
    EXPECT_FALSE(output.Add(!c.is_stderr, "x", 1));
    output.Finish(milliseconds(7));
    EXPECT_EQ(r.out, c.kept_out);
    EXPECT_EQ(r.err, c.kept_err);
    EXPECT_EQ(r.out_truncated, !c.is_stderr);
    EXPECT_EQ(r.err_truncated, c.is_stderr);
    EXPECT_EQ(r.end, CommandEnd::kOutputLimit);
    EXPECT_EQ(r.error, c.error);
    EXPECT_EQ(r.duration, milliseconds(7));
    EXPECT_FALSE(r.Succeeded());
  }
}

TEST(CommandOutputTest, TheDefaultLimitReadsInMiB) {
  CommandResult r;
  OutputCollector output(&r, OutputLimits());
  const std::string chunk(16384, 'x');
  size_t fed = 0;
  while (output.Add(false, chunk.data(), chunk.size())) fed += chunk.size();
  output.Finish(milliseconds(0));
  EXPECT_EQ(fed, kStdoutLimit);
  EXPECT_EQ(r.out.size(), kStdoutLimit);
  EXPECT_EQ(r.error, "stdout exceeded 4 MiB, stopped reading");
}

TEST(CommandOutputTest, TheBufferNeverGrowsPastTheLimit) {
  // std::string doubles its buffer; the collector caps the growth, so a
  // stream costs at most its limit however it arrives.
  const size_t limit = 1000000;  // not a power of two
  CommandResult r;
  OutputCollector output(&r, {limit, 16});
  const std::string chunk(4097, 'y');
  while (output.Add(false, chunk.data(), chunk.size())) {
  }
  EXPECT_EQ(r.out.size(), limit);
  EXPECT_LE(r.out.capacity(), limit + 64);  // what the allocator rounds up
}

}  // namespace
}  // namespace fleetreap
