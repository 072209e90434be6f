// The one encoding rule, as tables: what SplitHostRecords accepts (host bytes
// only in payloads), what it refuses with which message, and how
// RecordReader and ParseHostRecords hold a step to its grammar.
#include "fleetreap/remote/host_records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

using namespace std::string_literals;

// "tag" or "tag:payload" per record, joined with " | ".
std::string Render(const std::vector<HostRecord>& records) {
  std::string text;
  for (const HostRecord& r : records) {
    text += (text.empty() ? "" : " | ") + r.tag + (r.has_payload ? ":" + r.payload : "");
  }
  return text;
}

TEST(HostRecordsTest, SplitsWhatAHostPrints) {
  struct Row {
    std::string out;
    std::string records;
  };
  const Row rows[] = {
      {"end\0"s, "end"},
      {"scan 1\0session 40 39\0end\0"s, "scan 1 | session 40 39 | end"},
      {"gpu 0:\0"s, "gpu 0:"},  // an empty payload is a payload
      // Host bytes after the first ':' are payload, whatever they look like.
      {"exe 7:/x:y\0"s, "exe 7:/x:y"},
      {"comm 7:python3\nend\0"s, "comm 7:python3\nend"},
      {"comm 7:a\x01\x1b[31m\xff b\0"s, "comm 7:a\x01\x1b[31m\xff b"},
      {"cmdline 7:--x=1 ; rm -rf / ) (\0"s, "cmdline 7:--x=1 ; rm -rf / ) ("},
      {"fdp 7 3:/dev/nvidia0\0mm 7 195 0\0"s, "fdp 7 3:/dev/nvidia0 | mm 7 195 0"},
      {"a.b/c_d-e 9\0"s, "a.b/c_d-e 9"},
  };
  for (const Row& row : rows) {
    std::vector<HostRecord> records;
    ASSERT_TRUE(SplitHostRecords(row.out, "scan", &records).ok()) << row.records;
    EXPECT_EQ(Render(records), row.records);
  }
}

TEST(HostRecordsTest, RefusesWhatNoScriptPrints) {
  struct Row {
    std::string out;
    std::string error;
  };
  const Row rows[] = {
      {"", "parse: scan output: nothing printed"},
      {"end", "parse: scan output: cut short (the last record has no end)"},
      {"scan 1\0end"s, "parse: scan output: cut short (the last record has no end)"},
      {"\0"s, "parse: scan output: record 1 has no tag"},
      {"end\0\0"s, "parse: scan output: record 2 has no tag"},
      {":payload\0"s, "parse: scan output: record 1 has no tag"},
      // A host byte where the script's words go.
      {"sent 7\nsent 8\0"s, "parse: scan output: record 1 has a bad tag \"sent 7?sent 8\""},
      {"fd 7\t3\0"s, "parse: scan output: record 1 has a bad tag \"fd 7?3\""},
      {"fd 7;3\0"s, "parse: scan output: record 1 has a bad tag \"fd 7;3\""},
      {" fd 7\0"s, "parse: scan output: record 1 has a bad tag \" fd 7\""},
      {"fd 7 \0"s, "parse: scan output: record 1 has a bad tag \"fd 7 \""},
      {"fd  7\0"s, "parse: scan output: record 1 has a bad tag \"fd  7\""},
  };
  for (const Row& row : rows) {
    std::vector<HostRecord> records;
    EXPECT_EQ(SplitHostRecords(row.out, "scan", &records).ToString(), row.error) << Render(records);
  }
}

// A two-record grammar: "signal 1", any "sent PID", "end".
Status SignalGrammar(RecordReader& reader) {
  Status status = reader.TakeHeader("signal");
  while (status.ok() && reader.PeekWord() == "sent") {
    const HostRecord* record = nullptr;
    status = reader.Take("sent", 2, false, "sent PID", &record);
    int pid = 0;
    if (status.ok() && !ParseTagInt(record->Words()[1], &pid)) {
      status = reader.Error("bad pid " + record->Words()[1]);
    }
  }
  return status.ok() ? reader.TakeEnd() : status;
}

TEST(HostRecordsTest, ReaderHoldsAStepToItsGrammar) {
  struct Row {
    std::string out;
    std::string status;
  };
  const Row rows[] = {
      {"signal 1\0end\0"s, "ok"},
      {"signal 1\0sent 7\0sent 8\0end\0"s, "ok"},
      {"signal 2\0end\0"s, "parse: signal output record 1: unknown signal version 2"},
      {"scan 1\0end\0"s, "parse: signal output record 1: expected \"signal 1\", got \"scan 1\""},
      {"signal 1\0sent 7\0"s, "parse: signal output: expected \"end\", got the end"},
      {"signal 1\0sent 7 8\0end\0"s,
       "parse: signal output record 2: expected \"sent PID\", got \"sent 7 8\""},
      {"signal 1\0sent -7\0end\0"s, "parse: signal output record 2: bad pid -7"},
      {"signal 1\0sent 99999999999\0end\0"s, "parse: signal output record 2: bad pid 99999999999"},
      {"signal 1\0sent:7\0end\0"s,
       "parse: signal output record 2: expected \"sent PID\", got \"sent\""},
      {"signal 1\0end\0end\0"s, "parse: signal output record 3: unexpected \"end\""},
      {"signal 1\0end\0sent 7\0"s, "parse: signal output record 3: unexpected \"sent 7\""},
      {"signal 1\0end"s, "parse: signal output: cut short (the last record has no end)"},
  };
  for (const Row& row : rows) {
    Status status = ParseHostRecords(row.out, "signal", SignalGrammar);
    EXPECT_EQ(status.ok() ? std::string("ok") : status.ToString(), row.status) << row.status;
  }
}

TEST(HostRecordsTest, TagNumbersAreStrict) {
  struct Row {
    std::string word;
    bool int_ok;
    bool exit_ok;
  };
  const Row rows[] = {
      {"0", true, true},           {"255", true, true},
      {"256", true, false},        {"-", false, true},
      {"-1", false, false},        {"+1", false, false},
      {"", false, false},          {"1x", false, false},
      {"2147483647", true, false}, {"2147483648", false, false},
  };
  for (const Row& row : rows) {
    int value = 0;
    EXPECT_EQ(ParseTagInt(row.word, &value), row.int_ok) << row.word;
    EXPECT_EQ(ParseTagExit(row.word, &value), row.exit_ok) << row.word;
  }
  uint64_t big = 0;
  EXPECT_TRUE(ParseTagU64("18446744073709551615", &big));
  EXPECT_EQ(big, 18446744073709551615ull);
  EXPECT_FALSE(ParseTagU64("18446744073709551616", &big));
}

}  // namespace
}  // namespace fleetreap
