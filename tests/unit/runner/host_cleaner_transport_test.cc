// How CleanHost reports a command that did not end normally: each of the
// Transport's endings becomes the host's error, naming the step.
#include <gtest/gtest.h>

#include "fleetreap/report/host_findings.h"
#include "fleetreap/runner/host_cleaner.h"
#include "fleetreap/transport/command_output.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

// Every command ends the same way, as "ending" says.
class EndingTransport : public Transport {
 public:
  explicit EndingTransport(CommandResult ending) : ending_(std::move(ending)) {}
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  CommandResult Run(const std::string&, milliseconds) override {
    ++runs_;
    return ending_;
  }
  void Close() override {}
  std::string Describe() const override { return "ending"; }
  int runs_ = 0;

 private:
  CommandResult ending_;
};

CommandResult PastTheLimit() {
  CommandResult r;
  OutputCollector output(&r, OutputLimits());
  const std::string chunk(1 << 16, 'x');
  while (output.Add(false, chunk.data(), chunk.size())) {
  }
  output.Finish(milliseconds(900));
  return r;
}

CommandResult Ending(CommandEnd end, const std::string& error, int exit_code = -1) {
  CommandResult r;
  r.end = end;
  r.error = error;
  r.exit_code = exit_code;
  return r;
}

TEST(HostCleanerTransportTest, EachEndingIsThePreciseErrorOfTheStep) {
  struct Case {
    const char* name;
    CommandResult ending;
    ErrorKind kind;
    const char* message;
  };
  const Case kCases[] = {
      {"output limit", PastTheLimit(), ErrorKind::kParse,
       "inspect: stdout exceeded 4 MiB, stopped reading"},
      {"no status", Ending(CommandEnd::kNoStatus, "channel closed without exit status"),
       ErrorKind::kCommandFailed, "inspect: channel closed without exit status"},
      // The inspect's bound: 8 s plus its two nvidia-smi calls of 4 s each.
      {"deadline", Ending(CommandEnd::kTimedOut, "no end within 16000 ms"),
       ErrorKind::kCommandTimeout, "inspect: command did not finish within 16000ms"},
      {"lost", Ending(CommandEnd::kConnectionLost, "connection lost: Socket error: eof"),
       ErrorKind::kConnectionLost, "inspect: connection lost: Socket error: eof"},
      {"remote timeout", Ending(CommandEnd::kExited, "", 124), ErrorKind::kCommandTimeout,
       "inspect: remote command ran past 16000ms"},
  };
  Host host;
  host.name = "gpu01";
  const Playbook playbook = DefaultPlaybook();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    EndingTransport transport(c.ending);
    HostJob job;
    job.host = &host;
    job.playbook = &playbook;
    job.command_timeout = milliseconds(8000);
    HostReport report = CleanHost(transport, job);
    EXPECT_EQ(report.status, HostStatus::kFailed);
    EXPECT_EQ(report.error_kind, c.kind) << ErrorKindName(report.error_kind);
    EXPECT_EQ(HostMessage(report), c.message);
    EXPECT_EQ(transport.runs_, 1);  // nothing after the failed inspect
  }
}

}  // namespace
}  // namespace fleetreap
