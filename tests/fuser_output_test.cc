#include "fleetreap/fuser_output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fleetreap {
namespace {

std::string ReadCapture(const std::string& name) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/fuser/" + name, std::ios::binary);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
  return joined;
}

// "pids=1,2 entries=1/m@/dev/nvidia0 ... files=... missing=... warnings=N"
std::string Render(const FuserResult& result) {
  std::string text = "pids=";
  for (size_t i = 0; i < result.pids.size(); ++i) {
    text += (i ? "," : "") + std::to_string(result.pids[i]);
  }
  text += " entries=";
  for (const FuserEntry& entry : result.entries) {
    text += std::to_string(entry.pid) + "/" + entry.access + "@" + entry.file + " ";
  }
  return text + "files=" + Join(result.files) + " missing=" + Join(result.missing_files) +
         " warnings=" + std::to_string(result.warnings.size());
}

TEST(FuserOutputTest, ParsesRealCaptures) {
  struct Row {
    const char* capture;
    const char* expected;
  };
  const Row rows[] = {
      {"01-three-files",
       "pids=18073,18349,18350,18351 entries=18073/@ 18349/@ 18350/@ 18351/@ 18073/@ 18349/@ "
       "18351/@ files=/tmp/parse/dev/nvidia0,/tmp/parse/dev/nvidiactl missing= warnings=78"},
      {"02-nobody", "pids= entries=files= missing= warnings=78"},
      {"03-one-file",
       "pids=18073,18349,18350,18351 entries=18073/@/tmp/parse/dev/nvidia0 "
       "18349/@/tmp/parse/dev/nvidia0 18350/@/tmp/parse/dev/nvidia0 "
       "18351/@/tmp/parse/dev/nvidia0 files=/tmp/parse/dev/nvidia0 missing= warnings=78"},
      {"04-missing-file",
       "pids=18073,18349,18350,18351 entries=18073/@/tmp/parse/dev/nvidia0 "
       "18349/@/tmp/parse/dev/nvidia0 18350/@/tmp/parse/dev/nvidia0 "
       "18351/@/tmp/parse/dev/nvidia0 files=/tmp/parse/dev/nvidia0 "
       "missing=/tmp/parse/dev/nvidia9 warnings=78"},
      {"05-merged",
       "pids=18073,18349,18350,18351 entries=18073/@/tmp/parse/dev/nvidia0 "
       "18349/@/tmp/parse/dev/nvidia0 18350/@/tmp/parse/dev/nvidia0 "
       "18351/@/tmp/parse/dev/nvidia0 18073/@/tmp/parse/dev/nvidiactl "
       "18349/@/tmp/parse/dev/nvidiactl 18351/@/tmp/parse/dev/nvidiactl "
       "files=/tmp/parse/dev/nvidia0,/tmp/parse/dev/nvidiactl missing= warnings=78"},
      {"06-glob-unmatched", "pids= entries=files= missing=/tmp/parse/dev/nvidia[0-9]x* warnings=0"},
      {"07-verbose",
       "pids=18073,18349,18350,18351 entries=18073/@ 18349/@ 18350/@ 18351/@ 18073/@ 18349/@ "
       "18351/@ files=/tmp/parse/dev/nvidia0,/tmp/parse/dev/nvidiactl missing= warnings=86"},
  };
  for (const Row& row : rows) {
    std::string name = row.capture;
    FuserResult result;
    Status status = ParseFuserOutput(ReadCapture(name + ".out"), ReadCapture(name + ".err"),
                                     std::stoi(ReadCapture(name + ".rc")), &result);
    ASSERT_TRUE(status.ok()) << name << ": " << status.ToString();
    EXPECT_EQ(Render(result), row.expected) << name;
  }
}

// The shapes of the research notes (gpu-domain.md 3.6, edge cases 12, 16, 17).
TEST(FuserOutputTest, ParsesWrittenCases) {
  struct Row {
    const char* out;
    const char* err;
    int exit_code;
    const char* expected;
  };
  const Row rows[] = {
      {"", "", 1, "pids= entries=files= missing= warnings=0"},
      {"  4054862  4054863\n", "/dev/nvidia0:     m    m\n", 0,
       "pids=4054862,4054863 entries=4054862/m@/dev/nvidia0 4054863/m@/dev/nvidia0 "
       "files=/dev/nvidia0 missing= warnings=0"},
      {" 12 12 12 7", "/dev/nvidia0:\n/dev/nvidiactl:\n/dev/nvidia-uvm:\n", 0,
       "pids=7,12 entries=12/@ 12/@ 12/@ 7/@ files=/dev/nvidia0,/dev/nvidiactl,/dev/nvidia-uvm "
       "missing= warnings=0"},
      {"/dev/nvidia0:  1234m 5678\r\n/dev/nvidiactl:  1234\r\n", "", 0,
       "pids=1234,5678 entries=1234/m@/dev/nvidia0 5678/@/dev/nvidia0 1234/@/dev/nvidiactl "
       "files=/dev/nvidia0,/dev/nvidiactl missing= warnings=0"},
      {"", "Specified filename /dev/nvidia* does not exist.\n", 1,
       "pids= entries=files= missing=/dev/nvidia* warnings=0"},
      {" 37526", "/run/nvidia/driver/dev/nvidia0:\n", 0,
       "pids=37526 entries=37526/@/run/nvidia/driver/dev/nvidia0 "
       "files=/run/nvidia/driver/dev/nvidia0 missing= warnings=0"},
  };
  for (const Row& row : rows) {
    FuserResult result;
    Status status = ParseFuserOutput(row.out, row.err, row.exit_code, &result);
    ASSERT_TRUE(status.ok()) << row.out << ": " << status.ToString();
    EXPECT_EQ(Render(result), row.expected) << row.out;
  }
}

TEST(FuserOutputTest, RejectsWithExactErrors) {
  struct Row {
    const char* out;
    const char* err;
    int exit_code;
    const char* error;
  };
  const Row rows[] = {
      {" 12 abc", "", 0, "parse: fuser output: expected a PID, got \"abc\""},
      {" 12x", "", 0, "parse: fuser output: expected a PID, got \"12x\""},
      {" -12", "", 0, "parse: fuser output: expected a PID, got \"-12\""},
      {" 0", "", 0, "parse: fuser output: expected a PID, got \"0\""},
      {" 12345678901", "", 0, "parse: fuser output: expected a PID, got \"12345678901\""},
      {"", "sh: 1: fuser: not found\n", 127, "command_failed: fuser exited with status 127: "
                                              "sh: 1: fuser: not found"},
      {"", "", 2, "command_failed: fuser exited with status 2"},
  };
  for (const Row& row : rows) {
    FuserResult result;
    Status status = ParseFuserOutput(row.out, row.err, row.exit_code, &result);
    EXPECT_EQ(status.ToString(), row.error) << row.out;
    EXPECT_TRUE(result.pids.empty());
  }
}

}  // namespace
}  // namespace fleetreap
