#include "fleetreap/report/redaction.h"

#include <cctype>
#include <vector>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// "name" lowercased, '_' as '-'.
bool IsSecretFlagName(std::string name) {
  for (char& c : name) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
  if (name == "token" || EndsWith(name, "-token")) return true;
  if (Contains(name, "secret") || Contains(name, "password") || Contains(name, "passwd")) {
    return true;
  }
  for (const char* key : {"api-key", "apikey", "access-key", "private-key"}) {
    if (name == key || EndsWith(name, std::string("-") + key)) return true;
  }
  return false;
}

bool IsSecretVariable(std::string name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    c = static_cast<char>(std::toupper(c));
  }
  if (EndsWith(name, "TOKEN")) return true;
  if (Contains(name, "SECRET") || Contains(name, "PASSWORD") || Contains(name, "PASSWD")) {
    return true;
  }
  for (const char* key : {"API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY"}) {
    if (EndsWith(name, key)) return true;
  }
  return false;
}

// "scheme://user:password@..." with the password redacted.
std::string RedactUserInfo(const std::string& word) {
  const size_t scheme = word.find("://");
  if (scheme == std::string::npos) return word;
  const size_t start = scheme + 3;
  const size_t at = word.find('@', start);
  const size_t end = word.find_first_of("/?#", start);
  if (at == std::string::npos || (end != std::string::npos && end < at)) return word;
  const size_t colon = word.find(':', start);
  if (colon == std::string::npos || colon > at) return word;
  return word.substr(0, colon + 1) + kRedacted + word.substr(at);
}

}  // namespace

std::string RedactCommandLine(const std::string& cmdline) {
  std::vector<std::string> words;
  size_t from = 0;
  while (true) {
    const size_t space = cmdline.find(' ', from);
    words.push_back(cmdline.substr(from, space == std::string::npos ? space : space - from));
    if (space == std::string::npos) break;
    from = space + 1;
  }
  bool next_is_secret = false;
  for (std::string& word : words) {
    if (next_is_secret) {
      next_is_secret = false;
      if (!word.empty() && word.rfind("--", 0) != 0) {
        word = kRedacted;
        continue;
      }
    }
    const size_t eq = word.find('=');
    const size_t name_start = word.find_first_not_of('-');
    if (name_start != std::string::npos && name_start > 0 && name_start < eq) {
      const std::string name =
          word.substr(name_start, eq == std::string::npos ? eq : eq - name_start);
      if (IsSecretFlagName(name)) {
        if (eq == std::string::npos) {
          next_is_secret = true;
        } else {
          word = word.substr(0, eq + 1) + kRedacted;
        }
        continue;
      }
    } else if (name_start == 0 && eq != std::string::npos && eq > 0 &&
               IsSecretVariable(word.substr(0, eq))) {
      word = word.substr(0, eq + 1) + kRedacted;
      continue;
    }
    word = RedactUserInfo(word);
  }
  return Join(words, " ");
}

void RedactHostReport(HostReport* host) {
  for (Holder& holder : host->holders) holder.cmdline = RedactCommandLine(holder.cmdline);
}

}  // namespace fleetreap
