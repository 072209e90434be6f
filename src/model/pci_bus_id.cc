#include "fleetreap/model/pci_bus_id.h"

#include <cctype>
#include <cstdlib>
#include <vector>

namespace fleetreap {
namespace {

bool IsHexField(const std::string& text) {
  if (text.empty() || text.size() > 8) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "0000:3b:00" and "00000000:3B:00.0" both to "0:59:0".
bool BusKey(const std::string& id, std::string* key) {
  std::string text = id;
  size_t dot = text.rfind('.');
  if (dot != std::string::npos && dot + 2 == text.size()) text = text.substr(0, dot);
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(':', start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  if (parts.size() != 3) return false;
  key->clear();
  for (const std::string& part : parts) {
    if (!IsHexField(part)) return false;
    if (!key->empty()) *key += ':';
    *key += std::to_string(std::strtoul(part.c_str(), nullptr, 16));
  }
  return true;
}

}  // namespace

bool SamePciDevice(const std::string& a, const std::string& b) {
  std::string key_a;
  std::string key_b;
  return BusKey(a, &key_a) && BusKey(b, &key_b) && key_a == key_b;
}

}  // namespace fleetreap
