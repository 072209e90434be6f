#include "fleetreap/cli/run_identity.h"

#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <random>

namespace fleetreap {

std::string FormatRunId(std::chrono::system_clock::time_point start, uint32_t random) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(start);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ-%06x", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                random & 0xffffffu);
  return buf;
}

std::string OperatorName(unsigned uid, const std::string& user, const Environment& env) {
  auto sudo = env.find("SUDO_USER");
  if (uid == 0 && sudo != env.end() && !sudo->second.empty()) return sudo->second + " via sudo";
  return user.empty() ? std::to_string(uid) : user;
}

AuditRequest RunAuditFor(const Environment& env) {
  AuditRequest audit;
  std::random_device seed;
  audit.run_id = FormatRunId(std::chrono::system_clock::now(), seed());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) audit.controller = host;
  const uid_t uid = getuid();
  std::string user;
  passwd entry{};
  passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &entry, buf, sizeof buf, &found) == 0 && found != nullptr) {
    user = found->pw_name;
  }
  audit.operator_name = OperatorName(uid, user, env);
  return audit;
}

}  // namespace fleetreap
