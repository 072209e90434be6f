#include "fleetreap/base/closest_name.h"

#include <algorithm>

namespace fleetreap {

size_t EditDistance(const std::string& a, const std::string& b, size_t cap) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > cap) return cap + 1;
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return std::min(d[n][m], cap + 1);
}

std::string ClosestName(const std::string& name, const std::vector<std::string>& known,
                        size_t max_distance) {
  std::string best;
  size_t best_distance = max_distance + 1;
  bool tied = false;  // another name is as near as "best"
  for (const std::string& candidate : known) {
    const size_t distance = EditDistance(name, candidate, max_distance);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
      tied = false;
    } else if (distance == best_distance && candidate != best) {
      tied = true;
    }
  }
  return tied ? "" : best;
}

}  // namespace fleetreap
