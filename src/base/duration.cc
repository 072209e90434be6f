#include "fleetreap/base/duration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace fleetreap {

bool ParseDuration(const std::string& text, std::chrono::milliseconds* out) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == 0) return false;
  const std::string number = text.substr(0, i);
  const std::string unit = text.substr(i);
  if (number == "." || number.find('.') != number.rfind('.')) return false;
  const double value = std::strtod(number.c_str(), nullptr);
  double scale;
  if (unit.empty() || unit == "s") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = 3600 * 1000;
  } else {
    return false;
  }
  const double ms = value * scale;
  if (!std::isfinite(ms) || ms > 1e12) return false;
  *out = std::chrono::milliseconds(static_cast<long long>(std::llround(ms)));
  return true;
}

}  // namespace fleetreap
