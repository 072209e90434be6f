#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fleetreap/remote/nvidia_smi.h"

namespace fleetreap {
namespace {

std::string ReadSample(const std::string& name) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/nvsmi/" + name, std::ios::binary);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Id(const std::optional<int>& id) { return id ? std::to_string(*id) : "-"; }

// "GPU GI CI PID TYPE MIB [NAME]" per process.
std::string Render(const std::vector<TableProcess>& procs) {
  std::string text;
  for (const TableProcess& p : procs) {
    text += std::to_string(p.gpu) + " " + Id(p.gi) + " " + Id(p.ci) + " " + std::to_string(p.pid) +
            " " + p.type + " " + (p.used_mib ? std::to_string(*p.used_mib) : "?") + " [" +
            p.process_name + "]\n";
  }
  return text;
}

// The box of the 580 layout around "rows" (each a whole "|...|" line).
std::string Box(const std::string& rows) {
  const std::string rule(89, '-');
  return "+" + rule +
         "+\n"
         "| Processes:                                                                             "
         " |\n"
         "|  GPU   GI   CI              PID   Type   Process name                        GPU "
         "Memory |\n"
         "|        ID   ID                                                               Usage     "
         " |\n"
         "|" +
         std::string(89, '=') + "|\n" + rows + "+" + rule + "+\n";
}

TEST(NvidiaSmiProcessTableTest, ParsesEveryRealTable) {
  struct Row {
    const char* file;
    const char* expected;
  };
  const Row rows[] = {
      {"50-h200-table-load-two-procs-truncated-name.txt",
       "0 - - 440 C 3078 [...ut-somewhere/venv/bin/python3]\n"
       "0 - - 441 C 1542 [python3]\n"},
      {"51-h200-table-idle-no-processes.txt", ""},
      {"52-rtx4080-table-load-c-plus-g-graphics.txt",
       "0 - - 2165 C+G 25 [/usr/bin/kwin_wayland]\n"
       "0 - - 2496 G 200 [/usr/bin/plasma-keyboard]\n"
       "0 - - 2620 G 4 [/usr/bin/Xwayland]\n"
       "0 - - 2954 G 120 [/usr/bin/plasmashell]\n"
       "0 - - 3527 G 3 [/usr/bin/xwaylandvideobridge]\n"
       "0 - - 5021 C 360 [ffmpeg]\n"
       "0 - - 5022 C 503 [ffmpeg]\n"},
      {"53-windows-table-idle-c-plus-g-na-truncated.txt",
       "0 - - 2056 C+G ? [C:\\Windows\\System32\\dwm.exe]\n"
       "0 - - 4680 C+G ? [...e Experience\\NVIDIA Share.exe]\n"
       "0 - - 12332 C+G ? [C:\\Windows\\explorer.exe]\n"
       "0 - - 12444 C+G ? [...5n1h2txyewy\\TextInputHost.exe]\n"
       "0 - - 14160 C+G ? [..._cw5n1h2txyewy\\SearchHost.exe]\n"
       "0 - - 14184 C+G ? [...y\\StartMenuExperienceHost.exe]\n"
       "0 - - 15076 C+G ? [...xyewy\\ShellExperienceHost.exe]\n"
       "0 - - 16280 C+G ? [...anion\\ControllerCompanion.exe]\n"
       "0 - - 20372 C+G ? [...m Files\\NZXT CAM\\NZXT CAM.exe]\n"
       "0 - - 24804 C+G ? [...ntrolPanel\\SystemSettings.exe]\n"},
      // The MIG devices box before it has "|  0    2   0   0  |" rows.
      {"54-h200-mig-table-load-gi-ci.txt",
       "0 2 1 12249 C 2194 [/root/tools/memhog]\n"
       "0 2 1 12250 C 1170 [/root/tools/memhog]\n"
       "0 2 1 12267 C 13526 [./gpu_burn]\n"},
      // The simulated fleet's table (tests/sim/nvidia_smi_output.c) is
      // checked against the real idle one; its load table is real too.
      {"../device-h200/table-load.txt", "0 - - 428 C 4614 [/opt/torch/.venv/bin/python3]\n"},
      {"../device-h200/table-idle.txt", ""},
  };
  for (const Row& row : rows) {
    std::vector<TableProcess> procs;
    Status status = ParseProcessTable(ReadSample(row.file), &procs);
    ASSERT_TRUE(status.ok()) << row.file << ": " << status.ToString();
    EXPECT_EQ(Render(procs), row.expected) << row.file;
  }
}

TEST(NvidiaSmiProcessTableTest, CrlfAndHostileNames) {
  std::string crlf = ReadSample("52-rtx4080-table-load-c-plus-g-graphics.txt");
  for (size_t at = crlf.find('\n'); at != std::string::npos; at = crlf.find('\n', at + 2)) {
    crlf.insert(at, "\r");
  }
  std::vector<TableProcess> procs;
  ASSERT_TRUE(ParseProcessTable(crlf, &procs).ok());
  EXPECT_EQ(procs.size(), 7u);
  // A name with blanks, '|', a number-like word and an escape sequence.
  const std::string out = Box(
      "|    3   N/A  N/A         4194304    C+G   my | app 12MiB \x1b[2J x          96844MiB |\n"
      "|    7     1    0              12      M   x                                    N/A   |\n");
  ASSERT_TRUE(ParseProcessTable(out, &procs).ok()) << ParseProcessTable(out, &procs).ToString();
  EXPECT_EQ(Render(procs),
            "3 - - 4194304 C+G 96844 [my | app 12MiB \x1b[2J x]\n"
            "7 1 0 12 M ? [x]\n");
}

// Anything but the expected structure is an error naming the line.
TEST(NvidiaSmiProcessTableTest, RejectsMalformedTablesWithExactErrors) {
  struct Row {
    std::string out;
    std::string error;
  };
  const std::string good =
      "|    0   N/A  N/A             440      C   python3              3078MiB |\n";
  const Row rows[] = {
      {"", "parse: nvidia-smi table: no \"Processes:\" section"},
      {ReadSample("57-h200-bad-field-exit2.txt"),
       "parse: nvidia-smi table: no \"Processes:\" section"},
      {ReadSample("06-error-device-handle-unknown-error.txt"),
       "command_failed: nvidia-smi failed (gpu_lost): \"Unable to determine the device handle for "
       "GPU 0000:0B:00.0: Unknown Error\""},
      {ReadSample("12-error-failed-to-communicate-with-driver.txt"),
       "command_failed: nvidia-smi failed (driver_not_loaded): \"NVIDIA-SMI has failed because it "
       "couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
       "installed and running.\""},
      {Box("|    0   N/A  N/A             440      X   python3              3078MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A  N/A"
       "             440      X   python3              3078MiB |\""},
      {Box("|    0   N/A  N/A             440      C   python3              3078 MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A  N/A"
       "             440      C   python3              3078 MiB |\""},
      {Box("|    0   N/A  N/A            -440      C   python3              3078MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A  N/A"
       "            -440      C   python3              3078MiB |\""},
      {Box("|    0   N/A                  440      C   python3              3078MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A"
       "                  440      C   python3              3078MiB |\""},
      {Box("|    0   N/A  N/A             440    C+C   python3              3078MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A  N/A"
       "             440    C+C   python3              3078MiB |\""},
      // A name broken by a newline: the rest is no row.
      {Box("|    0   N/A  N/A             440      C   evil\nname              3078MiB |\n"),
       "parse: nvidia-smi table line 6: expected a process row, got \"|    0   N/A  N/A"
       "             440      C   evil\""},
      {Box(good + "|  No running processes found                                      |\n"),
       "parse: nvidia-smi table line 7: expected a process row, got \"|  No running processes "
       "found                                      |\""},
      {Box("|  No running processes found                                      |\n" + good),
       "parse: nvidia-smi table line 7: expected a process row, got \"" +
           good.substr(0, good.size() - 1) + "\""},
      {Box(good).substr(0, Box(good).rfind('+', Box(good).size() - 3)),
       "parse: nvidia-smi table line 6: the processes box is not closed"},
      {Box(good) + "trailing\n",
       "parse: nvidia-smi table line 8: unexpected text after the processes box: \"trailing\""},
      {"| Processes:   |\n|  GPU   GI   CI   PID   Type   Process name   GPU Memory |\n",
       "parse: nvidia-smi table line 2: the processes box ends early"},
      {"| Processes:   |\n|  GPU   PID   Type   Process name   GPU Memory |\n",
       "parse: nvidia-smi table line 2: expected the processes header, got \"|  GPU   PID   "
       "Type   Process name   GPU Memory |\""},
  };
  for (const Row& row : rows) {
    std::vector<TableProcess> procs;
    Status status = ParseProcessTable(row.out, &procs);
    EXPECT_EQ(status.ToString(), row.error) << row.out;
    EXPECT_TRUE(procs.empty()) << row.out;
  }
}

}  // namespace
}  // namespace fleetreap
