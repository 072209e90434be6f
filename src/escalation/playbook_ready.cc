// The playbook's "ready:" section: which readiness checks run, what they
// block, and their limits (escalation/readiness.h, docs/readiness.md).
#include <algorithm>
#include <map>

#include "playbook_reader.h"

namespace fleetreap {
namespace playbook_internal {
namespace {

CheckMode Mode(const PlaybookReader& reader, const YAML::Node& key, const YAML::Node& value) {
  std::string text = reader.Scalar(key, value);
  if (text == "off" || text == "false") return CheckMode::kOff;
  if (text == "warn") return CheckMode::kWarn;
  if (text == "block" || text == "true") return CheckMode::kBlock;
  reader.Fail(key, "ready." + PlaybookReader::Key(key) + " must be off, warn or block, got \"" +
                       text + "\"");
}

std::vector<int> XidList(const PlaybookReader& reader, const YAML::Node& key,
                         const YAML::Node& value) {
  std::vector<int> codes;
  if (value.IsNull()) return codes;
  if (!value.IsSequence()) {
    reader.Fail(key, "ready." + PlaybookReader::Key(key) + " must be a list");
  }
  for (const YAML::Node& item : value) {
    int code = static_cast<int>(reader.Integer(key, item, 1, 999));
    if (std::count(codes.begin(), codes.end(), code)) {
      reader.Fail(item, "ready." + PlaybookReader::Key(key) + " lists Xid " + std::to_string(code) +
                            " twice");
    }
    codes.push_back(code);
  }
  return codes;
}

}  // namespace

void ReadReadyPolicy(const PlaybookReader& reader, const YAML::Node& key, const YAML::Node& value,
                     ReadyPolicy* ready) {
  if (value.IsScalar()) {
    if (value.Scalar() != "off" && value.Scalar() != "false") {
      reader.Fail(key, "ready must be a mapping of checks, or off");
    }
    for (CheckMode* mode :
         {&ready->ecc, &ready->remapped_rows, &ready->retired_pages, &ready->fabric,
          &ready->persistence, &ready->pcie_link, &ready->xid, &ready->gpu_count}) {
      *mode = CheckMode::kOff;
    }
    return;
  }
  if (!value.IsMap()) reader.Fail(key, "ready must be a mapping of checks, or off");
  const std::map<std::string, CheckMode*> modes = {{"ecc", &ready->ecc},
                                                   {"remapped_rows", &ready->remapped_rows},
                                                   {"retired_pages", &ready->retired_pages},
                                                   {"fabric", &ready->fabric},
                                                   {"persistence", &ready->persistence},
                                                   {"pcie_link", &ready->pcie_link},
                                                   {"xid", &ready->xid},
                                                   {"gpu_count", &ready->gpu_count},
                                                   {"xid_unlisted", &ready->xid_unlisted}};
  YAML::Node fatal_key;
  for (const auto& entry : value) {
    const YAML::Node& k = entry.first;
    const YAML::Node& v = entry.second;
    if (!k.IsScalar()) reader.Fail(k, "keys must be names");
    const std::string& name = k.Scalar();
    auto mode = modes.find(name);
    if (mode != modes.end()) {
      *mode->second = Mode(reader, k, v);
    } else if (name == "ecc_volatile_max") {
      ready->ecc_volatile_max = reader.Integer(k, v, 0, 1 << 30);
    } else if (name == "ecc_aggregate_max") {
      ready->ecc_aggregate_max = reader.Integer(k, v, 0, 1 << 30);
    } else if (name == "retired_pages_max") {
      ready->retired_pages_max = reader.Integer(k, v, 0, 1 << 20);
    } else if (name == "pcie_gen") {
      std::string text = reader.Scalar(k, v);
      if (text != "true" && text != "false") {
        reader.Fail(k, "ready.pcie_gen must be true or false, got \"" + text + "\"");
      }
      ready->pcie_gen = text == "true";
    } else if (name == "xid_fatal") {
      ready->xid_fatal = XidList(reader, k, v);
      fatal_key = k;
    } else if (name == "xid_informational") {
      ready->xid_informational = XidList(reader, k, v);
    } else {
      reader.Fail(k, "unknown ready setting \"" + name +
                         "\"; they are ecc, remapped_rows, retired_pages, fabric, persistence, "
                         "pcie_link, xid, gpu_count, ecc_volatile_max, ecc_aggregate_max, "
                         "retired_pages_max, pcie_gen, xid_fatal, xid_informational, "
                         "xid_unlisted");
    }
  }
  for (int code : ready->xid_fatal) {
    if (std::count(ready->xid_informational.begin(), ready->xid_informational.end(), code)) {
      reader.Fail(fatal_key.IsDefined() ? fatal_key : key,
                  "Xid " + std::to_string(code) + " is in both xid_fatal and xid_informational");
    }
  }
}

}  // namespace playbook_internal
}  // namespace fleetreap
