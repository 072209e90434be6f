#include "fleetreap/report/report_html.h"

#include <algorithm>
#include <map>
#include <vector>

#include "fleetreap/base/host_name_fold.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/model/scope.h"
#include "fleetreap/report/host_findings.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/html_escape.h"
#include "fleetreap/report/html_fold.h"
#include "fleetreap/report/report_table.h"
#include "report_html_parts.h"

namespace fleetreap {
namespace {

// Nothing may be fetched: no default source, only the inline style and script.
constexpr char kHead[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

constexpr char kStyle[] = R"(<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:20px 0 6px}h3{font-size:13px;margin:10px 0 4px}
.meta{color:#555}.ready{color:#17702f}.notready{color:#b3261e}.dry{color:#0b6b8a}
table{border-collapse:collapse}td,th{padding:1px 6px;text-align:left;vertical-align:top}
.outcomes td,.holders td,.holders th,.gpus td,.gpus th{border-bottom:1px solid #eee}
.k{white-space:nowrap;font-weight:600}
.o-clean .k{color:#17702f}.o-cleaned .k{color:#2e7d32}.o-would_clean .k{color:#0b6b8a}
.o-dirty .k{color:#9a6700}.o-failed .k,.o-unreachable .k{color:#b3261e}.o-not_started .k,.o-no_report .k{color:#8e24aa}
.funnel td{padding:2px 6px}.bar{display:inline-block;height:12px;background:#5c7cfa;vertical-align:middle}
.grid th{font-weight:normal;white-space:nowrap;max-width:28em;overflow:hidden;text-overflow:ellipsis}
.grid td.g{white-space:nowrap;padding:1px 4px}.grid td.grp{color:#555;white-space:nowrap}.grid tr:hover{background:#f3f3f3}
.grid i{display:inline-block;width:9px;height:11px;margin-right:1px;background:#ccc}
.s-clean{background:#4caf50!important}.s-busy{background:#fb8c00!important}
.s-protected_only{background:#4caf50!important;box-shadow:inset 0 0 0 2px #1b5e20}.s-ghost{background:#8e24aa!important}
.s-lost{background:#d32f2f!important}.s-missing{background:#37474f!important}.s-needs_recovery{background:#f06292!important}.s-unknown{background:#9e9e9e!important}
.s-out_of_scope{background:#e0e0e0!important}.none{color:#888}
.legend i{display:inline-block;width:9px;height:11px;margin:0 3px 0 10px;vertical-align:middle}
.tl{display:inline-block;height:12px;background:#eee;vertical-align:middle;white-space:nowrap;overflow:hidden}
.tl span{display:inline-block;height:12px}.st-connect{background:#9e9e9e}.st-inspect{background:#42a5f5}
.st-stop_units{background:#7e57c2}.st-term{background:#ffe082}.st-kill{background:#3e2723}
.st-rescan{background:#26a69a}.st-clean_shm{background:#8d6e63}.st-verify{background:#66bb6a}
.st-reset{background:#ec407a}.st-x,.st-other{background:#bdbdbd}
details.host{border-top:1px solid #eee;padding:2px 0}details.host summary{cursor:pointer}
dl{display:grid;grid-template-columns:max-content auto;gap:0 10px;margin:4px 0 4px 16px}dt{color:#555}dd{margin:0}
.cmd{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
#q{width:24em}
</style>
</head>
<body>
)";

constexpr char kScript[] = R"(<script>
(function () {
  var q = document.getElementById('q');
  var shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('[data-q]'));
  var hosts = document.querySelectorAll('details.host');
  function apply() {
    var t = q.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (r) {
      r.hidden = t !== '' && r.getAttribute('data-q').toLowerCase().indexOf(t) < 0;
    });
    Array.prototype.forEach.call(hosts, function (h) { if (!h.hidden) n++; });
    shown.textContent = 'showing ' + n + ' of ' + hosts.length + ' hosts';
  }
  function openHash() {
    var e = location.hash && document.getElementById(location.hash.slice(1));
    if (e && e.tagName === 'DETAILS') e.open = true;
  }
  q.addEventListener('input', apply);
  window.addEventListener('hashchange', openHash);
  apply();
  openHash();
})();
</script>
)";

std::string E(const std::string& text) { return HtmlEscape(text); }

const OutcomeKind kKinds[] = {OutcomeKind::kDirty,       OutcomeKind::kFailed,
                              OutcomeKind::kUnreachable, OutcomeKind::kNoReport,
                              OutcomeKind::kNotStarted,  OutcomeKind::kWouldClean,
                              OutcomeKind::kCleaned,     OutcomeKind::kClean};

std::string KindClass(OutcomeKind kind) { return "o-" + html::CssWord(OutcomeKindLabel(kind)); }

void AppendHeader(const RunReport& report, const ReportFold& fold, std::string* out) {
  const std::string verdict = RenderVerdict(report, fold, TableStyle{});
  const char* tone = report.dry_run ? "dry" : ExitCodeFor(report, fold) == 0 ? "ready" : "notready";
  *out += "<title>fleetreap: " + E(verdict) + "</title>\n";
  *out += kStyle;
  *out += "<h1 id=\"verdict\" class=\"" + std::string(tone) + "\">" + E(verdict) + "</h1>\n";
  std::string meta = "started " + FormatUtcTimestamp(report.start_time) + ", playbook " +
                     report.playbook + ", fleetreap " + report.tool_version;
  if (!report.run_id.empty()) meta += ", run " + report.run_id;
  if (!report.scope.empty()) meta += ", scope: " + DescribeScope(report.scope);
  if (!report.host_key_policy.empty()) meta += ", host keys: " + report.host_key_policy;
  *out += "<p class=\"meta\">" + E(meta) + "</p>\n";
}

void AppendOutcomes(const RunReport& report, const ReportFold& fold, std::string* out) {
  std::map<OutcomeKind, int> counts;
  for (OutcomeKind kind : kKinds) counts[kind] = fold.Count(kind);
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    ++counts[host.started_never ? OutcomeKind::kNotStarted : OutcomeKind::kNoReport];
  }
  *out += "<h2>Outcomes</h2>\n<p id=\"counts\">";
  bool first = true;
  for (OutcomeKind kind : kKinds) {
    if (counts[kind] == 0) continue;
    *out += std::string(first ? "" : ", ") + "<span class=\"" + KindClass(kind) +
            "\"><span class=\"k\">" + std::to_string(counts[kind]) + " " + OutcomeKindLabel(kind) +
            "</span></span>";
    first = false;
  }
  *out += "</p>\n<table class=\"outcomes\">\n";
  for (const OutcomeGroup& group : fold.Groups(report)) {
    *out += "<tr class=\"" + KindClass(group.kind) + "\"><td>" + E(FoldHostNames(group.names)) +
            "</td><td class=\"k\">" + OutcomeKindLabel(group.kind) + "</td><td>" + E(group.detail) +
            "</td></tr>\n";
  }
  *out += "</table>\n";
}

void AppendFunnel(const HtmlFold& fold, std::string* out) {
  const auto& [found, terms, kills, left, exited, gone, spared] = fold.funnel();
  const std::pair<const char*, int> steps[] = {
      {"found", found}, {"sent TERM", terms}, {"sent KILL", kills}, {"left", left}};
  *out += "<h2>Holders</h2>\n<table class=\"funnel\" id=\"funnel\">\n";
  for (const auto& [label, count] : steps) {
    const int width = found > 0 ? count * 400 / found : 0;
    *out += "<tr><th>" + std::string(label) + "</th><td>" + std::to_string(count) +
            "</td><td><span class=\"bar\" style=\"width:" + std::to_string(width) +
            "px\"></span></td></tr>\n";
  }
  *out += "</table>\n<p class=\"meta\">" + std::to_string(exited) + " exited after a signal, " +
          std::to_string(gone) + " went on their own, " + std::to_string(spared) +
          " protected or out of scope (never signalled, not counted)" +
          (fold.dry_run() ? "; a dry run signals nothing" : "") + ".</p>\n";
}

std::string Mib(const std::optional<int64_t>& mib) {
  return mib ? std::to_string(*mib) + " MiB" : "?";
}

void AppendList(const char* label, const std::vector<std::string>& items, std::string* out) {
  if (items.empty()) return;
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  *out += "<dt>" + std::string(label) + "</dt><dd class=\"cmd\">" + E(joined) + "</dd>";
}

void AppendField(const char* label, const std::string& text, std::string* out) {
  if (!text.empty()) *out += "<dt>" + std::string(label) + "</dt><dd>" + E(text) + "</dd>";
}

void AppendGpus(const HostReport& host, std::string* out) {
  if (host.gpus_before.empty() && host.gpus_after.empty()) return;
  *out += "<table class=\"gpus\"><tr><th>GPU</th><th>before</th><th>after</th><th></th></tr>";
  const size_t n = std::max(host.gpus_before.size(), host.gpus_after.size());
  for (size_t i = 0; i < n; ++i) {
    const GpuReading* before = i < host.gpus_before.size() ? &host.gpus_before[i] : nullptr;
    const GpuReading* after = i < host.gpus_after.size() ? &host.gpus_after[i] : nullptr;
    const GpuReading& gpu = after ? *after : *before;
    auto cell = [](const GpuReading* g) {
      return g ? std::string(GpuStateName(g->state)) + ", " + Mib(g->used_mib) : std::string();
    };
    std::string note = gpu.detail;
    if (!gpu.recovery_action.empty() && gpu.recovery_action != "None") {
      note += (note.empty() ? "" : "; ") + std::string("recovery: ") + gpu.recovery_action;
    }
    const std::string label = gpu.index >= 0 ? std::to_string(gpu.index) : gpu.bus_id;
    *out += "<tr><td>" + E(label) + "</td><td>" + E(cell(before)) + "</td><td>" + E(cell(after)) +
            "</td><td>" + E(note) + "</td></tr>";
  }
  *out += "</table>";
}

void AppendHolders(const HostReport& host, std::string* out) {
  if (host.holders.empty()) return;
  *out +=
      "<table class=\"holders\"><tr><th>PID</th><th>name</th><th>user</th><th>GPUs</th>"
      "<th>fate</th><th>owner</th><th>command line</th></tr>";
  for (const Holder& holder : host.holders) {
    std::string gpus;
    for (int gpu : holder.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(gpu);
    std::string fate = HolderFateName(holder.fate);
    if (!holder.protected_by.empty()) fate += " (" + holder.protected_by + ")";
    if (!holder.out_of_scope.empty()) fate += " (" + holder.out_of_scope + ")";
    *out += "<tr><td>" + std::to_string(holder.pid) + "</td><td>" + E(holder.comm) + "</td><td>" +
            E(holder.user) + "</td><td>" + gpus + "</td><td>" + E(fate) + "</td><td>" +
            E(DescribeOwner(holder.owner)) + "</td><td class=\"cmd\">" + E(holder.cmdline) +
            "</td></tr>";
  }
  *out += "</table>";
}

// The host's <details> without its place: its class, '\n', and what
// follows "id=\"hN" (RenderHostHtmlPiece).
void AppendHost(const HostReport& host, bool dry_run, std::string* out) {
  const HostOutcome outcome = OutcomeOf(host, dry_run);
  const std::string label = OutcomeKindLabel(outcome.kind);
  *out += KindClass(outcome.kind) + "\n\" data-q=\"" + E(host.name + " " + label) +
          "\"><summary><b>" + E(host.name) + "</b> <span class=\"k\">" + label + "</span> " +
          E(outcome.detail) + "</summary><dl>";
  AppendField("reason", HostReason(host, dry_run), out);
  AppendField("address", host.address + ":" + std::to_string(host.port), out);
  AppendList("groups", host.groups, out);
  AppendField("duration",
              FormatSeconds(host.duration) + ", " + std::to_string(host.attempts) +
                  " connection attempt(s), " + std::to_string(host.rounds) + " scan round(s)",
              out);
  AppendField("error", HostMessage(host), out);
  AppendField("nvidia-smi", host.nvidia_smi_error, out);
  AppendField("signals",
              "TERM " + std::to_string(host.term_sent) + ", KILL " + std::to_string(host.kill_sent),
              out);
  AppendField("respawned by", host.respawning_parent, out);
  AppendField("cause", HostCauseText(host), out);
  AppendList("units stopped", host.units_stopped, out);
  AppendList("units to stop", host.units_would_stop, out);
  AppendList("units skipped", host.units_skipped, out);
  AppendList("shm removed", host.shm_removed, out);
  AppendList("shm to remove", host.shm_would_remove, out);
  AppendList("shm kept", host.shm_kept, out);
  AppendList("notes", HostNotes(host), out);
  std::vector<std::string> reset;
  for (int gpu : host.gpus_reset) reset.push_back(std::to_string(gpu));
  AppendList("GPUs reset", reset, out);
  AppendField("reset blocked by", host.reset_blocked_by, out);
  *out += "<dt>steps</dt><dd>";
  html::AppendTimeline(host, out);
  *out += "</dd></dl>";
  AppendGpus(host, out);
  AppendHolders(host, out);
  *out += "</details>\n";
}

void AppendMissing(const RunReport& report, std::string* out) {
  std::vector<std::string> whys;  // in order of first appearance
  std::map<std::string, std::vector<std::string>> missing;
  for (const HostWithoutResult& host : HostsWithoutResult(report)) {
    if (!missing.count(host.why)) whys.push_back(host.why);
    missing[host.why].push_back(host.name);
  }
  if (whys.empty()) return;
  *out += "<h3>Without a result</h3>\n<ul id=\"missing\">";
  for (const std::string& why : whys) {
    *out += "<li>" + E(FoldHostNames(missing[why])) + ": " + E(why) + "</li>";
  }
  *out += "</ul>\n";
}

}  // namespace

std::string RenderHostHtmlPiece(const HostReport& host, bool dry_run) {
  std::string out;
  AppendHost(host, dry_run, &out);
  return out;
}

void RenderHtmlPieces(const RunReport& header, const ReportFold& fold, const HtmlFold& html,
                      const HostHtmlSource& hosts, const HtmlPieceSink& emit) {
  std::string out = kHead;
  AppendHeader(header, fold, &out);
  AppendOutcomes(header, fold, &out);
  AppendFunnel(html, &out);
  html::AppendGrid(html, &out);
  html::AppendTimelines(html, &out);
  out +=
      "<h2>Hosts</h2>\n<p><input id=\"q\" type=\"search\" placeholder=\"filter: name or "
      "outcome\" aria-label=\"filter hosts\"> <span id=\"shown\"></span></p>\n";
  emit(out);
  size_t place = 0;
  hosts([&emit, &place](const std::string& piece) {
    const size_t end = piece.find('\n');
    emit("<details class=\"host " + piece.substr(0, end) + "\" id=\"h" + std::to_string(place++) +
         piece.substr(end + 1));
  });
  out.clear();
  AppendMissing(header, &out);
  out += kScript;
  out += "</body>\n</html>\n";
  emit(out);
}

std::string RenderHtml(const RunReport& report) {
  std::string out;
  RenderHtmlPieces(
      report, ReportFold::Of(report), FoldOfHosts<HtmlFold>(report),
      [&report](const HtmlPieceSink& host) {
        for (const HostReport& each : report.hosts) host(RenderHostHtmlPiece(each, report.dry_run));
      },
      [&out](const std::string& piece) { out += piece; });
  return out;
}

}  // namespace fleetreap
