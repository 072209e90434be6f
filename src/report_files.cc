#include "fleetreap/report_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "fleetreap/failed_hosts.h"
#include "fleetreap/report_json.h"
#include "fleetreap/report_junit.h"
#include "fleetreap/report_markdown.h"
#include "fleetreap/report_table.h"
#include "fleetreap/terminal.h"

namespace fleetreap {
namespace {

Status WriteError(const std::string& path, int error) {
  return Status::Error(ErrorKind::kInternal,
                       "cannot write " + path + ": " + std::strerror(error));
}

}  // namespace

Status WriteReportFile(const std::string& path, const std::string& content,
                       std::FILE* stdout_stream) {
  if (path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout_stream) != content.size() ||
        std::fflush(stdout_stream) != 0) {
      return WriteError("stdout", errno);
    }
    return Status::Ok();
  }
  std::string temp = path + ".tmp." + std::to_string(getpid());
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) return WriteError(path, errno);
  bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  int error = errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) {
    std::remove(temp.c_str());
    return WriteError(path, error);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temp.c_str());
    return WriteError(path, error);
  }
  return Status::Ok();
}

Status WriteReports(const RunReport& report, const Options& options,
                    std::FILE* stdout_stream) {
  struct Output {
    const std::string& path;
    std::function<std::string(const RunReport&)> render;
  };
  const Output outputs[] = {
      {options.json, RenderJson},
      {options.junit, RenderJunit},
      {options.summary_md, RenderMarkdown},
      {options.failed_hosts, RenderFailedHosts},
  };
  Status first;
  for (const Output& output : outputs) {
    if (output.path.empty()) continue;
    Status status = WriteReportFile(output.path, output.render(report), stdout_stream);
    if (!status.ok() && first.ok()) first = status;
  }
  return first;
}

std::FILE* HumanStream(const Options& options) {
  for (const std::string* path : {&options.json, &options.junit, &options.summary_md,
                                  &options.failed_hosts}) {
    if (*path == "-") return stderr;
  }
  return stdout;
}

int FinishRun(const RunReport& report, const Options& options) {
  std::FILE* human = HumanStream(options);
  TableStyle style;
  style.color = ShouldUseColorFor(human, options.color);
  std::fputs(RenderTable(report, style).c_str(), human);
  std::fflush(human);
  Status status = WriteReports(report, options);
  if (!status.ok()) {
    std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
    return 70;
  }
  return ExitCodeFor(report);
}

}  // namespace fleetreap
