#include "fleetreap/transport/ssh_config_lookup.h"

#include <glob.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

constexpr int kMaxIncludeDepth = 16;

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// OpenSSH's match_pattern: '*' and '?' only, case-insensitive for host names.
bool Glob(const char* pattern, const char* text) {
  for (;; ++pattern, ++text) {
    if (*pattern == '\0') return *text == '\0';
    if (*pattern == '*') {
      for (; *text != '\0'; ++text) {
        if (Glob(pattern + 1, text)) return true;
      }
      return Glob(pattern + 1, text);
    }
    if (*text == '\0') return false;
    if (*pattern != '?' && std::tolower(static_cast<unsigned char>(*pattern)) !=
                               std::tolower(static_cast<unsigned char>(*text))) {
      return false;
    }
  }
}

// A list of patterns, each maybe negated: true when one matches and no
// negated one does.
bool MatchPatterns(const std::vector<std::string>& patterns, const std::string& name) {
  bool matched = false;
  for (const std::string& pattern : patterns) {
    const bool negated = !pattern.empty() && pattern[0] == '!';
    if (Glob(pattern.c_str() + (negated ? 1 : 0), name.c_str())) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    parts.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return parts;
}

// "Keyword args..." or "Keyword=args...", args split on blanks, "quoted"
// args kept whole. False for blank and comment lines.
bool SplitLine(const std::string& line, std::string* keyword, std::vector<std::string>* args) {
  size_t i = line.find_first_not_of(" \t\r");
  if (i == std::string::npos || line[i] == '#') return false;
  size_t end = line.find_first_of(" \t\r=", i);
  if (end == std::string::npos) end = line.size();
  *keyword = Lowercase(line.substr(i, end - i));
  i = line.find_first_not_of(" \t\r", end);
  if (i != std::string::npos && line[i] == '=') i = line.find_first_not_of(" \t\r", i + 1);
  args->clear();
  while (i != std::string::npos && i < line.size()) {
    std::string arg;
    if (line[i] == '"') {
      size_t close = line.find('"', i + 1);
      if (close == std::string::npos) close = line.size();
      arg = line.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      size_t stop = line.find_first_of(" \t\r", i);
      if (stop == std::string::npos) stop = line.size();
      arg = line.substr(i, stop - i);
      i = stop;
    }
    args->push_back(arg);
    i = i < line.size() ? line.find_first_not_of(" \t\r", i) : std::string::npos;
  }
  return true;
}

struct Lookup {
  const std::string& host;
  const std::string& home;
  std::string host_name;  // HostName, for "Match host"
  SshConfigValues* values;
};

bool MatchLine(const std::vector<std::string>& args, const Lookup& lookup) {
  if (args.size() == 1 && Lowercase(args[0]) == "all") return true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string criterion = Lowercase(args[i]);
    if ((criterion == "host" || criterion == "originalhost") && i + 1 < args.size()) {
      const std::string& name =
          criterion == "host" && !lookup.host_name.empty() ? lookup.host_name : lookup.host;
      if (!MatchPatterns(SplitCommas(args[++i]), name)) return false;
    } else {
      return false;  // exec, user, canonical, final...: not ours to judge
    }
  }
  return !args.empty();
}

Status ReadFile(const std::string& path, int depth, Lookup* lookup);

Status Include(const std::vector<std::string>& args, const std::string& from, int depth,
               Lookup* lookup) {
  const bool system = from.rfind("/etc/ssh/", 0) == 0;
  for (std::string pattern : args) {
    if (pattern.rfind("~/", 0) == 0) pattern = lookup->home + pattern.substr(1);
    if (pattern.empty() || pattern[0] != '/') {
      pattern = (system ? std::string("/etc/ssh/") : lookup->home + "/.ssh/") + pattern;
    }
    glob_t found{};
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
      for (size_t i = 0; i < found.gl_pathc; ++i) {
        Status status = ReadFile(found.gl_pathv[i], depth + 1, lookup);
        if (!status.ok()) {
          globfree(&found);
          return status;
        }
      }
    }
    globfree(&found);
  }
  return Status::Ok();
}

Status ReadFile(const std::string& path, int depth, Lookup* lookup) {
  if (depth > kMaxIncludeDepth) {
    return Status::Error(ErrorKind::kInvalidInput,
                         "ssh config " + path + ": Include nested too deep");
  }
  std::ifstream in(path);
  if (!in) return Status::Ok();  // OpenSSH skips a missing file too
  SshConfigValues& values = *lookup->values;
  bool active = true;
  std::string line;
  std::string keyword;
  std::vector<std::string> args;
  while (std::getline(in, line)) {
    if (!SplitLine(line, &keyword, &args)) continue;
    if (keyword == "host") {
      active = MatchPatterns(args, lookup->host);
    } else if (keyword == "match") {
      active = MatchLine(args, *lookup);
    } else if (!active || args.empty()) {
      continue;
    } else if (keyword == "include") {
      Status status = Include(args, path, depth, lookup);
      if (!status.ok()) return status;
    } else if (keyword == "hostname" && lookup->host_name.empty()) {
      lookup->host_name = args[0];
    } else if (keyword == "hostkeyalias" && values.host_key_alias.empty()) {
      values.host_key_alias = args[0];
    } else if (keyword == "userknownhostsfile" && values.user_known_hosts.empty()) {
      values.user_known_hosts = args;
    } else if (keyword == "globalknownhostsfile" && values.global_known_hosts.empty()) {
      values.global_known_hosts = args;
    } else if (keyword == "identityagent" && values.identity_agent.empty()) {
      values.identity_agent = args[0];
    } else if ((keyword == "proxyjump" || keyword == "proxycommand") && values.proxy_jump.empty() &&
               values.proxy_command.empty()) {
      (keyword == "proxyjump" ? values.proxy_jump : values.proxy_command) = Join(args, " ");
    }
  }
  return Status::Ok();
}

}  // namespace

Status LookUpSshConfig(const std::vector<std::string>& files, const std::string& host,
                       const std::string& home, SshConfigValues* values) {
  *values = SshConfigValues();
  Lookup lookup{host, home, "", values};
  for (const std::string& file : files) {
    Status status = ReadFile(file, 0, &lookup);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

std::string ExpandSshConfigPath(const std::string& value, const ProxyTokens& tokens,
                                const std::string& home, const std::string& alias) {
  std::string text = value.rfind("~/", 0) == 0 || value == "~" ? home + value.substr(1) : value;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close != std::string::npos) {
        const char* env = getenv(text.substr(i + 2, close - i - 2).c_str());
        out += env != nullptr ? env : "";
        i = close;
        continue;
      }
    }
    if (text[i] != '%' || i + 1 == text.size()) {
      out.push_back(text[i]);
      continue;
    }
    switch (text[++i]) {
      case '%': out += '%'; break;
      case 'd': out += home; break;
      case 'u': out += tokens.local_user; break;
      case 'h': out += tokens.host; break;
      case 'n': out += tokens.original_host; break;
      case 'p': out += std::to_string(tokens.port); break;
      case 'r': out += tokens.user; break;
      case 'k': out += alias.empty() ? tokens.original_host : alias; break;
      default: out += text.substr(i - 1, 2);
    }
  }
  return out;
}

}  // namespace fleetreap
