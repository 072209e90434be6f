#include "fleetreap/remote/audit.h"

#include <gtest/gtest.h>

#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/signal.h"

namespace fleetreap {
namespace {

TEST(AuditTest, ValuesKeepTheirSafeBytesAndEncodeTheRest) {
  const struct {
    std::string in;
    std::string out;
  } kCases[] = {
      {"/usr/bin/python3", "/usr/bin/python3"},
      {"vllm@1.service", "vllm@1.service"},
      {"", "-"},
      {"a b", "a%20b"},
      {"x pid=1", "x%20pid%3d1"},
      {"evil\nrun=forged action=kill", "evil%0arun%3dforged%20action%3dkill"},
      {"100%", "100%25"},
      {"caf\xc3\xa9", "caf%c3%a9"},
      {"q'\"`$\\;", "q%27%22%60%24%5c%3b"},
      {std::string("nul\0x", 5), "nul%00x"},
  };
  for (const auto& c : kCases) EXPECT_EQ(AuditValue(c.in), c.out) << c.in;
}

TEST(AuditTest, LongValuesAreCutBetweenEncodedBytes) {
  std::string cut = AuditValue(std::string(300, ' '));
  EXPECT_EQ(cut.size(), 80u * 3 + 3);  // 80 "%20", then "..."
  EXPECT_EQ(cut.substr(cut.size() - 6), "%20...");
  EXPECT_EQ(AuditValue(std::string(500, 'a')), std::string(240, 'a') + "...");
}

TEST(AuditTest, LineNamesTheRunFirstAndEncodesEveryValue) {
  AuditRequest request;
  request.run_id = "20261202T061902Z-4f1c2a";
  request.controller = "ctl 1";
  request.operator_name = "alice via sudo";
  EXPECT_EQ(AuditLine(request, "term", {{"pid", "812"}, {"exe", "/tmp/a b\nc"}}),
            "run=20261202T061902Z-4f1c2a controller=ctl%201 operator=alice%20via%20sudo "
            "action=term pid=812 exe=/tmp/a%20b%0ac");
}

TEST(AuditTest, FieldsOfAHolder) {
  Holder holder;
  holder.pid = 812;
  holder.start_time = 99812;
  holder.exe = "/usr/bin/python3";
  holder.user = "bob";
  holder.owner.slurm_job = "42";
  holder.gpus = {1, 0};
  holder.charged_gpus = {1, 3};
  AuditFields fields = AuditFieldsOf(holder);
  ASSERT_EQ(fields.size(), 6u);
  EXPECT_EQ(fields[0], (std::pair<std::string, std::string>{"pid", "812"}));
  EXPECT_EQ(fields[1].second, "99812");
  EXPECT_EQ(fields[2].second, "/usr/bin/python3");
  EXPECT_EQ(fields[3].second, "bob");
  EXPECT_FALSE(fields[4].second.empty());  // DescribeOwner's words
  EXPECT_EQ(fields[5], (std::pair<std::string, std::string>{"gpus", "0,1,3"}));
}

std::string Records(std::initializer_list<std::string> records) {
  std::string out;
  for (const std::string& r : records) out += r + std::string(1, '\0');
  return out;
}

TEST(AuditTest, TheAuditRecordIsOptionalAndStrict) {
  std::vector<GpuReset> resets;
  AuditOutcome audit;
  ASSERT_TRUE(ParseGpuResetOutput(Records({"reset 0 0:", "end"}), &resets, &audit).ok());
  EXPECT_EQ(audit.lines, 0);
  EXPECT_FALSE(audit.NotWritten());
  ASSERT_TRUE(
      ParseGpuResetOutput(Records({"reset 0 0:", "audit 1 0", "end"}), &resets, &audit).ok());
  EXPECT_EQ(audit.lines, 1);
  EXPECT_FALSE(audit.NotWritten());
  ASSERT_TRUE(
      ParseGpuResetOutput(Records({"reset 0 0:", "audit 1 127", "end"}), &resets, &audit).ok());
  EXPECT_TRUE(audit.NotWritten());
  const char* kBad[] = {"audit 0 0",   "audit x 0",  "audit 1",
                        "audit 1 0 2", "audit 1 -1", "audit 1 0:text"};
  for (const char* bad : kBad) {
    Status status = ParseGpuResetOutput(Records({"reset 0 0:", bad, "end"}), &resets, &audit);
    EXPECT_FALSE(status.ok()) << bad;
  }
  // Only where the grammar has it: not twice, not after the end.
  EXPECT_FALSE(
      ParseGpuResetOutput(Records({"reset 0 0:", "audit 1 0", "audit 1 0", "end"}), &resets).ok());
  EXPECT_FALSE(ParseGpuResetOutput(Records({"reset 0 0:", "end", "audit 1 0"}), &resets).ok());
}

TEST(AuditTest, SignalRepliesCarryTheirAuditOutcome) {
  SignalReply reply;
  ASSERT_TRUE(ParseSignalOutput(
                  Records({"signal 1", "now 5", "sent 812", "audit 1 1", "done 3", "end"}), &reply)
                  .ok());
  EXPECT_EQ(reply.sent, std::vector<int>{812});
  EXPECT_EQ(reply.audit.lines, 1);
  EXPECT_EQ(reply.audit.exit_code, 1);
  EXPECT_TRUE(reply.audit.NotWritten());
}

}  // namespace
}  // namespace fleetreap
