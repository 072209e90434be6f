#include "fleetreap/report/report_merge.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fleetreap/base/text.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/report_reader.h"

namespace fleetreap {
namespace {

// Appends "value" to the ", "-joined list "joined" unless it is there or "".
void JoinDistinct(const std::string& value, std::string* joined) {
  if (value.empty()) return;
  std::string padded = ", " + *joined + ", ";
  if (padded.find(", " + value + ", ") != std::string::npos) return;
  *joined += joined->empty() ? value : ", " + value;
}

// Keeps the fields of "scope" that "other" agrees on.
void IntersectScope(const Scope& other, Scope* scope) {
  if (scope->gpus != other.gpus) scope->gpus.reset();
  if (scope->cgroup != other.cgroup) scope->cgroup.clear();
  if (scope->slurm_job != other.slurm_job) scope->slurm_job.clear();
  if (scope->spare_pods != other.spare_pods) scope->spare_pods = false;
  if (scope->source != other.source) scope->source = "merged";
  if (scope->empty()) *scope = Scope();
}

Status ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": cannot read: " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": cannot read: " + std::strerror(errno));
  }
  *text = buffer.str();
  return Status::Ok();
}

}  // namespace

Status MergeReports(const std::vector<SourcedReport>& inputs, RunReport* merged) {
  if (inputs.empty()) {
    return Status::Error(ErrorKind::kUsage, "merge: no reports given");
  }
  *merged = RunReport();
  const RunReport& first = inputs.front().report;
  merged->dry_run = first.dry_run;
  merged->scope = first.scope;
  merged->start_time = first.start_time;
  auto end = first.start_time + first.duration;
  std::map<std::string, const std::string*> seen;  // host name -> its source
  for (const SourcedReport& input : inputs) {
    const RunReport& report = input.report;
    if (report.dry_run != merged->dry_run) {
      const SourcedReport& dry = report.dry_run ? input : inputs.front();
      const SourcedReport& real = report.dry_run ? inputs.front() : input;
      return Status::Error(ErrorKind::kInvalidInput,
                           input.source + ": a dry run cannot be merged with a real run (" +
                               dry.source + " is a dry run, " + real.source + " is not)");
    }
    JoinDistinct(report.tool_version, &merged->tool_version);
    JoinDistinct(report.run_id, &merged->run_id);
    JoinDistinct(report.playbook, &merged->playbook);
    JoinDistinct(report.host_key_policy, &merged->host_key_policy);
    IntersectScope(report.scope, &merged->scope);
    merged->interrupted = merged->interrupted || report.interrupted;
    JoinDistinct(report.stopped, &merged->stopped);
    if (report.start_time < merged->start_time) merged->start_time = report.start_time;
    if (report.start_time + report.duration > end) end = report.start_time + report.duration;

    std::vector<std::string> names;
    for (const HostReport& host : report.hosts) names.push_back(host.name);
    names.insert(names.end(), report.not_started.begin(), report.not_started.end());
    for (const MissingReport& missing : report.no_report) names.push_back(missing.name);
    for (const std::string& name : names) {
      auto [it, inserted] = seen.emplace(name, &input.source);
      if (!inserted) {
        return Status::Error(
            ErrorKind::kInvalidInput,
            input.source + ": host " + name +
                (it->second == &input.source ? " appears twice" : " is also in " + *it->second));
      }
    }
    merged->hosts.insert(merged->hosts.end(), report.hosts.begin(), report.hosts.end());
    merged->not_started.insert(merged->not_started.end(), report.not_started.begin(),
                               report.not_started.end());
    merged->no_report.insert(merged->no_report.end(), report.no_report.begin(),
                             report.no_report.end());
  }
  merged->duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(end - merged->start_time);
  return Status::Ok();
}

void ExpectHosts(const std::vector<std::string>& expected, RunReport* merged) {
  std::set<std::string> known(merged->not_started.begin(), merged->not_started.end());
  for (const HostReport& host : merged->hosts) known.insert(host.name);
  for (const MissingReport& host : merged->no_report) known.insert(host.name);
  for (const std::string& name : expected) {
    if (known.insert(name).second) merged->no_report.push_back({name, kNoReportAmongMerged});
  }
}

Status ReadExpectedHosts(const std::string& path, std::vector<std::string>* names) {
  std::string text;
  Status status = ReadFile(path, &text);
  if (!status.ok()) return status;
  names->clear();
  for (std::string line : SplitLines(text)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = Trim(line);
    if (!line.empty()) names->push_back(line);
  }
  return Status::Ok();
}

Status ExpectHostsFromFile(const std::string& path, RunReport* merged) {
  std::vector<std::string> names;
  Status status = ReadExpectedHosts(path, &names);
  if (status.ok()) ExpectHosts(names, merged);
  return status;
}

std::string NodeOfReportFile(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  for (const char* suffix : {".json.journal", ".json"}) {
    const std::string tail = suffix;
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0) {
      return name.substr(0, name.size() - tail.size());
    }
  }
  return "";
}

namespace {

// The hosts a report names: run, never started, and without a report.
std::vector<std::string> HeldHosts(const RunReport& report) {
  std::vector<std::string> held;
  for (const HostReport& host : report.hosts) held.push_back(host.name);
  held.insert(held.end(), report.not_started.begin(), report.not_started.end());
  for (const MissingReport& host : report.no_report) held.push_back(host.name);
  return held;
}

// Whether "report" reads as `fleetreap --local`'s: hosts reached at
// localhost with no port, and no host key policy (SSH was not used).
bool LooksLocal(const RunReport& report) {
  if (!report.host_key_policy.empty() || report.hosts.empty()) return false;
  for (const HostReport& host : report.hosts) {
    if (host.address != "localhost" || host.port != 0) return false;
  }
  return true;
}

// Whether "file_node" (NodeOfReportFile's) is the node "input" speaks for:
// an expected node, or the file of a --local report named as a host is
// named (a merged report named after none of the hosts it holds is not).
bool IsNodesOwnReport(const std::string& file_node, const std::vector<std::string>& held,
                      const RunReport& report, const std::set<std::string>& expected) {
  if (expected.count(file_node) > 0) return true;
  if (!LooksLocal(report) || !IsHostShapedName(file_node)) return false;
  return held.size() == 1 || std::find(held.begin(), held.end(), file_node) != held.end();
}

}  // namespace

bool IsHostShapedName(const std::string& name) {
  if (name.empty() || name.size() > 253 || !std::isalnum(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

Status CheckNodeReports(const std::vector<SourcedReport>& inputs,
                        const std::vector<std::string>& expected) {
  const std::set<std::string> nodes(expected.begin(), expected.end());
  for (const SourcedReport& input : inputs) {
    const std::string node = NodeOfReportFile(input.source);
    const std::vector<std::string> held = HeldHosts(input.report);
    if (node.empty() || !IsNodesOwnReport(node, held, input.report, nodes)) continue;
    if (held.size() == 1 && held.front() == node) continue;
    std::string listed;
    for (const std::string& name : held) listed += (listed.empty() ? "" : ", ") + name;
    return Status::Error(ErrorKind::kInvalidInput, input.source + ": the report of node " + node +
                                                       " must hold that host alone; it holds " +
                                                       (listed.empty() ? "none" : listed));
  }
  return Status::Ok();
}

Status MergeReportFiles(const std::vector<std::string>& paths, RunReport* merged,
                        const std::vector<std::string>& expected) {
  std::vector<SourcedReport> inputs;
  for (const std::string& path : paths) {
    std::string text;
    Status status = ReadFile(path, &text);
    if (!status.ok()) return status;
    SourcedReport input;
    input.source = path;
    status = LooksLikeJournal(text) ? ReadJournal(text, path, &input.report)
                                    : ReadReportJson(text, path, &input.report);
    if (!status.ok()) return status;
    inputs.push_back(std::move(input));
  }
  Status status = CheckNodeReports(inputs, expected);
  if (!status.ok()) return status;
  return MergeReports(inputs, merged);
}

}  // namespace fleetreap
