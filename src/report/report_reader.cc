#include "fleetreap/report/report_reader.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>

#include "fleetreap/base/time_format.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/report_json.h"
#include "json_field_reader.h"

namespace fleetreap {
namespace {

using Json = FieldReader::Json;

std::string Item(const std::string& where, const char* key, size_t index) {
  return FieldReader::Join(where, key) + "[" + std::to_string(index) + "]";
}

void ReadGpus(FieldReader& r, const Json& host, const std::string& where, const char* key,
              std::vector<GpuReading>* gpus) {
  const Json* array = r.ArrayOf(host, where, key, false, FieldReader::IsObject, "an object");
  if (array == nullptr) return;
  for (size_t i = 0; i < array->size() && r.ok(); ++i) {
    const Json& o = (*array)[i];
    const std::string at = Item(where, key, i);
    GpuReading gpu;
    r.Integer(o, at, "index", &gpu.index, true);
    r.Text(o, at, "uuid", &gpu.uuid);
    r.Text(o, at, "name", &gpu.name);
    r.Text(o, at, "bus_id", &gpu.bus_id);
    r.Mib(o, at, "memory_used_mib", &gpu.used_mib);
    r.Mib(o, at, "memory_total_mib", &gpu.total_mib);
    r.Named(o, at, "state", GpuState::kClean, GpuState::kOutOfScope, GpuStateName, &gpu.state,
            true);
    r.Text(o, at, "detail", &gpu.detail);
    r.Text(o, at, "recovery_action", &gpu.recovery_action);
    gpus->push_back(std::move(gpu));
  }
}

void ReadHolder(FieldReader& r, const Json& o, const std::string& at, Holder* holder) {
  r.Integer(o, at, "pid", &holder->pid, true);
  r.Unsigned(o, at, "start_time", &holder->start_time);
  r.Integer(o, at, "ppid", &holder->ppid);
  r.Text(o, at, "user", &holder->user);
  std::string state(1, holder->state);
  r.Text(o, at, "state", &state);
  if (state.size() != 1) r.Fail(at + ".state", "expected one character, got \"" + state + "\"");
  holder->state = state.empty() ? '?' : state[0];
  r.Text(o, at, "name", &holder->comm);
  r.Text(o, at, "exe", &holder->exe);
  r.Text(o, at, "cmdline", &holder->cmdline);
  r.IntList(o, at, "gpus", &holder->gpus);
  r.TextList(o, at, "devices", &holder->devices);
  r.Named(o, at, "fate", HolderFate::kObserved, HolderFate::kOutOfScope, HolderFateName,
          &holder->fate, true);
  r.Text(o, at, "protected_by", &holder->protected_by);
  r.Text(o, at, "named_like", &holder->named_like);
  r.Text(o, at, "out_of_scope", &holder->out_of_scope);
  r.Text(o, at, "cgroup", &holder->owner.cgroup);
  if (const Json* owner = r.Typed(o, at, "owner", false, FieldReader::IsObject, "an object")) {
    const std::string in = at + ".owner";
    ProcessOwner& out = holder->owner;
    r.Text(*owner, in, "unit", &out.unit);
    r.Text(*owner, in, "unit_restart", &out.unit_restart);
    r.Text(*owner, in, "container_runtime", &out.container_runtime);
    r.Text(*owner, in, "container_id", &out.container_id);
    r.Text(*owner, in, "pod_uid", &out.pod_uid);
    r.Text(*owner, in, "slurm_job", &out.slurm_job);
    r.Text(*owner, in, "slurm_step", &out.slurm_step);
  }
  r.Integer(o, at, "round", &holder->round);
}

void ReadReadiness(FieldReader& r, const Json& o, const std::string& at, HostReport* host) {
  const Json* readiness = r.Typed(o, at, "readiness", false, FieldReader::IsObject, "an object");
  if (readiness == nullptr) return;
  host->readiness_checked = true;
  const std::string in = at + ".readiness";
  const Json* findings =
      r.ArrayOf(*readiness, in, "findings", false, FieldReader::IsObject, "an object");
  for (size_t i = 0; findings != nullptr && i < findings->size() && r.ok(); ++i) {
    const Json& item = (*findings)[i];
    const std::string where = Item(in, "findings", i);
    ReadinessFinding finding;
    r.Text(item, where, "check", &finding.check, true);
    r.Text(item, where, "reason", &finding.reason, true);
    r.Integer(item, where, "gpu", &finding.gpu);
    r.Text(item, where, "bus_id", &finding.bus_id);
    r.Named(item, where, "severity", FindingSeverity::kBlock, FindingSeverity::kWarn,
            FindingSeverityName, &finding.severity, true);
    r.Text(item, where, "detail", &finding.detail);
    r.Text(item, where, "next_step", &finding.next_step);
    host->readiness.push_back(std::move(finding));
  }
}

// The findings; the one-line reason and the notes the writer took from
// them are taken out of error_message and notes again, so that a report
// read back says each once.
void ReadFindings(FieldReader& r, const Json& o, const std::string& at, HostReport* host) {
  const Json* array = r.ArrayOf(o, at, "findings", false, FieldReader::IsObject, "an object");
  for (size_t i = 0; array != nullptr && i < array->size() && r.ok(); ++i) {
    const Json& item = (*array)[i];
    const std::string where = Item(at, "findings", i);
    HostFinding finding;
    r.Text(item, where, "kind", &finding.kind, true);
    r.IntList(item, where, "pids", &finding.pids);
    r.TextList(item, where, "names", &finding.names);
    r.IntList(item, where, "gpus", &finding.gpus);
    r.TextList(item, where, "units", &finding.units);
    r.Integer(item, where, "mib", &finding.mib);
    r.Integer(item, where, "count", &finding.count);
    r.Text(item, where, "detail", &finding.detail);
    if (const Json* processes =
            r.ArrayOf(item, where, "processes", false, FieldReader::IsObject, "an object")) {
      for (size_t j = 0; j < processes->size() && r.ok(); ++j) {
        Holder process;
        ReadHolder(r, (*processes)[j], Item(where, "processes", j), &process);
        finding.processes.push_back(std::move(process));
      }
    }
    r.Text(item, where, "cause", &finding.cause);
    r.Text(item, where, "restart", &finding.restart);
    r.Text(item, where, "restart_sec", &finding.restart_sec);
    r.Text(item, where, "kill_mode", &finding.kill_mode);
    r.Bool(item, where, "reason", &finding.reason);
    r.Bool(item, where, "note", &finding.note);
    const std::string text = HostFindingText(finding);
    if (finding.reason && host->error_message == text) host->error_message.clear();
    if (finding.note) {
      auto said = std::find(host->notes.begin(), host->notes.end(), text);
      if (said != host->notes.end()) host->notes.erase(said);
    }
    host->findings.push_back(std::move(finding));
  }
}

void ReadHost(FieldReader& r, const Json& o, const std::string& at, HostReport* host) {
  r.Text(o, at, "name", &host->name, true);
  r.Text(o, at, "address", &host->address);
  r.Integer(o, at, "port", &host->port);
  r.Named(o, at, "status", HostStatus::kClean, HostStatus::kNotReady, HostStatusName, &host->status,
          true);
  r.Named(o, at, "error_kind", ErrorKind::kNone, ErrorKind::kInternal, ErrorKindName,
          &host->error_kind);
  r.Text(o, at, "error_message", &host->error_message);
  r.Text(o, at, "host_key_fingerprint", &host->host_key_fingerprint);
  r.Text(o, at, "host_key_type", &host->host_key_type);
  r.Text(o, at, "host_key_accepted_into", &host->host_key_accepted_into);
  r.Integer(o, at, "attempts", &host->attempts);
  r.Millis(o, at, "duration_ms", &host->duration);
  ReadGpus(r, o, at, "gpus_before", &host->gpus_before);
  ReadGpus(r, o, at, "gpus_after", &host->gpus_after);
  if (const Json* holders =
          r.ArrayOf(o, at, "holders", false, FieldReader::IsObject, "an object")) {
    for (size_t i = 0; i < holders->size() && r.ok(); ++i) {
      Holder holder;
      ReadHolder(r, (*holders)[i], Item(at, "holders", i), &holder);
      host->holders.push_back(std::move(holder));
    }
  }
  r.TextList(o, at, "units_stopped", &host->units_stopped);
  r.TextList(o, at, "units_would_stop", &host->units_would_stop);
  r.TextList(o, at, "units_skipped", &host->units_skipped);
  r.TextList(o, at, "shm_removed", &host->shm_removed);
  r.TextList(o, at, "shm_would_remove", &host->shm_would_remove);
  r.TextList(o, at, "shm_kept", &host->shm_kept);
  r.TextList(o, at, "notes", &host->notes);
  r.Integer(o, at, "term_sent", &host->term_sent);
  r.Integer(o, at, "kill_sent", &host->kill_sent);
  r.Integer(o, at, "pidfd_sent", &host->pidfd_sent);
  r.Integer(o, at, "rounds", &host->rounds);
  r.Text(o, at, "respawning_parent", &host->respawning_parent);
  r.IntList(o, at, "gpus_reset", &host->gpus_reset);
  r.Text(o, at, "reset_blocked_by", &host->reset_blocked_by);
  r.TextList(o, at, "reset_units_stopped", &host->reset_units_stopped);
  r.TextList(o, at, "reset_units_started", &host->reset_units_started);
  r.Text(o, at, "nvidia_smi_error", &host->nvidia_smi_error);
  ReadReadiness(r, o, at, host);
  ReadFindings(r, o, at, host);
  if (const Json* timings =
          r.ArrayOf(o, at, "timings", false, FieldReader::IsObject, "an object")) {
    for (size_t i = 0; i < timings->size() && r.ok(); ++i) {
      StepTiming timing;
      const std::string item = Item(at, "timings", i);
      r.Text((*timings)[i], item, "step", &timing.step, true);
      r.Millis((*timings)[i], item, "duration_ms", &timing.duration);
      host->timings.push_back(std::move(timing));
    }
  }
}

void ReadScope(FieldReader& r, const Json& doc, Scope* scope) {
  const Json* o = r.Typed(doc, "", "scope", false, FieldReader::IsObject, "an object");
  if (o == nullptr) return;
  if (const Json* list =
          r.ArrayOf(*o, "scope", "gpus", false, FieldReader::IsInteger, "an integer")) {
    scope->gpus = list->get<std::vector<int>>();
  }
  r.Text(*o, "scope", "cgroup", &scope->cgroup);
  r.Text(*o, "scope", "slurm_job", &scope->slurm_job);
  r.Text(*o, "scope", "source", &scope->source);
  r.Bool(*o, "scope", "spare_pods", &scope->spare_pods);
}

}  // namespace

bool ParseUtcTimestamp(const std::string& text, std::chrono::system_clock::time_point* time) {
  std::tm utc{};
  int millis = 0;
  int consumed = 0;
  if (text.size() != 24 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &utc.tm_year, &utc.tm_mon,
                  &utc.tm_mday, &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis, &consumed) != 7 ||
      consumed != 24) {
    return false;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  const std::time_t seconds = timegm(&utc);
  *time = std::chrono::system_clock::time_point(std::chrono::seconds(seconds)) +
          std::chrono::milliseconds(millis);
  return FormatUtcTimestamp(*time) == text;  // rejects 2026-02-30 and friends
}

namespace {

Status ParseJson(const std::string& text, const std::string& source, Json* doc) {
  try {
    *doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return Status::Error(ErrorKind::kInvalidInput, source + ": not JSON (parse error at byte " +
                                                       std::to_string(e.byte) + ")");
  } catch (const Json::exception& e) {
    return Status::Error(ErrorKind::kInvalidInput, source + ": not JSON (" + e.what() + ")");
  }
  return Status::Ok();
}

}  // namespace

Status ReadHostJson(const std::string& text, const std::string& where, HostReport* host) {
  Json doc;
  Status status = ParseJson(text, where, &doc);
  if (!status.ok()) return status;
  FieldReader r(where);
  if (!doc.is_object()) {
    r.Fail("host", std::string("expected an object, got ") + doc.type_name());
    return r.status();
  }
  *host = HostReport();
  ReadHost(r, doc, "host", host);
  return r.status();
}

Status ReadReportJson(const std::string& text, const std::string& source, RunReport* report) {
  Json doc;
  Status parsed = ParseJson(text, source, &doc);
  if (!parsed.ok()) return parsed;
  FieldReader r(source);
  if (!doc.is_object()) {
    r.Fail("", std::string("expected a report object, got ") + doc.type_name());
    return r.status();
  }
  int version = 0;
  r.Integer(doc, "", "schema_version", &version, true);
  // Version 1 lacks only the not_ready status and the readiness field.
  if (r.ok() && (version < 1 || version > kReportSchemaVersion)) {
    r.Fail("", "schema_version " + std::to_string(version) +
                   " is not supported (this fleetreap reads 1 to " +
                   std::to_string(kReportSchemaVersion) + ")");
  }
  *report = RunReport();
  if (const Json* tool = r.Typed(doc, "", "tool", false, FieldReader::IsObject, "an object")) {
    r.Text(*tool, "tool", "version", &report->tool_version);
  }
  r.Text(doc, "", "run_id", &report->run_id);
  std::string start;
  r.Text(doc, "", "start_time", &start, true);
  if (r.ok() && !ParseUtcTimestamp(start, &report->start_time)) {
    r.Fail("start_time", "expected YYYY-MM-DDTHH:MM:SS.mmmZ, got \"" + start + "\"");
  }
  r.Millis(doc, "", "duration_ms", &report->duration);
  r.Text(doc, "", "playbook", &report->playbook, true);
  r.Bool(doc, "", "dry_run", &report->dry_run, true);
  r.Bool(doc, "", "interrupted", &report->interrupted);
  r.Text(doc, "", "stopped", &report->stopped);
  r.Text(doc, "", "host_key_policy", &report->host_key_policy);
  ReadScope(r, doc, &report->scope);
  if (const Json* hosts = r.ArrayOf(doc, "", "hosts", true, FieldReader::IsObject, "an object")) {
    for (size_t i = 0; i < hosts->size() && r.ok(); ++i) {
      HostReport host;
      ReadHost(r, (*hosts)[i], Item("", "hosts", i), &host);
      report->hosts.push_back(std::move(host));
    }
  }
  r.TextList(doc, "", "not_started", &report->not_started);
  if (const Json* missing =
          r.ArrayOf(doc, "", "no_report", false, FieldReader::IsObject, "an object")) {
    for (size_t i = 0; i < missing->size() && r.ok(); ++i) {
      MissingReport host;
      const std::string at = Item("", "no_report", i);
      r.Text((*missing)[i], at, "name", &host.name, true);
      r.Text((*missing)[i], at, "why", &host.why);
      report->no_report.push_back(std::move(host));
    }
  }
  return r.status();
}

}  // namespace fleetreap
