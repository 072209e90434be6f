#include "fleetreap/remote/gpu_health_query.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fleetreap {
namespace {

std::string Sample(const std::string& path) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/" + path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The capture asked for every field its header names: those are the fields.
std::vector<std::string> HeaderFields(const std::string& csv) {
  std::vector<std::string> fields;
  std::string header = csv.substr(0, csv.find('\n'));
  size_t start = 0;
  while (true) {
    size_t comma = header.find(',', start);
    std::string name = header.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    size_t unit = name.find(" [");
    if (unit != std::string::npos) name = name.substr(0, unit);
    fields.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::vector<GpuHealth> Parse(const std::string& path) {
  std::string csv = Sample(path);
  std::vector<GpuHealth> gpus;
  Status status = ParseGpuHealth(csv, HeaderFields(csv), &gpus);
  EXPECT_TRUE(status.ok()) << path << ": " << status.ToString();
  return gpus;
}

TEST(GpuHealthQueryTest, H200Driver580WithHeader) {
  std::vector<GpuHealth> gpus = Parse("device-h200/readiness/query-ready-header.csv");
  ASSERT_EQ(gpus.size(), 1u);
  const GpuHealth& gpu = gpus[0];
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.bus_id, "00000000:00:06.0");
  EXPECT_EQ(gpu.ecc_enabled, true);
  EXPECT_EQ(gpu.ecc_uncorrected_volatile, 0);
  EXPECT_EQ(gpu.ecc_uncorrected_aggregate, 0);
  EXPECT_EQ(gpu.remapped_rows_pending, false);
  EXPECT_EQ(gpu.remapped_rows_failure, false);
  EXPECT_FALSE(gpu.retired_pages_pending.has_value());  // "[N/A]": Hopper remaps rows
  EXPECT_FALSE(gpu.retired_pages_dbe.has_value());
  EXPECT_EQ(gpu.fabric_state, "");  // a bare "N/A": no NVLink fabric
  EXPECT_EQ(gpu.fabric_status, "");
  EXPECT_EQ(gpu.persistence_mode, true);
  EXPECT_EQ(gpu.pcie_gen_current, 5);
  EXPECT_EQ(gpu.pcie_width_current, 16);
  EXPECT_EQ(gpu.pcie_width_max, 16);
}

TEST(GpuHealthQueryTest, H200Driver580WithoutHeaderOrUnits) {
  std::vector<std::string> fields =
      HeaderFields(Sample("device-h200/readiness/query-ready-header.csv"));
  std::vector<GpuHealth> with_header = Parse("device-h200/readiness/query-ready-header.csv");
  std::vector<GpuHealth> gpus;
  ASSERT_TRUE(ParseGpuHealth(Sample("device-h200/readiness/query-ready.csv"), fields, &gpus).ok());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].bus_id, with_header[0].bus_id);
  EXPECT_EQ(gpus[0].remapped_rows_pending, with_header[0].remapped_rows_pending);
  EXPECT_EQ(gpus[0].pcie_width_max, with_header[0].pcie_width_max);
}

TEST(GpuHealthQueryTest, OtherGenerations) {
  struct Case {
    const char* file;
    std::optional<bool> ecc;
    std::optional<bool> remap_pending;
    const char* fabric_state;
    std::optional<bool> persistence;
    std::optional<int> gen_current;
    std::optional<int> gen_max;
  };
  const Case cases[] = {
      // MIG on: the remapper's fields read [N/A].
      {"readiness/h200-mig-on-590-query-gpu.csv", true, std::nullopt, "Completed", true, 5, 5},
      // No ECC at all; an idle link at gen 1 of 3.
      {"readiness/rtx2080super-no-ecc-595-query-gpu.csv", std::nullopt, std::nullopt, "", false, 1,
       3},
      {"readiness/l40s-595-query-gpu.csv", true, false, "", false, 4, 4},
      {"readiness/h100-590-query-gpu.csv", true, false, "Completed", true, 5, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::vector<GpuHealth> gpus = Parse(c.file);
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0].ecc_enabled, c.ecc);
    EXPECT_EQ(gpus[0].remapped_rows_pending, c.remap_pending);
    EXPECT_EQ(gpus[0].fabric_state, c.fabric_state);
    EXPECT_EQ(gpus[0].persistence_mode, c.persistence);
    EXPECT_EQ(gpus[0].pcie_gen_current, c.gen_current);
    EXPECT_EQ(gpus[0].pcie_gen_max, c.gen_max);
  }
}

TEST(GpuHealthQueryTest, SyntheticNvSwitchHost) {
  std::vector<GpuHealth> gpus = Parse("readiness/synthetic-8x-h200-nvswitch-query-gpu.csv");
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[1].ecc_uncorrected_volatile, 2);
  EXPECT_EQ(gpus[2].pcie_width_current, 8);
  EXPECT_EQ(gpus[3].remapped_rows_pending, true);
  EXPECT_EQ(gpus[3].remapped_rows_uncorrectable, 2);
  EXPECT_EQ(gpus[4].persistence_mode, false);
  EXPECT_EQ(gpus[5].fabric_state, "In Progress");
  EXPECT_EQ(gpus[5].fabric_status, "");
  EXPECT_EQ(gpus[6].ecc_enabled, false);
  EXPECT_FALSE(gpus[6].ecc_uncorrected_volatile.has_value());
  EXPECT_EQ(gpus[7].remapped_rows_failure, true);
}

TEST(GpuHealthQueryTest, SyntheticRetiredPages) {
  std::vector<GpuHealth> gpus = Parse("readiness/synthetic-v100-retired-pages-query-gpu.csv");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].retired_pages_pending, true);
  EXPECT_EQ(gpus[0].retired_pages_sbe, 3);
  EXPECT_EQ(gpus[0].fabric_state, "");  // "[Not Supported]"
  EXPECT_FALSE(gpus[0].remapped_rows_pending.has_value());
  EXPECT_EQ(gpus[1].ecc_pending_enabled, false);
}

TEST(GpuHealthQueryTest, Malformed) {
  const std::vector<std::string> fields = {"index", "remapped_rows.pending", "fabric.state",
                                           "pcie.link.width.current"};
  struct Case {
    const char* out;
    const char* error;
  };
  const Case cases[] = {
      {"0, Maybe, N/A, 16\n",
       "nvidia-smi output line 1: remapped_rows.pending: expected Yes or No, got \"Maybe\""},
      {"0, No, Exploded, 16\n",
       "nvidia-smi output line 1: fabric.state: expected Completed, In Progress or Not Started, "
       "got \"Exploded\""},
      {"0, No, N/A, -16\n",
       "nvidia-smi output line 1: pcie.link.width.current: expected a count, got \"-16\""},
      {"0, No, N/A, 99999\n",
       "nvidia-smi output line 1: pcie.link.width.current: expected a small number, got "
       "\"99999\""},
      {"0, No, N/A, 16\n0, No, N/A, 16\n", "nvidia-smi output line 2: duplicate GPU index 0"},
      {"x1, No, N/A, 16\n", "nvidia-smi output line 1: index: expected a GPU index, got \"x1\""},
      {"0, No, N/A\n", "nvidia-smi output line 1: expected 4 fields, got 3"},
      {"", "nvidia-smi output: no GPU rows"},
      {"0, \x1b[2J, N/A, 16\n",
       "nvidia-smi output line 1: remapped_rows.pending: expected Yes or No, got \"\\x1b[2J\""},
  };
  for (const Case& c : cases) {
    std::vector<GpuHealth> gpus;
    Status status = ParseGpuHealth(c.out, fields, &gpus);
    EXPECT_FALSE(status.ok()) << c.out;
    EXPECT_EQ(status.message(), c.error) << c.out;
    EXPECT_TRUE(gpus.empty());
  }
}

TEST(GpuHealthQueryTest, UnknownSpellingsAreNotSupported) {
  const std::vector<std::string> fields = {
      "index", "ecc.mode.current", "ecc.errors.uncorrected.volatile.total", "persistence_mode"};
  std::vector<GpuHealth> gpus;
  ASSERT_TRUE(ParseGpuHealth("0, [Not Supported], [Unknown Error], N/A\r\n"
                             "1, [Insufficient Permissions], [N/A], [N/A]",
                             fields, &gpus)
                  .ok());
  ASSERT_EQ(gpus.size(), 2u);
  for (const GpuHealth& gpu : gpus) {
    EXPECT_FALSE(gpu.ecc_enabled.has_value());
    EXPECT_FALSE(gpu.ecc_uncorrected_volatile.has_value());
    EXPECT_FALSE(gpu.persistence_mode.has_value());
  }
}

}  // namespace
}  // namespace fleetreap
