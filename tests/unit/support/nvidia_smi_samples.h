// NvidiaSmiSamples: what the nvidia-smi parser tests share: the real
// captures of tests/testdata/nvsmi, one-line renderings of parsed readings
// and apps (so a table row states its expectation as text), and the fields
// each capture's run asked for. Pure apart from ReadSample (reads a file);
// thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fleetreap/remote/nvidia_smi.h"

namespace fleetreap {
namespace nvsmi_samples {

// The capture tests/testdata/nvsmi/NAME, byte for byte.
inline std::string ReadSample(const std::string& name) {
  std::ifstream file(std::string(FLEETREAP_TESTDATA_DIR) + "/nvsmi/" + name, std::ios::binary);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

inline std::vector<std::string> Split(const std::string& csv) {
  std::vector<std::string> fields;
  std::stringstream in(csv);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

inline std::string Mib(const std::optional<int64_t>& mib) {
  return mib ? std::to_string(*mib) : "?";
}

// One line per GPU: "INDEX UUID BUS used=U total=T STATE (DETAIL)".
inline std::string Render(const std::vector<GpuReading>& gpus) {
  std::string text;
  for (const GpuReading& gpu : gpus) {
    text += std::to_string(gpu.index) + " " + gpu.uuid + " " + gpu.bus_id +
            " used=" + Mib(gpu.used_mib) + " total=" + Mib(gpu.total_mib) + " " +
            GpuStateName(gpu.state);
    if (!gpu.detail.empty()) text += " (" + gpu.detail + ")";
    text += "\n";
  }
  return text;
}

// One line per app: "PID UUID BUS used=U [NAME]".
inline std::string Render(const std::vector<ComputeApp>& apps) {
  std::string text;
  for (const ComputeApp& app : apps) {
    text += (app.pid ? std::to_string(*app.pid) : "?") + " " + app.gpu_uuid + " " + app.gpu_bus_id +
            " used=" + Mib(app.used_mib) + " [" + app.process_name + "]\n";
  }
  return text;
}

// The header line's names, units dropped: the fields that run asked for.
inline std::vector<std::string> HeaderFields(const std::string& sample) {
  std::string text = ReadSample(sample);
  std::vector<std::string> fields;
  for (std::string field : Split(text.substr(0, text.find('\n')))) {
    size_t unit = field.find(" [");
    if (unit != std::string::npos) field.resize(unit);
    size_t begin = field.find_first_not_of(' ');
    fields.push_back(field.substr(begin));
  }
  return fields;
}

// The fields the captures' runs asked for.
inline constexpr char kSample02Fields[] =
    "uuid,name,driver_model.current,driver_model.pending,vbios_version,"
    "driver_version,fan.speed,memory.used,pci.bus_id,serial,compute_cap,"
    "pci.sub_device_id,index";
inline constexpr char kTitanFields[] =
    "index,uuid,name,temperature.gpu,utilization.gpu,memory.used,memory.total";
inline constexpr char kAppsFields[] =
    "timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory";
inline constexpr char kOurFields[] =
    "index,uuid,name,pci.bus_id,memory.used,memory.total,gpu_recovery_action";
inline constexpr char kOurOldFields[] = "index,uuid,name,pci.bus_id,memory.used,memory.total";
// The fields of the captures that asked for a process name (no command of
// fleetreap's does: remote_script_test's NoQueryAsksForAUserField).
inline constexpr char kOurAppsFields[] = "gpu_uuid,gpu_bus_id,pid,used_gpu_memory,process_name";

}  // namespace nvsmi_samples
}  // namespace fleetreap
