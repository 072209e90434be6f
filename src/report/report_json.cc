#include "fleetreap/report/report_json.h"

#include <nlohmann/json.hpp>

#include "fleetreap/base/time_format.h"
#include "fleetreap/model/scope.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"

namespace fleetreap {
namespace {

// Keys in insertion order: the document reads top-down like the schema.
using Json = nlohmann::ordered_json;

Json OptionalMib(const std::optional<int64_t>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json OptionalText(const std::string& value) { return value.empty() ? Json(nullptr) : Json(value); }

Json GpuJson(const GpuReading& gpu) {
  Json out;
  out["index"] = gpu.index;
  out["uuid"] = gpu.uuid;
  out["name"] = gpu.name;
  out["bus_id"] = gpu.bus_id;
  out["memory_used_mib"] = OptionalMib(gpu.used_mib);
  out["memory_total_mib"] = OptionalMib(gpu.total_mib);
  out["state"] = GpuStateName(gpu.state);
  out["detail"] = OptionalText(gpu.detail);
  out["recovery_action"] = OptionalText(gpu.recovery_action);
  return out;
}

Json GpusJson(const std::vector<GpuReading>& gpus) {
  Json out = Json::array();
  for (const GpuReading& gpu : gpus) out.push_back(GpuJson(gpu));
  return out;
}

Json HolderJson(const Holder& holder) {
  Json out;
  out["pid"] = holder.pid;
  out["start_time"] = holder.start_time;
  out["ppid"] = holder.ppid;
  out["user"] = holder.user;
  out["state"] = std::string(1, holder.state);
  out["name"] = holder.comm;
  out["exe"] = holder.exe;
  out["cmdline"] = holder.cmdline;
  out["gpus"] = holder.gpus;
  out["devices"] = holder.devices;
  out["fate"] = HolderFateName(holder.fate);
  out["protected_by"] = OptionalText(holder.protected_by);
  out["named_like"] = OptionalText(holder.named_like);
  out["out_of_scope"] = OptionalText(holder.out_of_scope);
  out["cgroup"] = OptionalText(holder.owner.cgroup);
  Json owner;
  owner["unit"] = OptionalText(holder.owner.unit);
  owner["unit_restart"] = OptionalText(holder.owner.unit_restart);
  owner["container_runtime"] = OptionalText(holder.owner.container_runtime);
  owner["container_id"] = OptionalText(holder.owner.container_id);
  owner["pod_uid"] = OptionalText(holder.owner.pod_uid);
  owner["slurm_job"] = OptionalText(holder.owner.slurm_job);
  owner["slurm_step"] = OptionalText(holder.owner.slurm_step);
  out["owner"] = std::move(owner);
  out["round"] = holder.round;
  return out;
}

// null when the checks did not run; else whether the host is ready and
// every finding, warnings included.
Json ReadinessJson(const HostReport& host) {
  if (!host.readiness_checked) return Json(nullptr);
  Json findings = Json::array();
  for (const ReadinessFinding& finding : host.readiness) {
    Json item;
    item["check"] = finding.check;
    item["reason"] = finding.reason;
    item["gpu"] = finding.gpu >= 0 ? Json(finding.gpu) : Json(nullptr);
    item["bus_id"] = OptionalText(finding.bus_id);
    item["severity"] = FindingSeverityName(finding.severity);
    item["detail"] = finding.detail;
    item["next_step"] = finding.next_step;
    item["text"] = FindingText(finding);
    findings.push_back(std::move(item));
  }
  Json out;
  out["ready"] = !AnyBlocking(host.readiness);
  out["findings"] = std::move(findings);
  return out;
}

// The judge's typed findings, each with its words.
Json FindingsJson(const HostReport& host) {
  Json out = Json::array();
  for (const HostFinding& finding : host.findings) {
    Json item;
    item["kind"] = finding.kind;
    item["pids"] = finding.pids;
    item["names"] = finding.names;
    item["gpus"] = finding.gpus;
    item["units"] = finding.units;
    item["mib"] = finding.mib;
    item["count"] = finding.count;
    item["detail"] = OptionalText(finding.detail);
    Json processes = Json::array();
    for (const Holder& process : finding.processes) processes.push_back(HolderJson(process));
    item["processes"] = std::move(processes);
    item["cause"] = OptionalText(finding.cause);
    item["restart"] = OptionalText(finding.restart);
    item["restart_sec"] = OptionalText(finding.restart_sec);
    item["kill_mode"] = OptionalText(finding.kill_mode);
    item["reason"] = finding.reason;
    item["note"] = finding.note;
    item["text"] = HostFindingText(finding);
    out.push_back(std::move(item));
  }
  return out;
}

Json HostJson(const HostReport& host, bool dry_run) {
  HostOutcome outcome = OutcomeOf(host, dry_run);
  Json out;
  out["name"] = host.name;
  out["address"] = host.address;
  out["port"] = host.port;
  out["status"] = HostStatusName(host.status);
  out["outcome"] = OutcomeKindLabel(outcome.kind);
  out["changed"] = HostChanged(host);
  out["summary"] = outcome.detail;
  out["error_kind"] =
      host.error_kind == ErrorKind::kNone ? Json(nullptr) : Json(ErrorKindName(host.error_kind));
  out["error_message"] = OptionalText(HostMessage(host));
  out["host_key_fingerprint"] = OptionalText(host.host_key_fingerprint);
  out["host_key_type"] = OptionalText(host.host_key_type);
  out["host_key_accepted_into"] = OptionalText(host.host_key_accepted_into);
  out["attempts"] = host.attempts;
  out["duration_ms"] = host.duration.count();
  out["gpus_before"] = GpusJson(host.gpus_before);
  out["gpus_after"] = GpusJson(host.gpus_after);
  Json holders = Json::array();
  for (const Holder& holder : host.holders) holders.push_back(HolderJson(holder));
  out["holders"] = std::move(holders);
  out["units_stopped"] = host.units_stopped;
  out["units_would_stop"] = host.units_would_stop;
  out["units_skipped"] = host.units_skipped;
  out["shm_removed"] = host.shm_removed;
  out["shm_would_remove"] = host.shm_would_remove;
  out["shm_kept"] = host.shm_kept;
  out["term_sent"] = host.term_sent;
  out["kill_sent"] = host.kill_sent;
  out["pidfd_sent"] = host.pidfd_sent;
  out["rounds"] = host.rounds;
  out["respawning_parent"] = OptionalText(host.respawning_parent);
  out["gpus_reset"] = host.gpus_reset;
  out["reset_blocked_by"] = OptionalText(host.reset_blocked_by);
  out["reset_units_stopped"] = host.reset_units_stopped;
  out["reset_units_started"] = host.reset_units_started;
  out["nvidia_smi_error"] = OptionalText(host.nvidia_smi_error);
  out["readiness"] = ReadinessJson(host);
  out["notes"] = HostNotes(host);
  out["findings"] = FindingsJson(host);
  Json timings = Json::array();
  for (const StepTiming& timing : host.timings) {
    timings.push_back(Json{{"step", timing.step}, {"duration_ms", timing.duration.count()}});
  }
  out["timings"] = std::move(timings);
  return out;
}

// null for a run over whole hosts.
Json ScopeJson(const Scope& scope) {
  if (scope.empty()) return Json(nullptr);
  Json out;
  out["gpus"] = scope.gpus ? Json(*scope.gpus) : Json(nullptr);
  out["cgroup"] = OptionalText(scope.cgroup);
  out["slurm_job"] = OptionalText(scope.slurm_job);
  out["source"] = scope.source;
  out["spare_pods"] = scope.spare_pods;
  out["description"] = DescribeScope(scope);
  return out;
}

Json SummaryJson(const RunReport& report, const ReportFold& fold) {
  Json out;
  out["total"] = fold.hosts() + report.not_started.size() + report.no_report.size();
  out["clean"] = fold.Count(HostStatus::kClean);
  out["dirty"] = fold.Count(HostStatus::kDirty);
  out["unreachable"] = fold.Count(HostStatus::kUnreachable);
  out["failed"] = fold.Count(HostStatus::kFailed);
  out["not_ready"] = fold.Count(HostStatus::kNotReady);
  out["not_started"] = report.not_started.size();
  out["no_report"] = report.no_report.size();
  out["changed"] = fold.changed();
  return out;
}

Json DocumentJson(const RunReport& report, const ReportFold& fold) {
  Json doc;
  doc["schema_version"] = kReportSchemaVersion;
  doc["tool"] = Json{{"name", "fleetreap"}, {"version", report.tool_version}};
  doc["run_id"] = OptionalText(report.run_id);
  doc["start_time"] = FormatUtcTimestamp(report.start_time);
  doc["duration_ms"] = report.duration.count();
  doc["playbook"] = report.playbook;
  doc["dry_run"] = report.dry_run;
  doc["interrupted"] = report.interrupted;
  doc["stopped"] = OptionalText(report.stopped);
  doc["host_key_policy"] = OptionalText(report.host_key_policy);
  doc["scope"] = ScopeJson(report.scope);
  doc["exit_code"] = ExitCodeFor(report, fold);
  doc["summary"] = SummaryJson(report, fold);
  doc["hosts"] = Json::array();
  doc["not_started"] = report.not_started;
  Json missing = Json::array();
  for (const MissingReport& host : report.no_report) {
    missing.push_back(Json{{"name", host.name}, {"why", host.why}});
  }
  doc["no_report"] = std::move(missing);
  return doc;
}

// Invalid UTF-8 from a remote command line is replaced (U+FFFD), never thrown on.
std::string Dump(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// "text" with "prefix" before each of its lines. A dumped string value
// holds no raw '\n', so the lines are the document's own.
std::string Indented(const std::string& text, const std::string& prefix) {
  std::string out = prefix;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += prefix;
  }
  return out;
}

}  // namespace

std::string RenderHostJsonPiece(const HostReport& host, bool dry_run) {
  return Indented(Dump(HostJson(host, dry_run), 2), "    ");
}

void RenderJsonPieces(const RunReport& header, const ReportFold& fold, const HostJsonSource& hosts,
                      const JsonPieceSink& emit) {
  // The document around an empty "hosts", split where the hosts go: the
  // top-level key is the only one at two spaces' indent after a newline.
  const std::string frame = Dump(DocumentJson(header, fold), 2) + "\n";
  const std::string key = "\n  \"hosts\": ";
  const size_t at = frame.find(key) + key.size();
  emit(frame.substr(0, at));
  // One host held back: the last one closes the array.
  bool any = false;
  std::string held;
  hosts([&](const std::string& host) {
    if (any) {
      emit(held + ",\n");
    } else {
      emit("[\n");
    }
    held = host;
    any = true;
  });
  if (!any) {
    emit(frame.substr(at));
    return;
  }
  emit(held + "\n  ]");
  emit(frame.substr(at + 2));  // after the empty array's "[]"
}

void RenderJsonPieces(const RunReport& report, const JsonPieceSink& emit) {
  RenderJsonPieces(
      report, ReportFold::Of(report),
      [&report](const JsonPieceSink& host) {
        for (const HostReport& each : report.hosts) host(RenderHostJsonPiece(each, report.dry_run));
      },
      emit);
}

std::string RenderJson(const RunReport& report) {
  std::string out;
  RenderJsonPieces(report, [&out](const std::string& piece) { out += piece; });
  return out;
}

std::string RenderJsonLine(const RunReport& report) {
  Json doc = DocumentJson(report, ReportFold::Of(report));
  Json hosts = Json::array();
  for (const HostReport& host : report.hosts) hosts.push_back(HostJson(host, report.dry_run));
  doc["hosts"] = std::move(hosts);
  return Dump(doc, -1);
}

std::string RenderHostJsonLine(const HostReport& host, bool dry_run) {
  return Dump(HostJson(host, dry_run), -1);
}

}  // namespace fleetreap
