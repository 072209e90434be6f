#include "cli_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace po = boost::program_options;

namespace fleetreap {

// clang-format off
void AddReportFlags(po::options_description_easy_init add, Options* o) {
  add("json", po::value(&o->json)->value_name("FILE"),
      "write the JSON report to FILE ('-' for stdout)")
     ("junit", po::value(&o->junit)->value_name("FILE"),
      "write JUnit XML, one test case per host")
     ("summary-md", po::value(&o->summary_md)->value_name("FILE"),
      "write a Markdown summary (CI job summary page)")
     ("failed-hosts", po::value(&o->failed_hosts)->value_name("FILE"),
      "write the hosts that are not clean, for --limit @FILE")
     ("drain-reasons", po::value(&o->drain_reasons)->value_name("FILE"),
      "write one 'HOST fleetreap: REASON' line per host that is not clean")
     ("metrics", po::value(&o->metrics)->value_name("FILE"),
      "write Prometheus metrics (node_exporter textfile: NAME.prom), renamed into place")
     ("html", po::value(&o->html)->value_name("FILE"),
      "write one self-contained HTML page: verdict, GPU grid, timelines, hosts")
     ("journal", po::value(&o->journal)->value_name("FILE"),
      "record each host as it ends, JSON lines, fsync'd, for fleetreap merge if the run dies "
      "('-': stream them on stdout; default: FILE.journal beside --json FILE, removed once FILE "
      "is written; 'none': off)")
     ("no-redact", po::bool_switch(&o->no_redact),
      "keep secrets (--api-key, HF_TOKEN=, ...) in reported command lines")
     ("color", po::value(&o->color)->value_name("WHEN"),
      "auto | always | never; auto: colour on a terminal without NO_COLOR");
}
// clang-format on

std::string CheckReportFlags(const Options& o) {
  if (o.color != "auto" && o.color != "always" && o.color != "never") {
    return "--color: expected auto, always or never, got \"" + o.color + "\"";
  }
  const int to_stdout = (o.json == "-") + (o.junit == "-") + (o.summary_md == "-") +
                        (o.failed_hosts == "-") + (o.drain_reasons == "-") + (o.metrics == "-") +
                        (o.html == "-") + (o.journal == "-");
  if (to_stdout > 1) {
    return "only one of --json, --junit, --summary-md, --failed-hosts, --drain-reasons, --metrics, "
           "--html, --journal can be '-'";
  }
  return "";
}

std::string WithoutTrailingSpaces(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
    }
    out += c;
  }
  return out;
}

std::string CheckReadableFile(const std::string& flag, const std::string& path) {
  // Opened, never read: a pipe (--identity <(...)) keeps its bytes for
  // libssh, and O_NONBLOCK does not wait for its writer.
  int error = 0;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = errno;
  } else {
    struct stat info {};
    if (fstat(fd, &info) != 0) {
      error = errno;
    } else if (S_ISDIR(info.st_mode)) {
      error = EISDIR;
    }
    close(fd);
  }
  if (error == 0) return "";
  return "--" + flag + ": cannot read \"" + path + "\": " + std::strerror(error);
}

std::string FleetreapSpelling(const std::string& word) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"--private-key", "--identity"}, {"--check", "--dry-run"}, {"-C", "--dry-run"}};
  for (const auto& [ansible, ours] : kAliases) {
    const std::string alias = ansible;
    if (word == alias) return ours;
    if (alias.size() > 2 && word.rfind(alias + "=", 0) == 0) {
      return ours + word.substr(alias.size());
    }
  }
  return word;
}

}  // namespace fleetreap
