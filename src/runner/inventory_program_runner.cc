#include "fleetreap/runner/inventory_program_runner.h"

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"

namespace fleetreap {
namespace {

constexpr size_t kInventoryStdoutLimit = size_t{256} << 20;
constexpr size_t kStderrQuoteCap = 400;

}  // namespace

InventoryProgramRunner::InventoryProgramRunner(std::chrono::milliseconds timeout)
    : timeout_(timeout), transport_(OutputLimits{kInventoryStdoutLimit, kStderrLimit}) {}

Status InventoryProgramRunner::Run(const std::vector<std::string>& argv, std::string* out) {
  std::string command = "exec";
  for (const std::string& arg : argv) command += " " + ShellQuote(arg);
  command += " </dev/null";
  CommandResult result = transport_.Run(command, timeout_);
  if (result.Succeeded()) {
    *out = std::move(result.out);
    return Status::Ok();
  }
  std::string what = Join(argv, " ") + ": ";
  switch (result.end) {
    case CommandEnd::kExited: what += "exit " + std::to_string(result.exit_code); break;
    case CommandEnd::kTimedOut:
      what += "still running after " + FormatSeconds(timeout_) + ", stopped";
      break;
    case CommandEnd::kSignaled: what += "killed by SIG" + result.signal; break;
    case CommandEnd::kOutputLimit: what += result.error; break;
    default: what += "could not be started: " + result.error; break;
  }
  const std::string err = Trim(result.err);
  if (!err.empty()) what += ": " + QuoteForMessage(err, kStderrQuoteCap);
  return Status::Error(ErrorKind::kInvalidInput, what);
}

bool InventoryProgramRunner::Available(const std::string& command) {
  return transport_.Run("command -v " + ShellQuote(command) + " >/dev/null", timeout_).Succeeded();
}

}  // namespace fleetreap
